//! The `podium` command line's client: every command but `podium serve` (which the binary runs
//! itself) is a client of the API (`podium login`, then `podium plugin|podm|host|tenant|grant|claim|pool ...`), printing
//! tables by default and the API's JSON with `-o json`.
//!
//! The client takes its URL from `--url`/`PODIUM_URL` or the login, and its token from
//! `PODIUM_TOKEN` or the login; a token is never taken from the command line, where other users
//! of the machine could read it.

mod client;
mod names;
mod new;
mod output;

use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};

use self::client::{Client, Login};
use self::names::Named;
use self::output::{Column, Format};
use podium_types::requests::{
    AuthParams, ClaimCreate, ClaimUpdate, ConfigDriveCreate, GrantCreate, ImageParams,
    IpClaimCreate, IpPoolCreate, IpRangeParams, MaintenanceParams, OperationLimits,
    PluginBindingParams, PodManagerCreate, PodManagerUpdate, PowerParams, TenantCreate, TlsParams,
    TokenCreate,
};
use podium_types::views::{
    ClaimView, EventView, List, MeView, OperationEventView, OperationView, TaskList,
};
use podium_types::{
    ClaimId, ClaimState, EventAction, HostState, OperationId, OperationKind, OperationStatus,
    Secret, ShownState, TenantId,
};
use reqwest::Method;

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
    /// Serve the HTTP API (`podium serve --help` lists its options).
    Serve {
        /// Handled by the binary before this parser sees it; here only for `podium --help`.
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Save the API's URL and a token (read from PODIUM_TOKEN or the first line of stdin) in
    /// the config file (mode 0600), after checking that they work.
    Login {
        /// The API's URL, e.g. http://127.0.0.1:8080.
        url: String,
    },
    /// Forget the saved login.
    Logout,
    /// Who the token belongs to.
    Whoami,
    /// Plugins: the bundled ones and uploads (admin).
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Pod managers (admin).
    #[command(subcommand)]
    Podm(PodmCommand),
    /// Hosts (admin).
    #[command(subcommand)]
    Host(HostCommand),
    /// Tenants and their tokens (admin).
    #[command(subcommand)]
    Tenant(TenantCommand),
    /// Grants: which tenant may claim hosts of which pod manager (admin).
    #[command(subcommand)]
    Grant(GrantCommand),
    /// Claims on hosts (tenants; admins read).
    #[command(subcommand)]
    Claim(ClaimCommand),
    /// IP pools and the addresses claimed from them (admin).
    #[command(subcommand)]
    Pool(PoolCommand),
    /// Operations: what is queued, running, done and failed on hosts and pod managers (admin).
    #[command(subcommand)]
    Operation(OperationCommand),
    /// The server's background tasks: probe, sync, bind, expiry, leasing (admin).
    #[command(subcommand)]
    Task(TaskCommand),
    /// Save a copy of the server's SQLite database, taken while it runs, to FILE (a new file),
    /// to restore as DATA_DIR/podium.db beside the same secret key (admin; read-only will do).
    Backup {
        /// Where to write the copy; it must not exist.
        file: std::path::PathBuf,
    },
    /// Follow changes of claims, hosts and operations as they happen, one JSON object a line
    /// (a tenant sees its own); reconnects without missing one until interrupted.
    Events {
        /// Only these kinds, comma-separated: claim, host, operation.
        #[arg(long)]
        kind: Option<String>,
        /// Only the events of this claim, of its host and of its operations.
        #[arg(long)]
        claim: Option<String>,
        /// Only the events of this host (a name or an id) and of its operations.
        #[arg(long)]
        host: Option<String>,
        /// Start after this event (its `seq`) instead of with the next change.
        #[arg(long)]
        after: Option<i64>,
    },
}

#[derive(Debug, Subcommand)]
enum OperationCommand {
    /// List operations, newest first (`--status queued,running,failed`: what is under way or
    /// failed now).
    List {
        /// Only these states, comma-separated: queued, running, succeeded, failed.
        #[arg(long)]
        status: Option<String>,
        /// Only these kinds, comma-separated (provision, deprovision, power, inspect, ...).
        #[arg(long)]
        kind: Option<String>,
        /// Only this host's (a name or an id).
        #[arg(long)]
        host: Option<String>,
        /// Only this pod manager's (a name or a uuid).
        #[arg(long)]
        pod_manager: Option<String>,
        /// Only this claim's.
        #[arg(long)]
        claim: Option<String>,
    },
    /// Show an operation.
    Show { id: String },
    /// Follow an operation until it ends.
    Watch { id: String },
}

#[derive(Debug, Subcommand)]
enum TaskCommand {
    /// List the tasks of the server that answers: last run, duration, outcome, next run.
    List,
    /// Run a task now (`probe`, `sync`, `bind`, `expiry` or `leasing`).
    Run { name: String },
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// List the registered plugins.
    List,
    /// Show one plugin, by its sha256.
    Show { sha256: String },
    /// Upload a component (`.wasm`); it is checked, compiled and registered.
    Upload { file: std::path::PathBuf },
    /// Check a component (`.wasm`) offline, as an upload would: print what it is, or every
    /// reason an upload would refuse it (exit code 1). Needs no server.
    Check { file: std::path::PathBuf },
    /// Write a new plugin crate, built on the podium-plugin SDK, in the folder NAME: a working
    /// starting point with a README and a test; `cargo build --target wasm32-wasip2 --release`
    /// builds it. Needs no server.
    New {
        /// The plugin's name: the folder, the crate and the name it registers under.
        name: String,
        #[arg(long, value_parser = ["hardware-driver", "ipam", "renderer"])]
        world: String,
        /// Where the SDK is: a path to `sdk/podium-plugin` or a git URL of Podium's
        /// repository (default: the SDK of the source tree this binary was built from, where it
        /// still is, else the repository).
        #[arg(long, value_name = "PATH|URL")]
        sdk: Option<String>,
    },
}

/// `podium podm create`: boxed, as it has many more fields than the other commands.
#[derive(Debug, Args)]
struct PodmCreate {
    #[arg(long)]
    name: String,
    /// Its Redfish service, `http(s)://host[:port]`.
    #[arg(long)]
    endpoint: String,
    #[arg(long)]
    username: Option<String>,
    #[arg(long, requires = "username")]
    password_stdin: bool,
    /// Do not verify the service's TLS certificate.
    #[arg(long)]
    insecure: bool,
    /// `admin` (default), `consumer` or `layered`.
    #[arg(long, value_parser = ["admin", "consumer", "layered"])]
    network_config_owner: Option<String>,
    #[arg(long)]
    description: Option<String>,
    #[arg(long)]
    location: Option<String>,
    /// Operations at once at its shared Redfish service (default: the server's).
    #[arg(long, value_name = "N")]
    service_limit: Option<u32>,
    /// Operations at once at the whole site, hosts with their own BMC included (default:
    /// none).
    #[arg(long, value_name = "N")]
    site_limit: Option<u32>,
    /// The hardware driver plugin, by name (default: the bundled `redfish`).
    #[arg(long, value_name = "PLUGIN")]
    driver: Option<String>,
    /// The driver's configuration as JSON, e.g. '{"root":"/redfish/v1"}'.
    #[arg(long, value_name = "JSON", requires = "driver")]
    driver_config: Option<String>,
    /// The metaData / networkData renderer plugin, by name.
    #[arg(long, value_name = "PLUGIN")]
    renderer: Option<String>,
    /// The ramdisk ISO (http or https URL) an inspection boots where the site has DHCP-less
    /// pools.
    #[arg(long, value_name = "URL")]
    preprovisioning_image: Option<String>,
}

