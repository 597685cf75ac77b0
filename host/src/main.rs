//! The `podium` binary: the server (`podium serve`) and a client of its API (everything else).
//! All of it lives in the library's `cli` module.

fn main() -> std::process::ExitCode {
    podium::cli::main()
}
