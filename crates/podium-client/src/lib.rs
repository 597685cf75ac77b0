//! The `podium` command line's client: every command but `podium serve` (which the binary runs
//! itself) is a client of the API (`podium login`, then `podium plugin|podm|host|tenant|grant|claim|pool ...`), printing
//! tables by default and the API's JSON with `-o json`.
//!
//! The client takes its URL from `--url`/`PODIUM_URL` or the login, and its token from
//! `PODIUM_TOKEN` or the login; a token is never taken from the command line, where other users
//! of the machine could read it.
//!
//! Each area of commands is a module, as the API's are (`plugin`, `podm`, `host`, `tenant`,
//! `grant`, `claim`, `pool`, `operation`, `task`; `login` for `login`, `logout` and `whoami`;
//! `backup`; `events`): its arguments and its `run`. `watch` follows long work through the event
//! stream, `input` checks what the commands are given, `output` prints.

mod backup;
mod chassis;
mod claim;
mod client;
mod composed;
mod events;
mod firmware;
mod grant;
mod host;
mod input;
mod login;
mod names;
mod new;
mod operation;
mod output;
mod plugin;
mod podm;
mod pool;
mod task;
mod tenant;
mod watch;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use self::client::Client;
use self::names::Named;
use self::output::Format;

#[derive(Debug, Parser)]
#[command(
    name = "podium",
    version,
    about = "A bare-metal platform whose moving parts are WebAssembly components"
)]
struct Cli {
    /// The API's URL; default: the one `podium login` saved.
    #[arg(long, global = true, env = "PODIUM_URL")]
    url: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, global = true, value_enum, default_value_t = Format::Table)]
    output: Format,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Login(login::LoginCommand),
    /// Plugins: the bundled ones and uploads (admin).
    #[command(subcommand)]
    Plugin(plugin::PluginCommand),
    /// Pod managers (admin).
    #[command(subcommand)]
    Podm(podm::PodmCommand),
    /// Hosts (admin).
    #[command(subcommand)]
    Host(host::HostCommand),
    /// The chassis under a pod manager: racks, enclosures, blades (admin; a tenant: those its
    /// grant reaches).
    #[command(subcommand)]
    Chassis(chassis::ChassisCommand),
    /// Resource blocks and the nodes composed of them (admin).
    #[command(subcommand)]
    Composed(composed::ComposedCommand),
    /// Tenants and their tokens (admin).
    #[command(subcommand)]
    Tenant(tenant::TenantCommand),
    /// Grants: which tenant may claim hosts of which pod manager (admin).
    #[command(subcommand)]
    Grant(grant::GrantCommand),
    /// Claims on hosts (tenants; admins read).
    #[command(subcommand)]
    Claim(claim::ClaimCommand),
    /// IP pools and the addresses claimed from them (admin).
    #[command(subcommand)]
    Pool(pool::PoolCommand),
    /// Operations: what is queued, running, done and failed on hosts and pod managers (admin).
    #[command(subcommand)]
    Operation(operation::OperationCommand),
    /// The server's background tasks: probe, sync, bind, expiry, leasing (admin).
    #[command(subcommand)]
    Task(task::TaskCommand),
    /// Save a copy of the server's SQLite database, taken while it runs, to FILE (a new file),
    /// to restore as DATA_DIR/podium.db beside the same secret key (admin; read-only will do).
    Backup(backup::BackupArgs),
    /// Follow changes of claims, hosts and operations as they happen, one JSON object a line
    /// (a tenant sees its own); reconnects without missing one until interrupted.
    Events(events::EventsArgs),
}

/// Runs the command line; the exit code says whether it worked.
pub fn main() -> ExitCode {
    main_with(|command| command)
}