#[derive(Debug, Subcommand)]
enum PodmCommand {
    /// List the pod managers with their status (with a tenant's token: those it was granted,
    /// with its grant of each).
    List,
    /// Show a pod manager (by uuid or name; a tenant: one it was granted).
    Show { uuid: String },
    /// Register a pod manager; the BMC password is read from stdin with --password-stdin.
    Create(Box<PodmCreate>),
    /// Set how many operations of a pod manager (by uuid or name) run at once; a limit not
    /// given goes back to its default.
    Limits {
        uuid: String,
        /// At its shared Redfish service (default: the server's).
        #[arg(long, value_name = "N")]
        service: Option<u32>,
        /// At the whole site, hosts with their own BMC included (default: none).
        #[arg(long, value_name = "N")]
        site: Option<u32>,
    },
    /// Delete a pod manager (by uuid or name) and forget its hosts.
    Delete { uuid: String },
    /// Sync the inventory now.
    Sync {
        uuid: String,
        /// Show the sync's progress until it ends.
        #[arg(long)]
        wait: bool,
    },
    /// The pod manager's network template (docs/network-config.md).
    #[command(subcommand)]
    Template(TemplateCommand),
}

#[derive(Debug, Subcommand)]
enum TemplateCommand {
    /// Print the network template of a pod manager (by uuid or name).
    Show { uuid: String },
    /// Set it from a JSON file (`-` for stdin); the renderer checks it.
    Set {
        uuid: String,
        file: std::path::PathBuf,
    },
    /// Remove the network template of a pod manager (by uuid or name).
    Delete { uuid: String },
}

/// `--phase` of the rendering commands.
const PHASES: [&str; 2] = ["preprovisioning", "provisioning"];

#[derive(Debug, Subcommand)]
enum HostCommand {
    /// List hosts, optionally of one pod manager (uuid or name) or in one state.
    List {
        #[arg(long)]
        pod_manager: Option<String>,
        #[arg(long)]
        state: Option<String>,
    },
    /// Show a host (by id or name): inventory, NICs, media slots, state.
    Show { id: String },
    /// on, off, graceful_shutdown, force_off, graceful_restart, force_restart, reboot.
    Power {
        id: String,
        action: String,
        /// Follow the power operation until it ends.
        #[arg(long)]
        wait: bool,
    },
    /// The host's operations, newest first.
    Operations { id: String },
    /// Inspect the host again through its driver (its inventory; with DHCP-less pools, its
    /// preprovisioning address and config drive first).
    Inspect {
        id: String,
        /// Follow the inspection until it ends.
        #[arg(long)]
        wait: bool,
    },
    /// Put the host in maintenance, or end it with --off.
    Maintenance {
        id: String,
        #[arg(long, conflicts_with = "off")]
        reason: Option<String>,
        #[arg(long)]
        off: bool,
    },
    /// The meta_data.json and network_data.json the host boots with in a phase.
    Rendered {
        id: String,
        #[arg(long, value_parser = PHASES, default_value = "provisioning")]
        phase: String,
    },
    /// Make a config drive for the host and print its URL (shown once).
    ConfigDrive {
        id: String,
        #[arg(long, value_parser = PHASES, default_value = "provisioning")]
        phase: String,
        /// Seconds the URL works (60 to 86400; default 3600).
        #[arg(long)]
        expires_in: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
enum TenantCommand {
    /// List the tenants.
    List,
    /// Show a tenant (by id or name).
    Show { id: String },
    /// Create a tenant.
    Create {
        name: String,
        #[arg(long)]
        description: Option<String>,
    },
    /// Delete a tenant; with --release, its claims are released (their hosts deprovisioned)
    /// first.
    Delete {
        id: String,
        #[arg(long)]
        release: bool,
        /// With --release: follow the releases until the tenant is deleted.
        #[arg(long, requires = "release")]
        wait: bool,
    },
    /// Create a token for a tenant; the secret is printed once.
    TokenCreate {
        tenant: String,
        #[arg(long)]
        read_only: bool,
        /// Seconds until it expires.
        #[arg(long)]
        expires_in: Option<u64>,
        #[arg(long)]
        description: Option<String>,
    },
    /// List the tokens of a tenant (never their secrets).
    Tokens { tenant: String },
    /// Revoke a token of a tenant; it stops working at once.
    TokenRevoke { tenant: String, token: String },
}

#[derive(Debug, Subcommand)]
enum GrantCommand {
    /// List the grants.
    List,
    /// Let a tenant (id or name) claim hosts of a pod manager (uuid or name).
    Create {
        #[arg(long)]
        tenant: String,
        #[arg(long)]
        pod_manager: String,
        /// `key=value`, repeatable: hosts must carry every label.
        #[arg(long = "selector", value_parser = key_value)]
        selector: Vec<(String, String)>,
        #[arg(long)]
        max_hosts: Option<u32>,
    },
    /// Delete a grant.
    Delete { id: String },
}

#[derive(Debug, Subcommand)]
enum ClaimCommand {
    /// List claims (a tenant its own; an admin every tenant's).
    List,
    /// Show a claim: its state, its host and what it asked for.
    Show { id: String },
    /// Claim a host and have it provisioned with an image.
    Create(ClaimCreateArgs),
    /// Power the claimed host on or off.
    Power {
        id: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
        /// Follow the power operation until it ends.
        #[arg(long)]
        wait: bool,
    },
    /// Release the claim; its host is deprovisioned before anyone else can have it.
    Delete {
        id: String,
        /// Follow the release until the claim is gone (its host deprovisioned).
        #[arg(long)]
        wait: bool,
    },
    /// The meta_data.json and network_data.json the claimed host boots with.
    Rendered { id: String },
    /// Show the claim's progress (binding, provisioning, its operations) until it settles.
    Watch { id: String },
    /// The operations run for the claim (provisioning, power, deprovisioning), newest first.
    Operations { id: String },
    /// Make a config drive for the claimed host and print its URL (shown once).
    ConfigDrive {
        id: String,
        /// Seconds the URL works (60 to 86400; default 3600).
        #[arg(long)]
        expires_in: Option<u64>,
    },
}

#[derive(Debug, Args)]
struct ClaimCreateArgs {
    /// Any granted pod manager when absent.
    #[arg(long)]
    pod_manager: Option<String>,
    #[arg(long)]
    image: String,
    #[arg(long)]
    checksum: Option<String>,
    #[arg(long)]
    checksum_type: Option<String>,
    #[arg(long)]
    format: Option<String>,
    /// `key=value`, repeatable.
    #[arg(long = "selector", value_parser = key_value)]
    selector: Vec<(String, String)>,
    #[arg(long)]
    min_cpu: Option<u32>,
    #[arg(long)]
    min_memory_mib: Option<u64>,
    /// A file whose bytes become the user data (sent as base64; at most 64 KiB).
    #[arg(long)]
    user_data_file: Option<std::path::PathBuf>,
    /// A JSON file of network_data.json (pod managers whose network config is the consumer's).
    #[arg(long)]
    network_data_file: Option<std::path::PathBuf>,
    /// A metaData key, `key=value`, repeatable.
    #[arg(long = "meta", value_parser = key_value)]
    meta: Vec<(String, String)>,
    /// Leave the host powered off.
    #[arg(long)]
    offline: bool,
    /// Show the claim's progress until its host is provisioned (or it fails).
    #[arg(long)]
    wait: bool,
}

#[derive(Debug, Subcommand)]
enum PoolCommand {
    /// List the IP pools with their usage.
    List,
    /// Show an IP pool (by id or name).
    Show { id: String },
    /// Create an IP pool.
    Create {
        #[arg(long)]
        name: String,
        /// `START-END` or a subnet `A.B.C.D/N`, repeatable.
        #[arg(long = "range", required = true)]
        ranges: Vec<String>,
        #[arg(long)]
        prefix: u8,
        #[arg(long)]
        gateway: Option<String>,
        /// Repeatable.
        #[arg(long = "dns")]
        dns_servers: Vec<String>,
        #[arg(long)]
        pod_manager: Option<String>,
        /// The IPAM plugin; default the pod manager's, else ipam-static.
        #[arg(long)]
        plugin: Option<String>,
        /// The plugin's configuration as JSON, e.g. '{"strategy":"random"}'.
        #[arg(long, requires = "plugin")]
        plugin_config: Option<String>,
    },
    /// Delete an IP pool (by id or name).
    Delete { id: String },
    /// Claim an address for an owner (`host:<id>`, `claim:<id>` or a name).
    Claim {
        pool: String,
        #[arg(long)]
        owner: String,
        #[arg(long)]
        address: Option<String>,
    },
    /// The addresses claimed from a pool.
    Claims { pool: String },
    /// Release an address claimed from a pool.
    Release { pool: String, claim: String },
}

fn key_value(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("`{s}` is not key=value"))
}

/// Runs the command line; the exit code says whether it worked.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve { .. } => Err(anyhow::anyhow!(
            "`serve` takes no client option (--url, --output): run `podium serve [OPTIONS]`"
        )),
        command => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(anyhow::Error::from)
            .and_then(|rt| rt.block_on(run(cli.url.as_deref(), cli.output, command))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

const TASK_COLUMNS: &[Column] = &[
    ("NAME", "/name"),
    ("RUNS", "/runs"),
    ("LAST STARTED", "/last_started_at"),
    ("MS", "/last_duration_ms"),
    ("RESULT", "/last_result"),
    ("ERROR", "/last_error"),
    ("NEXT RUN", "/next_run_at"),
];
const PLUGIN_COLUMNS: &[Column] = &[
    ("NAME", "/name"),
    ("VERSION", "/version"),
    ("WORLD", "/world"),
    ("SOURCE", "/source"),
    ("SHA256", "/sha256"),
];
const PODM_COLUMNS: &[Column] = &[
    ("UUID", "/uuid"),
    ("NAME", "/name"),
    ("URL", "/url"),
    ("STATUS", "/status"),
    ("DRIVER", "/driver/name"),
    ("NETWORK CONFIG", "/network_config_owner"),
];
/// A tenant's pod managers (`/v1/me/pod_managers`).
const GRANTED_COLUMNS: &[Column] = &[
    ("UUID", "/uuid"),
    ("NAME", "/name"),
    ("LOCATION", "/location"),
    ("STATUS", "/status"),
    ("SELECTOR", "/grant/selector"),
    ("MAX HOSTS", "/grant/max_hosts"),
    ("NETWORK CONFIG", "/network_config_owner"),
];
const HOST_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("NAME", "/name"),
    ("STATE", "/state"),
    ("POWER", "/power_state"),
    ("CPUS", "/cpu_count"),
    ("MEMORY MIB", "/memory_mib"),
    ("KIND", "/kind"),
];
const TENANT_COLUMNS: &[Column] = &[("ID", "/id"), ("NAME", "/name"), ("CREATED", "/created_at")];
const TOKEN_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("READ ONLY", "/read_only"),
    ("EXPIRES", "/expires_at"),
    ("DESCRIPTION", "/description"),
];
const GRANT_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("TENANT", "/tenant"),
    ("POD MANAGER", "/pod_manager"),
    ("SELECTOR", "/selector"),
    ("MAX HOSTS", "/max_hosts"),
];
const CLAIM_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("STATE", "/state"),
    ("HOST", "/host/name"),
    ("POWER", "/host/power_state"),
    ("ONLINE", "/online"),
    ("REASON", "/reason"),
];
const POOL_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("NAME", "/name"),
    ("SUBNET", "/subnet"),
    ("PLUGIN", "/plugin/name"),
    ("TOTAL", "/usage/total"),
    ("ALLOCATED", "/usage/allocated"),
    ("FREE", "/usage/free"),
];
const IP_CLAIM_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("OWNER", "/owner"),
    ("ADDRESS", "/address"),
    ("PREFIX", "/prefix"),
    ("GATEWAY", "/gateway"),
];
const OPERATION_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("KIND", "/kind"),
    ("STATUS", "/status"),
    ("HOST", "/host"),
    ("STARTED", "/started_at"),
    ("FINISHED", "/finished_at"),
    ("ERROR", "/error"),
];

