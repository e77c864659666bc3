//! The `stave` binary: hands off to `stave::cli`.

/// mimalloc instead of glibc's malloc: the node makes many small, short-lived
/// allocations per tx (decoding, overlays, tree nodes, RocksDB batches), and
/// glibc's free-list upkeep was a fifth of the block path's CPU samples
/// (BENCHMARKS.md, "One validator's cost per tx").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Whether the CPU and the OS give this build the instructions it was
/// compiled for (`.cargo/config.toml`: FMA3, which implies AVX, and
/// PCLMULQDQ). Asked of
/// CPUID itself: `is_x86_feature_detected!` answers "yes" for any feature
/// the build was compiled with, whatever the CPU.
#[cfg(all(target_arch = "x86_64", target_feature = "fma"))]
fn cpu_has_the_build_features() -> bool {
    let ecx = std::arch::x86_64::__cpuid(1).ecx;
    // PCLMULQDQ, FMA, SSE4.2, OSXSAVE (the OS saves AVX state), AVX
    [1, 12, 20, 27, 28].iter().all(|bit| ecx & (1 << bit) != 0)
}

fn main() -> std::process::ExitCode {
    // refuse clearly on a CPU without them, rather than die of SIGILL in
    // the transcoder
    #[cfg(all(target_arch = "x86_64", target_feature = "fma"))]
    if !cpu_has_the_build_features() {
        eprintln!("stave: this build needs a CPU with FMA3, AVX and PCLMULQDQ (x86-64 since 2013); rebuild without the target features of .cargo/config.toml for an older one");
        return std::process::ExitCode::FAILURE;
    }
    stave::cli::main()
}
