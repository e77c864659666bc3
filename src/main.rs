//! The `stave` binary: hands off to `stave::cli`.

/// mimalloc instead of glibc's malloc: the node makes many small, short-lived
/// allocations per tx (decoding, overlays, tree nodes, RocksDB batches), and
/// glibc's free-list upkeep was a fifth of the block path's CPU samples
/// (BENCHMARKS.md, "One validator's cost per tx").
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    stave::cli::main()
}