/// Runs the command line, whose parser `extend` adds to: the `podium` binary adds the commands
/// it runs itself before this parser sees them (`podium serve`, `podium plugin check FILE`), so
/// that the help lists them. The exit code says whether it worked.
pub fn main_with(extend: impl FnOnce(clap::Command) -> clap::Command) -> ExitCode {
    let mut parser = extend(Cli::command());
    let mut matches = parser.get_matches_mut();
    let result = match matches.subcommand() {
        // The binary runs `serve` only as the first argument and `plugin check` only as the
        // whole command line (`podium plugin check FILE`): after a client option, they reach
        // this parser, which refuses them.
        Some(("serve", _)) => Err(anyhow::anyhow!(
            "`serve` takes no client option (--url, --output): run `podium serve [OPTIONS]`"
        )),
        Some(("plugin", plugin)) if plugin.subcommand_name() == Some("check") => {
            // Where the login is missing or broken, that is the error, as for any plugin command.
            let url = matches.get_one::<String>("url").map(String::as_str);
            Client::from_env(url).and_then(|_| {
                Err(anyhow::anyhow!(
                    "`plugin check` runs in the podium binary, not in this client"
                ))
            })
        }
        _ => {
            let cli = Cli::from_arg_matches_mut(&mut matches)
                .unwrap_or_else(|e| e.format(&mut parser).exit());
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(anyhow::Error::from)
                .and_then(|rt| rt.block_on(run(cli.url.as_deref(), cli.output, cli.command)))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A command's output on stdout.
fn print(text: String) {
    println!("{text}");
}

/// Every id the command was given by name, replaced by the id (`names.rs`).
async fn resolve_names(url: Option<&str>, command: &mut Command) -> anyhow::Result<()> {
    let wanted = match command {
        Command::Podm(cmd) => cmd.names(),
        Command::Host(cmd) => cmd.names(),
        Command::Chassis(cmd) => cmd.names(),
        Command::Composed(cmd) => cmd.names(),
        Command::Tenant(cmd) => cmd.names(),
        Command::Grant(cmd) => cmd.names(),
        Command::Claim(cmd) => cmd.names(),
        Command::Pool(cmd) => cmd.names(),
        Command::Operation(cmd) => cmd.names(),
        Command::Events(args) => args.names(),
        Command::Login(_) | Command::Plugin(_) | Command::Task(_) | Command::Backup(_) => {
            Vec::new()
        }
    };
    let mut client = None;
    for (kind, value) in wanted {
        if names::is_id(value) {
            continue;
        }
        if client.is_none() {
            client = Some(Client::from_env(url)?);
        }
        let client = client.as_ref().expect("just set");
        // A tenant names the pod managers it was granted.
        let kind = match kind {
            Named::PodManager if client.is_tenant().await? => Named::GrantedPodManager,
            kind => kind,
        };
        *value = names::resolve(client, kind, value).await?;
    }
    Ok(())
}

async fn run(url: Option<&str>, format: Format, mut command: Command) -> anyhow::Result<()> {
    resolve_names(url, &mut command).await?;
    match command {
        Command::Login(cmd) => login::run(url, format, cmd).await,
        Command::Plugin(cmd) => plugin::run(url, format, cmd).await,
        Command::Podm(cmd) => podm::run(url, format, cmd).await,
        Command::Host(cmd) => host::run(url, format, cmd).await,
        Command::Chassis(cmd) => chassis::run(url, format, cmd).await,
        Command::Composed(cmd) => composed::run(url, format, cmd).await,
        Command::Tenant(cmd) => tenant::run(url, format, cmd).await,
        Command::Grant(cmd) => grant::run(url, format, cmd).await,
        Command::Claim(cmd) => claim::run(url, format, cmd).await,
        Command::Pool(cmd) => pool::run(url, format, cmd).await,
        Command::Operation(cmd) => operation::run(url, format, cmd).await,
        Command::Task(cmd) => task::run(url, format, cmd).await,
        Command::Backup(args) => backup::run(url, args).await,
        Command::Events(args) => events::run(url, args).await,
    }
}
