//! The `stave` binary: hands off to `stave::cli`.

fn main() -> std::process::ExitCode {
    stave::cli::main()
}