/// A flag's value as the model's type it names (a power action, a phase): its error says
/// which values there are.
fn parsed<T: serde::de::DeserializeOwned>(flag: &str, value: &str) -> anyhow::Result<T> {
    serde_json::from_value(Value::String(value.to_owned()))
        .map_err(|e| anyhow::anyhow!("{flag}: {e}"))
}

fn read_stdin_line(what: &str) -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .take(64 << 10)
        .read_to_string(&mut text)
        .with_context(|| format!("reading the {what} from stdin"))?;
    let line = text.lines().next().unwrap_or("").trim().to_owned();
    if line.is_empty() {
        bail!("no {what} on stdin");
    }
    Ok(line)
}

/// A path segment from the command line, percent-encoded (everything but unreserved
/// characters), so an id cannot reach another route; `.` and `..` are refused, since URLs
/// resolve them even encoded.
/// A spinner with a status line on stderr (drawn only on a terminal).
fn spinner() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// An operation's state in words: `sync running (attempt 2)`, `power queued: retry at ...`.
fn describe_operation(op: &OperationView) -> String {
    let mut text = format!("{} {}", op.kind, op.status);
    if op.attempts > 1 {
        text.push_str(&format!(" (attempt {})", op.attempts));
    }
    if op.status == OperationStatus::Queued
        && let Some(at) = &op.next_attempt_at
    {
        text.push_str(&format!(", retry at {at}"));
    }
    if let Some(e) = &op.error {
        text.push_str(&format!(": {e}"));
    }
    text
}

/// Whether an operation has ended.
fn ended(op: &OperationView) -> bool {
    matches!(
        op.status,
        OperationStatus::Succeeded | OperationStatus::Failed
    )
}

/// Follows an operation until it succeeds or fails, showing its state: from the server's
/// events (`GET /v1/events`), not by asking again and again.
async fn watch_operation(c: &Client, id: &OperationId) -> anyhow::Result<OperationView> {
    let bar = spinner();
    let path = format!("/v1/operations/{}", seg(id.as_str())?);
    // The stream first, then the state: a change after the read is an event.
    let mut events = c
        .events(&format!("/v1/events?operation={}", seg(id.as_str())?))
        .await?;
    let mut op: OperationView = c.get_view(&path).await?;
    loop {
        bar.set_message(describe_operation(&op));
        if ended(&op) {
            bar.finish_and_clear();
            return Ok(op);
        }
        let event = events.next().await?;
        match event.name.as_str() {
            "operation" => {
                let changed: EventView = client::view(event.data)?;
                if let Some(change) = &changed.operation {
                    apply_operation(&mut op, change);
                    if ended(&op) {
                        // Its result is in the whole view.
                        op = c.get_view(&path).await?;
                    }
                }
            }
            "reset" => op = c.get_view(&path).await?,
            _ => {}
        }
    }
}

