//! The `podium` binary: the server (`podium serve`) and a client of its API (everything else).

fn main() -> std::process::ExitCode {
    podium::main()
}
