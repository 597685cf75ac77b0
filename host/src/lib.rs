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
    podium_client::main_with(with_own_commands)
}

/// The client's parser with the commands this binary runs itself (above) added, for its help
/// (`podium --help`, `podium plugin --help`) to list them where they always were.
fn with_own_commands(cli: clap::Command) -> clap::Command {
    let serve = clap::Command::new("serve")
        .about("Serve the HTTP API (`podium serve --help` lists its options)")
        .arg(
            // Its options are `config::parse`'s: taken whole here, and not shown.
            clap::Arg::new("args")
                .value_name("ARGS")
                .num_args(1..)
                .value_parser(clap::value_parser!(String))
                .action(clap::ArgAction::Append)
                .hide(true)
                .trailing_var_arg(true)
                .allow_hyphen_values(true),
        );
    let check = clap::Command::new("check")
        .about(
            "Check a component (`.wasm`) offline, as an upload would: print what it is, or every \
             reason an upload would refuse it (exit code 1). Needs no server",
        )
        .arg(
            clap::Arg::new("file")
                .value_name("FILE")
                .required(true)
                .value_parser(clap::value_parser!(std::path::PathBuf)),
        );
    let cli = mut_in_place(cli, "plugin", |plugin| insert_before(plugin, check, "new"));
    insert_before(cli, serve, "login")
}

/// `parent` with `command` added just before its subcommand `before`: in the help (its display
/// order) and in the lists of clap's errors (the order subcommands were added in).
fn insert_before(parent: clap::Command, command: clap::Command, before: &str) -> clap::Command {
    let order = parent
        .find_subcommand(before)
        .map(clap::Command::get_display_order)
        .unwrap_or_else(|| panic!("no subcommand `{before}`"));
    let after: Vec<String> = parent
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .skip_while(|name| name != before)
        .collect();
    let mut parent = parent.subcommand(command.display_order(order));
    // `mut_subcommand` moves a subcommand to the end: each of `after` in turn, behind `command`.
    for name in after {
        parent = parent.mut_subcommand(name, |c| {
            let order = c.get_display_order();
            c.display_order(order + 1)
        });
    }
    parent
}

/// `parent.mut_subcommand(name, f)`, which moves the subcommand to the end of the order clap's
/// errors list subcommands in, with the subcommand left where it was.
fn mut_in_place(
    parent: clap::Command,
    name: &str,
    f: impl FnOnce(clap::Command) -> clap::Command,
) -> clap::Command {
    let after: Vec<String> = parent
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .skip_while(|n| n != name)
        .skip(1)
        .collect();
    let mut parent = parent.mut_subcommand(name, f);
    for name in after {
        parent = parent.mut_subcommand(name, |c| c);
    }
    parent
}