/// An operation as an event of it left it.
fn apply_operation(op: &mut OperationView, change: &OperationEventView) {
    op.status = change.status;
    op.attempts = change.attempts;
    op.error = change.error.clone();
    op.next_attempt_at = change.next_attempt_at.clone();
}

/// What `watch_claim` shows and decides on: the claim, its host's state, its latest operation.
struct ClaimProgress {
    claim: ClaimView,
    operation: Option<OperationView>,
}

impl ClaimProgress {
    async fn read(c: &Client, id: &ClaimId) -> anyhow::Result<ClaimProgress> {
        let claim: ClaimView = c
            .get_view(&format!("/v1/claims/{}", seg(id.as_str())?))
            .await?;
        let ops: List<OperationView> = c
            .get_view(&format!(
                "/v1/claims/{}/operations?limit=1",
                seg(id.as_str())?
            ))
            .await?;
        Ok(ClaimProgress {
            claim,
            operation: ops.items.into_iter().next(),
        })
    }

    fn describe(&self) -> String {
        let claim = &self.claim;
        let mut text = format!("claim {}", claim.state);
        if let Some(host) = &claim.host {
            text.push_str(&format!(", host {}", host.provisioning_state));
        }
        if let Some(reason) = &claim.reason {
            text.push_str(&format!(": {reason}"));
        }
        if let Some(op) = &self.operation {
            text.push_str(&format!("; {}", describe_operation(op)));
        }
        text
    }

    /// Provisioned, powered off as asked, failed, or its host in error.
    fn settled(&self) -> bool {
        let claim = &self.claim;
        claim.state == ClaimState::Failed
            || matches!(
                claim.host.as_ref().map(|h| h.provisioning_state),
                Some(ShownState::In(HostState::Provisioned | HostState::Error))
            )
            || (claim.state == ClaimState::Bound && !claim.online)
    }

    /// Applies an event of the claim, of its host or of one of its operations. Answers whether
    /// the whole claim must be read again (a host was bound, or events were forgotten).
    fn apply(&mut self, event: &EventView) -> bool {
        if let Some(change) = &event.claim {
            let claim = &mut self.claim;
            claim.state = change.state;
            claim.online = change.online;
            claim.reason = change.reason.clone();
            let host = claim.host.as_ref().map(|h| &h.id);
            if host != change.host.as_ref() {
                return true;
            }
        }
        if let Some(change) = &event.host
            && let Some(host) = &mut self.claim.host
            && host.id == change.id
        {
            host.provisioning_state = change.provisioning_state;
            host.power_state = change.power_state.clone();
        }
        if let Some(change) = &event.operation {
            match &mut self.operation {
                Some(op) if op.id == change.id => apply_operation(op, change),
                // A newer operation: read it whole.
                _ => return true,
            }
        }
        false
    }
}

/// Follows a claim until `settled` says so (`ClaimProgress::settled`: provisioned, powered off
/// as asked, failed, or its host in error); shows its state and its latest operation meanwhile.
/// The changes come from the server's events (`GET /v1/events?claim=`); the claim is read
/// whole at the start, when a host is bound, and to confirm that it settled.
async fn watch_claim(
    c: &Client,
    id: &ClaimId,
    settled: impl Fn(&ClaimProgress) -> bool,
) -> anyhow::Result<ClaimProgress> {
    let bar = spinner();
    // The stream first, then the state: a change after the read is an event.
    let mut events = c
        .events(&format!("/v1/events?claim={}", seg(id.as_str())?))
        .await?;
    let mut progress = ClaimProgress::read(c, id).await?;
    loop {
        bar.set_message(progress.describe());
        if settled(&progress) {
            // An event read before the claim was may have been older than it: settled only if
            // the claim as it is now says so.
            progress = ClaimProgress::read(c, id).await?;
            if settled(&progress) {
                bar.finish_and_clear();
                return Ok(progress);
            }
            continue;
        }
        let event = events.next().await?;
        let again = match event.name.as_str() {
            "reset" => true,
            "claim" | "host" | "operation" => {
                let change: EventView = client::view(event.data)?;
                if change.action == EventAction::Deleted && change.claim.is_some() {
                    bail!("the claim was released while it was watched");
                }
                progress.apply(&change)
            }
            _ => false,
        };
        if again {
            progress = ClaimProgress::read(c, id).await?;
        }
    }
}

