//! The `podium` binary, built inside this package so that its integration tests can run it
//! (`CARGO_BIN_EXE_podium-under-test`): the same `podium::main` as `host/src/main.rs`.

fn main() -> std::process::ExitCode {
    podium::main()
}
