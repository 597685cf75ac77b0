//! The `podium` binary's library: the bundled plugins it carries and its command line. The
//! server is `podium-server`, the client `podium-client`; this crate only joins them, so a
//! plugin edit rebuilds this crate and nothing it depends on.

pub mod bundled;
mod check;
mod config;
mod serve;

use std::process::ExitCode;

/// The command line: `podium serve` runs the server (with the bundled plugins) and `podium
/// plugin check FILE` the plugin runtime offline; every other command is the client's.
pub fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "serve") {
        args.next();
        let cli = match config::parse(args.collect()) {
            Ok(cli) => cli,
            Err(e) => {
                eprintln!("error: {e:#}");
                return ExitCode::FAILURE;
            }
        };
        if cli.print_config {
            return match config::print(&cli.args) {
                Ok(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e:#}");
                    ExitCode::FAILURE
                }
            };
        }
        return match serve::serve(cli.args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let [plugin, check, file] = args.as_slice()
        && plugin == "plugin"
        && check == "check"
        && !file.to_string_lossy().starts_with('-')
    {
        return check::main(std::path::Path::new(file));
    }
    podium_client::main()
}