/// Follows a claim's release until the claim is gone (its host deprovisioned, its addresses
/// freed); fails where the deprovisioning does. A claim already gone was released.
async fn watch_release(c: &Client, id: &ClaimId) -> anyhow::Result<()> {
    let bar = spinner();
    let gone = |e: &anyhow::Error| client::not_found(e);
    let mut events = match c
        .events(&format!("/v1/events?claim={}", seg(id.as_str())?))
        .await
    {
        Ok(events) => events,
        Err(e) if gone(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut progress = match ClaimProgress::read(c, id).await {
        Ok(progress) => progress,
        Err(e) if gone(&e) => return Ok(()),
        Err(e) => return Err(e),
    };
    loop {
        bar.set_message(progress.describe());
        if let Some(op) = &progress.operation
            && op.kind == OperationKind::Deprovision
            && op.status == OperationStatus::Failed
        {
            bar.finish_and_clear();
            bail!(
                "deprovisioning the claim's host failed: {} (the claim stays releasing until an \
                 admin sees to the host)",
                op.error.as_deref().unwrap_or("")
            );
        }
        let event = match events.next().await {
            Ok(event) => event,
            // The stream, opened again after a break, finds the claim gone.
            Err(e) if gone(&e) => break,
            Err(e) => return Err(e),
        };
        let again = match event.name.as_str() {
            "reset" => true,
            "claim" | "host" | "operation" => {
                let change: EventView = client::view(event.data)?;
                if change.action == EventAction::Deleted && change.claim.is_some() {
                    break;
                }
                progress.apply(&change)
            }
            _ => false,
        };
        if again {
            progress = match ClaimProgress::read(c, id).await {
                Ok(progress) => progress,
                Err(e) if gone(&e) => break,
                Err(e) => return Err(e),
            };
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// Follows the release of a tenant's claims (`events`: claims and operations, opened before the
/// deletion was asked) until the tenant is deleted; fails where a deprovisioning does.
async fn watch_tenant_deletion(
    c: &Client,
    mut events: client::Events<'_>,
    id: &TenantId,
) -> anyhow::Result<()> {
    let bar = spinner();
    let path = format!("/v1/tenants/{}", seg(id.as_str())?);
    let claims: Vec<ClaimView> = c
        .list("/v1/claims")
        .await?
        .into_iter()
        .map(client::view)
        .collect::<anyhow::Result<_>>()?;
    let mut releasing: Vec<ClaimId> = claims
        .into_iter()
        .filter(|claim| &claim.tenant == id)
        .map(|claim| claim.id)
        .collect();
    // Whether to ask if the tenant is gone: at the start, when one of its claims is, and after
    // a quiet second (the tenant goes just after its last claim).
    let mut check = true;
    loop {
        bar.set_message(format!(
            "{} claims of the tenant releasing",
            releasing.len()
        ));
        if check {
            match c.get(&path).await {
                Err(e) if client::not_found(&e) => break,
                Err(e) => return Err(e),
                Ok(_) => check = false,
            }
        }
        let Ok(event) =
            tokio::time::timeout(std::time::Duration::from_secs(1), events.next()).await
        else {
            check = true;
            continue;
        };
        let event = event?;
        if !matches!(event.name.as_str(), "claim" | "operation") {
            continue;
        }
        let change: EventView = client::view(event.data)?;
        if let Some(claim) = &change.claim
            && change.action == EventAction::Deleted
            && releasing.contains(&claim.id)
        {
            releasing.retain(|c| c != &claim.id);
            check = true;
        }
        if let Some(op) = &change.operation
            && op.kind == OperationKind::Deprovision
            && op.status == OperationStatus::Failed
            && op.claim.as_ref().is_some_and(|c| releasing.contains(c))
        {
            bar.finish_and_clear();
            bail!(
                "deprovisioning a host of the tenant's claim {} failed: {}; the tenant is \
                 deleted once an admin sees to it",
                op.claim.as_ref().map_or("", ClaimId::as_str),
                op.error.as_deref().unwrap_or("")
            );
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// An error (exit code 1) for a claim that settled badly.
fn settled_well(claim: &ClaimView) -> anyhow::Result<()> {
    if claim.state == ClaimState::Failed {
        bail!(
            "the claim failed: {}",
            claim.reason.as_deref().unwrap_or("")
        );
    }
    if claim.host.as_ref().map(|h| h.provisioning_state) == Some(ShownState::In(HostState::Error)) {
        bail!("provisioning the claim's host failed: see `podium claim operations`");
    }
    Ok(())
}

/// A JSON document from a file, or from stdin for `-`.
fn read_json_file(path: &std::path::Path) -> anyhow::Result<Value> {
    let bytes = if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
        buf
    } else {
        std::fs::read(path).with_context(|| format!("reading {}", path.display()))?
    };
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))
}

fn seg(s: &str) -> anyhow::Result<String> {
    if s.is_empty() || s.trim_matches('.').is_empty() {
        bail!("`{s}` is not an id");
    }
    Ok(s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect())
}

/// Every id the command was given by name, replaced by the id (`names.rs`).
async fn resolve_names(url: Option<&str>, command: &mut Command) -> anyhow::Result<()> {
    use Named::{Host, PodManager, Pool, Tenant};
    let mut wanted: Vec<(Named, &mut String)> = Vec::new();
    match command {
        Command::Podm(cmd) => match cmd {
            PodmCommand::Show { uuid }
            | PodmCommand::Delete { uuid }
            | PodmCommand::Sync { uuid, .. }
            | PodmCommand::Limits { uuid, .. }
            | PodmCommand::Template(
                TemplateCommand::Show { uuid }
                | TemplateCommand::Set { uuid, .. }
                | TemplateCommand::Delete { uuid },
            ) => wanted.push((PodManager, uuid)),
            PodmCommand::List | PodmCommand::Create { .. } => {}
        },
        Command::Operation(OperationCommand::List {
            host, pod_manager, ..
        }) => {
            wanted.extend(host.as_mut().map(|h| (Host, h)));
            wanted.extend(pod_manager.as_mut().map(|pm| (PodManager, pm)));
        }
        Command::Host(cmd) => match cmd {
            HostCommand::List { pod_manager, .. } => {
                wanted.extend(pod_manager.as_mut().map(|pm| (PodManager, pm)));
            }
            HostCommand::Show { id }
            | HostCommand::Power { id, .. }
            | HostCommand::Operations { id }
            | HostCommand::Inspect { id, .. }
            | HostCommand::Maintenance { id, .. }
            | HostCommand::Rendered { id, .. }
            | HostCommand::ConfigDrive { id, .. } => wanted.push((Host, id)),
        },
        Command::Tenant(cmd) => match cmd {
            TenantCommand::Show { id } | TenantCommand::Delete { id, .. } => {
                wanted.push((Tenant, id));
            }
            TenantCommand::TokenCreate { tenant, .. }
            | TenantCommand::Tokens { tenant }
            | TenantCommand::TokenRevoke { tenant, .. } => wanted.push((Tenant, tenant)),
            TenantCommand::List | TenantCommand::Create { .. } => {}
        },
        Command::Grant(GrantCommand::Create {
            tenant,
            pod_manager,
            ..
        }) => {
            wanted.push((Tenant, tenant));
            wanted.push((PodManager, pod_manager));
        }
        Command::Claim(ClaimCommand::Create(args)) => {
            wanted.extend(args.pod_manager.as_mut().map(|pm| (PodManager, pm)));
        }
        Command::Events { host, .. } => wanted.extend(host.as_mut().map(|h| (Host, h))),
        Command::Pool(cmd) => match cmd {
            PoolCommand::Show { id } | PoolCommand::Delete { id } => wanted.push((Pool, id)),
            PoolCommand::Claim { pool, .. }
            | PoolCommand::Claims { pool }
            | PoolCommand::Release { pool, .. } => wanted.push((Pool, pool)),
            PoolCommand::Create { pod_manager, .. } => {
                wanted.extend(pod_manager.as_mut().map(|pm| (PodManager, pm)));
            }
            PoolCommand::List => {}
        },
        _ => {}
    }
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
            PodManager if client.is_tenant().await? => Named::GrantedPodManager,
            kind => kind,
        };
        *value = names::resolve(client, kind, value).await?;
    }
    Ok(())
}

async fn run(url: Option<&str>, format: Format, mut command: Command) -> anyhow::Result<()> {
    let print = |text: String| println!("{text}");
    resolve_names(url, &mut command).await?;
    match command {
        Command::Serve { .. } => unreachable!("answered by main"),
        Command::Login { url } => {
            let token = match std::env::var("PODIUM_TOKEN") {
                Ok(t) if !t.is_empty() => t,
                _ => read_stdin_line("token")?,
            };
            let token = Secret::new(token);
            let client = Client::new(&url, Some(token.clone()))?;
            let me: MeView = client
                .get_view("/v1/me")
                .await
                .context("checking the token")?;
            let path = Login { url, token }.save()?;
            match (&me.tenant, &me.tenant_name) {
                (Some(tenant), Some(name)) => eprintln!(
                    "logged in as tenant {name} ({tenant}); saved in {}",
                    path.display()
                ),
                (Some(tenant), None) => {
                    eprintln!("logged in as tenant {tenant}; saved in {}", path.display())
                }
                (None, _) => eprintln!("logged in as {}; saved in {}", me.role, path.display()),
            }
        }
        Command::Logout => {
            let path = client::config_path()?;
            match std::fs::remove_file(&path) {
                Ok(()) => eprintln!("removed {}", path.display()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => eprintln!("not logged in"),
                Err(e) => return Err(e).context(format!("removing {}", path.display())),
            }
        }
        Command::Whoami => {
            let c = Client::from_env(url)?;
            print(output::object(format, &c.get("/v1/me").await?));
        }
        Command::Plugin(PluginCommand::New { name, world, sdk }) => {
            let dir = new::new_plugin(&name, &world, sdk.as_deref())?;
            eprintln!(
                "wrote {}: `cargo build --target wasm32-wasip2 --release` there builds the \
                 component (see its README.md)",
                dir.display()
            );
        }
        Command::Plugin(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                PluginCommand::List => {
                    print(output::list(
                        format,
                        &c.list("/v1/plugins").await?,
                        PLUGIN_COLUMNS,
                    ));
                }
                PluginCommand::Show { sha256 } => {
                    let plugin = c.get(&format!("/v1/plugins/{}", seg(&sha256)?)).await?;
                    print(output::object(format, &plugin));
                }
                // Run by the `podium` binary, which has the plugin runtime (see `host/`).
                PluginCommand::New { .. } => unreachable!("answered above"),
                PluginCommand::Check { .. } => {
                    anyhow::bail!("`plugin check` runs in the podium binary, not in this client")
                }
                PluginCommand::Upload { file } => {
                    let bytes = std::fs::read(&file)
                        .with_context(|| format!("reading {}", file.display()))?;
                    let plugin = c
                        .post_bytes("/v1/plugins", "application/wasm", bytes)
                        .await?;
                    print(output::object(format, &plugin));
                }
            }
        }
        Command::Podm(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                // A tenant sees the pod managers it was granted, as `/v1/me/pod_managers` shows them.
                PodmCommand::List if c.is_tenant().await? => {
                    let items = c.list("/v1/me/pod_managers").await?;
                    print(output::list(format, &items, GRANTED_COLUMNS));
                }
                PodmCommand::List => {
                    let items = c.list("/v1/pod_managers").await?;
                    print(output::list(format, &items, PODM_COLUMNS));
                }
                PodmCommand::Show { uuid } => {
                    let collection = if c.is_tenant().await? {
                        "/v1/me/pod_managers"
                    } else {
                        "/v1/pod_managers"
                    };
                    print(output::object(
                        format,
                        &c.get(&format!("{collection}/{}", seg(&uuid)?)).await?,
                    ));
                }
                PodmCommand::Create(create) => {
                    let PodmCreate {
                        name,
                        endpoint,
                        username,
                        password_stdin,
                        insecure,
                        network_config_owner,
                        description,
                        location,
                        service_limit,
                        site_limit,
                        driver,
                        driver_config,
                        renderer,
                        preprovisioning_image,
                    } = *create;
                    let driver_config = driver_config
                        .map(|c| {
                            serde_json::from_str(&c)
                                .map_err(|e| anyhow::anyhow!("--driver-config: not JSON: {e}"))
                        })
                        .transpose()?;
                    let binding = |name: String, config| PluginBindingParams {
                        name,
                        version: None,
                        sha256: None,
                        config,
                    };
                    let auth = match username {
                        Some(username) => Some(AuthParams {
                            username,
                            password: Secret::new(if password_stdin {
                                read_stdin_line("password")?
                            } else {
                                String::new()
                            }),
                        }),
                        None => None,
                    };
                    let body = PodManagerCreate {
                        name,
                        url: endpoint,
                        auth,
                        description,
                        location,
                        tls: insecure.then_some(TlsParams {
                            verify: false,
                            ca_bundle: None,
                            pinned_sha256: None,
                        }),
                        driver: driver.map(|d| binding(d, driver_config)),
                        ipam: None,
                        renderer: renderer.map(|r| binding(r, None)),
                        network_config_owner: network_config_owner
                            .map(|o| parsed("--network-config-owner", &o))
                            .transpose()?,
                        limits: Some(OperationLimits {
                            service: service_limit,
                            site: site_limit,
                        }),
                        preprovisioning_image,
                    };
                    print(output::object(
                        format,
                        &c.post("/v1/pod_managers", &body).await?,
                    ));
                }
                PodmCommand::Limits {
                    uuid,
                    service,
                    site,
                } => {
                    let body = PodManagerUpdate {
                        limits: Some(OperationLimits { service, site }),
                        ..Default::default()
                    };
                    let path = format!("/v1/pod_managers/{}", seg(&uuid)?);
                    print(output::object(
                        format,
                        &c.send(Method::PATCH, &path, Some(&body)).await?,
                    ));
                }
                PodmCommand::Delete { uuid } => {
                    c.delete(&format!("/v1/pod_managers/{}", seg(&uuid)?))
                        .await?;
                    eprintln!("deleted pod manager {uuid}");
                }
                PodmCommand::Sync { uuid, wait } => {
                    let op: OperationView = client::view(
                        c.post(
                            &format!("/v1/pod_managers/{}/sync", seg(&uuid)?),
                            &json!({}),
                        )
                        .await?,
                    )?;
                    let op = if wait {
                        watch_operation(&c, &op.id).await?
                    } else {
                        op
                    };
                    print(output::object(format, &serde_json::to_value(&op)?));
                    if op.status == OperationStatus::Failed {
                        bail!("the sync failed: {}", op.error.as_deref().unwrap_or(""));
                    }
                }
                PodmCommand::Template(cmd) => match cmd {
                    TemplateCommand::Show { uuid } => {
                        let path = format!("/v1/pod_managers/{}/network_template", seg(&uuid)?);
                        print(output::pretty(&c.get(&path).await?));
                    }
                    TemplateCommand::Set { uuid, file } => {
                        let path = format!("/v1/pod_managers/{}/network_template", seg(&uuid)?);
                        c.send(Method::PUT, &path, Some(&read_json_file(&file)?))
                            .await?;
                        eprintln!("network template of pod manager {uuid} set");
                    }
                    TemplateCommand::Delete { uuid } => {
                        let path = format!("/v1/pod_managers/{}/network_template", seg(&uuid)?);
                        c.delete(&path).await?;
                        eprintln!("network template of pod manager {uuid} deleted");
                    }
                },
            }
        }
        Command::Host(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                HostCommand::List { pod_manager, state } => {
                    let mut query = Vec::new();
                    if let Some(pm) = pod_manager {
                        query.push(format!("pod_manager={}", seg(&pm)?));
                    }
                    if let Some(s) = state {
                        query.push(format!("state={}", seg(&s)?));
                    }
                    let path = if query.is_empty() {
                        "/v1/hosts".to_owned()
                    } else {
                        format!("/v1/hosts?{}", query.join("&"))
                    };
                    print(output::list(format, &c.list(&path).await?, HOST_COLUMNS));
                }
                HostCommand::Show { id } => {
                    print(output::object(
                        format,
                        &c.get(&format!("/v1/hosts/{}", seg(&id)?)).await?,
                    ));
                }
                HostCommand::Power { id, action, wait } => {
                    let mut op: OperationView = client::view(
                        c.post(
                            &format!("/v1/hosts/{}/power", seg(&id)?),
                            &PowerParams {
                                action: parsed("ACTION", &action)?,
                            },
                        )
                        .await?,
                    )?;
                    if wait {
                        op = watch_operation(&c, &op.id).await?;
                    }
                    print(output::object(format, &serde_json::to_value(&op)?));
                    if op.status == OperationStatus::Failed {
                        bail!(
                            "the power operation failed: {}",
                            op.error.as_deref().unwrap_or("")
                        );
                    }
                }
                HostCommand::Inspect { id, wait } => {
                    let mut op: OperationView = client::view(
                        c.post(&format!("/v1/hosts/{}/inspect", seg(&id)?), &json!({}))
                            .await?,
                    )?;
                    if wait {
                        // A registration first where the last one failed: follow what it queues.
                        op = watch_operation(&c, &op.id).await?;
                        if op.kind == OperationKind::Register
                            && op.status == OperationStatus::Succeeded
                        {
                            let newest: List<OperationView> = c
                                .get_view(&format!("/v1/operations?host={}&limit=1", seg(&id)?))
                                .await?;
                            if let Some(next) = newest.items.first() {
                                op = watch_operation(&c, &next.id).await?;
                            }
                        }
                    }
                    print(output::object(format, &serde_json::to_value(&op)?));
                }
                HostCommand::Maintenance { id, reason, off } => {
                    let path = format!("/v1/hosts/{}/maintenance", seg(&id)?);
                    let host = if off {
                        c.delete(&path).await?
                    } else {
                        c.send(Method::PUT, &path, Some(&MaintenanceParams { reason }))
                            .await?
                    };
                    print(output::object(format, &host));
                }
                HostCommand::Operations { id } => {
                    let items = c
                        .list(&format!("/v1/operations?host={}", seg(&id)?))
                        .await?;
                    print(output::list(format, &items, OPERATION_COLUMNS));
                }
                HostCommand::Rendered { id, phase } => {
                    let r = c
                        .get(&format!("/v1/hosts/{}/rendered?phase={phase}", seg(&id)?))
                        .await?;
                    print(output::pretty(&r));
                }
                HostCommand::ConfigDrive {
                    id,
                    phase,
                    expires_in,
                } => {
                    let drive = c
                        .post(
                            &format!("/v1/hosts/{}/config_drive", seg(&id)?),
                            &ConfigDriveCreate {
                                phase: Some(parsed("--phase", &phase)?),
                                expires_in,
                            },
                        )
                        .await?;
                    print(output::object(format, &drive));
                }
            }
        }
        Command::Tenant(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                TenantCommand::List => {
                    print(output::list(
                        format,
                        &c.list("/v1/tenants").await?,
                        TENANT_COLUMNS,
                    ));
                }
                TenantCommand::Show { id } => {
                    print(output::object(
                        format,
                        &c.get(&format!("/v1/tenants/{}", seg(&id)?)).await?,
                    ));
                }
                TenantCommand::Create { name, description } => {
                    let body = TenantCreate { name, description };
                    print(output::object(format, &c.post("/v1/tenants", &body).await?));
                }
                TenantCommand::Delete { id, release, wait } => {
                    let path = if release {
                        format!("/v1/tenants/{}?release=true", seg(&id)?)
                    } else {
                        format!("/v1/tenants/{}", seg(&id)?)
                    };
                    // The stream first: a release that ends after the request is an event.
                    let events = if wait {
                        Some(c.events("/v1/events?kind=claim,operation").await?)
                    } else {
                        None
                    };
                    let answer = c.delete(&path).await?;
                    if answer.is_null() {
                        eprintln!("deleted tenant {id}");
                    } else if let Some(events) = events {
                        watch_tenant_deletion(&c, events, &TenantId::from(id.as_str())).await?;
                        eprintln!("released the claims of tenant {id} and deleted it");
                    } else {
                        eprintln!(
                            "releasing the claims of tenant {id}; it is deleted once they are released"
                        );
                        print(output::object(format, &answer));
                    }
                }
                TenantCommand::TokenCreate {
                    tenant,
                    read_only,
                    expires_in,
                    description,
                } => {
                    let body = TokenCreate {
                        read_only,
                        expires_at: None,
                        expires_in,
                        description,
                    };
                    let token = c
                        .post(&format!("/v1/tenants/{}/tokens", seg(&tenant)?), &body)
                        .await?;
                    print(output::object(format, &token));
                    if format == Format::Table {
                        eprintln!("the token is shown once: keep it now");
                    }
                }
                TenantCommand::Tokens { tenant } => {
                    let items = c
                        .list(&format!("/v1/tenants/{}/tokens", seg(&tenant)?))
                        .await?;
                    print(output::list(format, &items, TOKEN_COLUMNS));
                }
                TenantCommand::TokenRevoke { tenant, token } => {
                    c.delete(&format!(
                        "/v1/tenants/{}/tokens/{}",
                        seg(&tenant)?,
                        seg(&token)?
                    ))
                    .await?;
                    eprintln!("revoked token {token}");
                }
            }
        }
        Command::Grant(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                GrantCommand::List => {
                    print(output::list(
                        format,
                        &c.list("/v1/grants").await?,
                        GRANT_COLUMNS,
                    ));
                }
                GrantCommand::Create {
                    tenant,
                    pod_manager,
                    selector,
                    max_hosts,
                } => {
                    let body = GrantCreate {
                        tenant: tenant.into(),
                        pod_manager: pod_manager.into(),
                        selector: selector.into_iter().collect(),
                        max_hosts,
                    };
                    print(output::object(format, &c.post("/v1/grants", &body).await?));
                }
                GrantCommand::Delete { id } => {
                    c.delete(&format!("/v1/grants/{}", seg(&id)?)).await?;
                    eprintln!("deleted grant {id}");
                }
            }
        }
        Command::Claim(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                ClaimCommand::List => {
                    print(output::list(
                        format,
                        &c.list("/v1/claims").await?,
                        CLAIM_COLUMNS,
                    ));
                }
                ClaimCommand::Show { id } => {
                    print(output::object(
                        format,
                        &c.get(&format!("/v1/claims/{}", seg(&id)?)).await?,
                    ));
                }
                ClaimCommand::Create(a) => {
                    let user_data_base64 = match a.user_data_file {
                        Some(path) => {
                            use base64::Engine as _;
                            let bytes = std::fs::read(&path)
                                .with_context(|| format!("reading {}", path.display()))?;
                            Some(base64::engine::general_purpose::STANDARD.encode(bytes))
                        }
                        None => None,
                    };
                    let body = ClaimCreate {
                        pod_manager: a.pod_manager.map(Into::into),
                        selector: a.selector.into_iter().collect(),
                        min_cpu: a.min_cpu,
                        min_memory_mib: a.min_memory_mib,
                        image: ImageParams {
                            url: a.image,
                            checksum: a.checksum,
                            checksum_type: a.checksum_type,
                            format: a.format,
                        },
                        user_data: None,
                        user_data_base64,
                        meta_data: (!a.meta.is_empty())
                            .then(|| json!(a.meta.into_iter().collect::<BTreeMap<_, _>>())),
                        network_data: a
                            .network_data_file
                            .map(|path| read_json_file(&path))
                            .transpose()?,
                        online: Some(!a.offline),
                    };
                    let claim: ClaimView = client::view(c.post("/v1/claims", &body).await?)?;
                    let claim = if a.wait {
                        watch_claim(&c, &claim.id, ClaimProgress::settled)
                            .await?
                            .claim
                    } else {
                        claim
                    };
                    print(output::object(format, &serde_json::to_value(&claim)?));
                    settled_well(&claim)?;
                }
                ClaimCommand::Power { id, state, wait } => {
                    let body = ClaimUpdate {
                        online: Some(state == "on"),
                        ..ClaimUpdate::default()
                    };
                    let claim = c
                        .send(
                            Method::PATCH,
                            &format!("/v1/claims/{}", seg(&id)?),
                            Some(&body),
                        )
                        .await?;
                    if !wait {
                        print(output::object(format, &claim));
                        return Ok(());
                    }
                    // The operation the change queued (none where the host was already so).
                    let id = ClaimId::from(id);
                    let queued = ClaimProgress::read(&c, &id)
                        .await?
                        .operation
                        .map(|op| op.id);
                    let progress = watch_claim(&c, &id, |p| {
                        p.operation
                            .as_ref()
                            .is_none_or(|op| Some(&op.id) != queued.as_ref() || ended(op))
                    })
                    .await?;
                    print(output::object(
                        format,
                        &serde_json::to_value(&progress.claim)?,
                    ));
                    if let Some(op) = progress
                        .operation
                        .filter(|op| op.status == OperationStatus::Failed)
                    {
                        bail!(
                            "powering the claim's host {state} failed: {}",
                            op.error.as_deref().unwrap_or("")
                        );
                    }
                }
                ClaimCommand::Delete { id, wait } => {
                    c.delete(&format!("/v1/claims/{}", seg(&id)?)).await?;
                    if wait {
                        watch_release(&c, &ClaimId::from(id.as_str())).await?;
                        eprintln!("released claim {id}: its host was deprovisioned");
                    } else {
                        eprintln!("releasing claim {id}: its host is being deprovisioned");
                    }
                }
                ClaimCommand::Operations { id } => {
                    let items = c
                        .list(&format!("/v1/claims/{}/operations", seg(&id)?))
                        .await?;
                    print(output::list(format, &items, OPERATION_COLUMNS));
                }
                ClaimCommand::Watch { id } => {
                    let claim = watch_claim(&c, &ClaimId::from(id), ClaimProgress::settled)
                        .await?
                        .claim;
                    print(output::object(format, &serde_json::to_value(&claim)?));
                    settled_well(&claim)?;
                }
                ClaimCommand::Rendered { id } => {
                    let r = c.get(&format!("/v1/claims/{}/rendered", seg(&id)?)).await?;
                    print(output::pretty(&r));
                }
                ClaimCommand::ConfigDrive { id, expires_in } => {
                    let drive = c
                        .post(
                            &format!("/v1/claims/{}/config_drive", seg(&id)?),
                            &ConfigDriveCreate {
                                phase: None,
                                expires_in,
                            },
                        )
                        .await?;
                    print(output::object(format, &drive));
                }
            }
        }
        Command::Backup { file } => {
            anyhow::ensure!(
                !file.exists(),
                "{} exists: give a new file name",
                file.display()
            );
            let c = Client::from_env(url)?;
            let bytes = c
                .download("/v1/admin/backup", &file, |head| {
                    anyhow::ensure!(
                        head.starts_with(b"SQLite format 3\0"),
                        "the server sent something that is not an SQLite database: nothing saved"
                    );
                    Ok(())
                })
                .await?;
            println!("saved {bytes} bytes to {}", file.display());
        }
        Command::Events {
            kind,
            claim,
            host,
            after,
        } => {
            let c = Client::from_env(url)?;
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            for (key, value) in [("kind", kind), ("claim", claim), ("host", host)] {
                if let Some(value) = value {
                    query.append_pair(key, &value);
                }
            }
            if let Some(after) = after {
                query.append_pair("after", &after.to_string());
            }
            let mut events = c.events(&format!("/v1/events?{}", query.finish())).await?;
            loop {
                let event = events.next().await?;
                println!("{}", serde_json::to_string(&event.data)?);
            }
        }
        Command::Operation(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                OperationCommand::List {
                    status,
                    kind,
                    host,
                    pod_manager,
                    claim,
                } => {
                    let mut query = url::form_urlencoded::Serializer::new(String::new());
                    for (key, value) in [
                        ("status", status),
                        ("kind", kind),
                        ("host", host),
                        ("pod_manager", pod_manager),
                        ("claim", claim),
                    ] {
                        if let Some(value) = value {
                            query.append_pair(key, &value);
                        }
                    }
                    let path = format!("/v1/operations?{}", query.finish());
                    print(output::list(
                        format,
                        &c.list(&path).await?,
                        OPERATION_COLUMNS,
                    ));
                }
                OperationCommand::Show { id } => {
                    print(output::object(
                        format,
                        &c.get(&format!("/v1/operations/{}", seg(&id)?)).await?,
                    ));
                }
                OperationCommand::Watch { id } => {
                    let op = watch_operation(&c, &OperationId::from(id)).await?;
                    print(output::object(format, &serde_json::to_value(&op)?));
                    if op.status == OperationStatus::Failed {
                        bail!(
                            "the operation failed: {}",
                            op.error.as_deref().unwrap_or("")
                        );
                    }
                }
            }
        }
        Command::Task(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                TaskCommand::List => {
                    let tasks: TaskList = c.get_view("/v1/admin/tasks").await?;
                    let items = tasks
                        .items
                        .iter()
                        .map(serde_json::to_value)
                        .collect::<Result<Vec<_>, _>>()?;
                    print(output::list(format, &items, TASK_COLUMNS));
                }
                TaskCommand::Run { name } => {
                    let path = format!("/v1/admin/tasks/{}/run", seg(&name)?);
                    print(output::object(format, &c.post(&path, &json!({})).await?));
                }
            }
        }
        Command::Pool(cmd) => {
            let c = Client::from_env(url)?;
            match cmd {
                PoolCommand::List => {
                    print(output::list(
                        format,
                        &c.list("/v1/ip_pools").await?,
                        POOL_COLUMNS,
                    ));
                }
                PoolCommand::Show { id } => {
                    print(output::object(
                        format,
                        &c.get(&format!("/v1/ip_pools/{}", seg(&id)?)).await?,
                    ));
                }
                PoolCommand::Create {
                    name,
                    ranges,
                    prefix,
                    gateway,
                    dns_servers,
                    pod_manager,
                    plugin,
                    plugin_config,
                } => {
                    let ranges = ranges
                        .iter()
                        .map(|r| match r.split_once('-') {
                            Some((start, end)) => IpRangeParams {
                                start: Some(start.into()),
                                end: Some(end.into()),
                                subnet: None,
                            },
                            None => IpRangeParams {
                                subnet: Some(r.clone()),
                                ..IpRangeParams::default()
                            },
                        })
                        .collect();
                    let plugin = match plugin {
                        Some(name) => Some(PluginBindingParams {
                            name,
                            config: Some(match plugin_config {
                                Some(text) => serde_json::from_str(&text)
                                    .context("--plugin-config is not JSON")?,
                                None => json!({}),
                            }),
                            ..PluginBindingParams::default()
                        }),
                        None => None,
                    };
                    let body = IpPoolCreate {
                        name,
                        ranges,
                        prefix,
                        gateway,
                        dns_servers,
                        reserved: Vec::new(),
                        pre_allocations: BTreeMap::new(),
                        plugin,
                        pod_manager: pod_manager.map(Into::into),
                        tenants: Vec::new(),
                    };
                    print(output::object(
                        format,
                        &c.post("/v1/ip_pools", &body).await?,
                    ));
                }
                PoolCommand::Delete { id } => {
                    c.delete(&format!("/v1/ip_pools/{}", seg(&id)?)).await?;
                    eprintln!("deleted pool {id}");
                }
                PoolCommand::Claim {
                    pool,
                    owner,
                    address,
                } => {
                    let body = IpClaimCreate { owner, address };
                    let claim = c
                        .post(&format!("/v1/ip_pools/{}/claims", seg(&pool)?), &body)
                        .await?;
                    print(output::object(format, &claim));
                }
                PoolCommand::Claims { pool } => {
                    let items = c
                        .list(&format!("/v1/ip_pools/{}/claims", seg(&pool)?))
                        .await?;
                    print(output::list(format, &items, IP_CLAIM_COLUMNS));
                }
                PoolCommand::Release { pool, claim } => {
                    c.delete(&format!(
                        "/v1/ip_pools/{}/claims/{}",
                        seg(&pool)?,
                        seg(&claim)?
                    ))
                    .await?;
                    eprintln!("released {claim}");
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::seg;

    #[test]
    fn path_segments_cannot_leave_their_route() {
        assert_eq!(seg("0192-ab_c~").unwrap(), "0192-ab_c~");
        assert_eq!(seg("a/b c?d").unwrap(), "a%2Fb%20c%3Fd");
        assert_eq!(seg("1.2").unwrap(), "1%2E2");
        assert!(seg("..").is_err() && seg(".").is_err() && seg("").is_err());
    }
}
