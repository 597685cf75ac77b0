//! `podium serve`: runs the platform.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use podium_server::server::{self, ServeConfig};
use podium_types::Secret;

/// `podium serve`, parsed on its own so its help shows only its options.
#[derive(Debug, clap::Parser)]
#[command(
    name = "podium serve",
    version,
    about = "Serve Podium's HTTP API, with the plugins built into this binary"
)]
pub(crate) struct ServeCli {
    #[command(flatten)]
    pub(crate) args: ServeArgs,
    /// A TOML file of settings: each key a flag of this command (`listen = "0.0.0.0:8080"`,
    /// `plugin-timeout = 10`, `log-json = true`); flags and environment variables override it.
    #[arg(long, env = "PODIUM_CONFIG_FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Print the configuration in effect (as a `--config` file, without secrets) and exit.
    #[arg(long)]
    pub(crate) print_config: bool,
}

/// The settings of `podium serve`: flags, environment variables, or keys of a `--config` file.
#[derive(Debug, clap::Args, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "PODIUM_LISTEN")]
    listen: SocketAddr,
    /// Serve the API over TLS with this certificate chain (PEM, leaf first); reloaded on SIGHUP
    /// and when the file changes.
    #[arg(long, env = "PODIUM_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, env = "PODIUM_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Also listen on this address over plain HTTP for BMCs downloading config drives and for
    /// the hosts' deploy agents, and serve nothing else there; config drive URLs and the agents'
    /// API URL then point at it (unless --public-url is set).
    #[arg(long, env = "PODIUM_CONFIG_DRIVE_LISTEN")]
    config_drive_listen: Option<SocketAddr>,
    /// Accept bearer tokens over plain HTTP on an address that is not loopback (refused by
    /// default: the token would cross the network unencrypted).
    #[arg(long, env = "PODIUM_ALLOW_INSECURE_HTTP")]
    allow_insecure_http: bool,
    /// Directory for the embedded database, compiled plugins and the admin token.
    #[arg(long, default_value = "podium-data", env = "PODIUM_DATA_DIR")]
    data_dir: PathBuf,
    /// A PostgreSQL URL (`postgres://...`) to use instead of the embedded SQLite database.
    #[arg(long, env = "PODIUM_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// A directory of `.wasm` plugins to register at start.
    #[arg(long, env = "PODIUM_PLUGIN_DIR")]
    plugin_dir: Option<PathBuf>,
    /// Deadline of one plugin call, in seconds.
    #[arg(long, default_value_t = 10.0, env = "PODIUM_PLUGIN_TIMEOUT")]
    plugin_timeout: f64,
    /// Deadline of a driver's discovery of every system of a pod manager, in seconds.
    #[arg(long, default_value_t = 600.0, env = "PODIUM_DISCOVER_TIMEOUT")]
    discover_timeout: f64,
    /// Memory limit of one plugin call, in MiB.
    #[arg(long, default_value_t = 64, env = "PODIUM_PLUGIN_MEMORY_MIB")]
    plugin_memory_mib: usize,
    /// Plugin instances alive at once in this process; further calls wait for one, up to a
    /// minute, then fail as busy. A driver of contract 0.1.0 holds one (about 0.25 MiB for a
    /// driver like the bundled one, measured) for its whole call, while it waits on its
    /// endpoint; a 0.2.0 driver, such as the bundled one, only while one step of its call runs.
    #[arg(long, default_value_t = 256, env = "PODIUM_PLUGIN_INSTANCES")]
    plugin_instances: u32,
    /// Plugin calls whose code runs at once, handed out in turn between pod managers (a call
    /// gives its turn up every millisecond and whenever it waits on the host): fewer than the
    /// machine's threads, so plugins never hold every thread the API and the leasing run on.
    /// Default: one fewer than the machine's threads, at least 1.
    #[arg(long, env = "PODIUM_PLUGIN_LANES")]
    plugin_lanes: Option<usize>,
    /// Driver calls (of contract 0.2.0) in flight at once in this process, each waiting on its
    /// BMC with its state and its sockets, no instance: the most BMC exchanges, and so the most
    /// operations, this process runs at once.
    #[arg(long, default_value_t = 4096, env = "PODIUM_PLUGIN_CALLS")]
    plugin_calls: u32,
    /// Requests one driver call (of contract 0.2.0) sends its BMC at once: how far a step's
    /// reads fan out (a sync's reads of a service's systems). A pod manager's
    /// `limits.requests` sets it for its shared service.
    #[arg(long, default_value_t = 16, env = "PODIUM_PLUGIN_PARALLEL_REQUESTS")]
    plugin_parallel_requests: usize,
    /// Connections to BMCs kept open idle at once, process-wide, so a BMC's next request (the
    /// next step of a call, the next operation) reuses its connection: one a BMC, closed after 5 s
    /// idle. Past the bound, a BMC without one has its connection closed after each answer
    /// (a socket and about 25 KiB of buffers each, BENCHMARKS.md).
    #[arg(long, default_value_t = 1024, env = "PODIUM_PLUGIN_IDLE_CONNECTIONS")]
    plugin_idle_connections: usize,
    /// Requests one plugin call may send to its endpoint (a discovery of every system: a
    /// million); past it the call fails.
    #[arg(long, default_value_t = podium_runtime::HttpBudget::CALL.requests, env = "PODIUM_PLUGIN_HTTP_REQUESTS")]
    plugin_http_requests: u64,
    /// Bytes of request and response bodies one plugin call may exchange with its endpoint, in
    /// MiB (a discovery: 8 GiB).
    #[arg(long, default_value_t = podium_runtime::HttpBudget::CALL.bytes >> 20, env = "PODIUM_PLUGIN_HTTP_MIB")]
    plugin_http_mib: u64,
    /// File holding the 256-bit key that seals stored credentials (64 hex digits); default
    /// DATA_DIR/secret.key, created on first start. Every process on one database needs the same.
    #[arg(long, env = "PODIUM_SECRET_KEY_FILE")]
    secret_key_file: Option<PathBuf>,
    /// Seconds between status probes of every pod manager.
    #[arg(long, default_value_t = 60, env = "PODIUM_PROBE_INTERVAL")]
    probe_interval: u64,
    /// Seconds between inventory syncs of every pod manager.
    #[arg(long, default_value_t = 600, env = "PODIUM_SYNC_INTERVAL")]
    sync_interval: u64,
    /// Directory of the compiled-plugin cache; default DATA_DIR/compiled.
    #[arg(long, env = "PODIUM_COMPILED_DIR")]
    compiled_dir: Option<PathBuf>,
    /// Log as JSON lines instead of text.
    #[arg(long, env = "PODIUM_LOG_JSON")]
    log_json: bool,
    /// Also listen on this address for scrapers: `GET /metrics` with no token, nothing else.
    #[arg(long, env = "PODIUM_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    /// Serve `GET /metrics` on the API's listener with no token (by default it takes an admin
    /// token, read-only will do).
    #[arg(long, env = "PODIUM_METRICS_PUBLIC")]
    metrics_public: bool,
    /// The base URL BMCs download config drives from (`http://podium.example:8080`); default:
    /// the address each API caller used.
    #[arg(long, env = "PODIUM_PUBLIC_URL")]
    #[serde(serialize_with = "url_text")]
    public_url: Option<url::Url>,
    /// Seconds an operation's lease lasts unless renewed; a dead process's operations are taken
    /// over after it.
    #[arg(long, default_value_t = 30.0, env = "PODIUM_OPERATION_LEASE")]
    operation_lease: f64,
    /// Seconds before the first retry of an operation that failed transiently (doubling).
    #[arg(long, default_value_t = 1.0, env = "PODIUM_OPERATION_RETRY_BASE")]
    operation_retry_base: f64,
    /// Tries before a transient failure ends an operation.
    #[arg(long, default_value_t = 6, env = "PODIUM_OPERATION_ATTEMPTS")]
    operation_attempts: u32,
    /// Operations of one pod manager's shared Redfish service that run at once, across every
    /// process on the database (a host with its own BMC runs one at a time, not counted here).
    #[arg(long, default_value_t = 8, env = "PODIUM_OPERATIONS_PER_POD_MANAGER")]
    operations_per_pod_manager: usize,
    /// Seconds running operations may take to finish on SIGTERM before they are handed back to
    /// the queue (for another process, or this one restarted, to run at once).
    #[arg(long, default_value_t = 20.0, env = "PODIUM_SHUTDOWN_GRACE")]
    shutdown_grace: f64,
    /// `GET /v1/events` streams one token may hold open in this process (each is a connection
    /// and a task); one more is refused with 429 until one of them ends.
    #[arg(long, default_value_t = podium_app::events::STREAMS_PER_TOKEN, env = "PODIUM_EVENT_STREAMS_PER_TOKEN")]
    event_streams_per_token: usize,
    /// Let Redfish event subscriptions push to loopback and link-local addresses (a receiver on
    /// this machine, or beside it on a link); refused by default, so a tenant cannot aim
    /// Podium's requests at services only the host reaches.
    #[arg(long, env = "PODIUM_EVENT_DESTINATIONS_LOCAL")]
    event_destinations_local: bool,
    /// Days audit events are kept (`GET /v1/audit`); 0 keeps them for ever.
    #[arg(long, default_value_t = 90, env = "PODIUM_AUDIT_RETENTION_DAYS")]
    audit_retention_days: u64,
}

fn init_tracing(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PODIUM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

fn url_text<S: serde::Serializer>(url: &Option<url::Url>, s: S) -> Result<S::Ok, S::Error> {
    match url {
        Some(url) => s.serialize_some(url.as_str()),
        None => s.serialize_none(),
    }
}

/// Raises the soft limit of open files to the hard one, as servers holding a connection per
/// peer do (Go's runtime does it for every program since 1.19): each host's BMC and each API
/// client is a file descriptor, and the usual soft limit of 1,024 is reached at a few hundred
/// hosts with their own BMC.
fn raise_open_files_limit() -> u64 {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    let now = match setrlimit(Resource::Nofile, raised) {
        Ok(()) => {
            tracing::debug!(limit = ?limit.maximum, "open files limit raised");
            limit.maximum
        }
        Err(e) => {
            tracing::warn!(error = %e, limit = ?limit.current,
                "the open files limit could not be raised");
            limit.current
        }
    };
    // None means no limit.
    now.unwrap_or(1 << 20)
}

pub(crate) fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_tracing(args.log_json);
    let open_files = raise_open_files_limit();
    anyhow::ensure!(
        args.plugin_timeout > 0.0 && args.plugin_timeout <= 3600.0,
        "--plugin-timeout must be between 0 and 3600 seconds"
    );
    anyhow::ensure!(
        (1..=4096).contains(&args.plugin_memory_mib),
        "--plugin-memory-mib must be between 1 and 4096"
    );
    let mut config = ServeConfig::new(args.listen, args.data_dir);
    config.bundled = crate::bundled::PLUGINS;
    config.database_url = args.database_url.map(Secret::new);
    config.plugin_dir = args.plugin_dir;
    config.admin_token = std::env::var("PODIUM_ADMIN_TOKEN").ok().map(Secret::new);
    anyhow::ensure!(
        args.discover_timeout > 0.0 && args.discover_timeout <= 86_400.0,
        "--discover-timeout must be between 0 and 86400 seconds"
    );
    config.plugin_timeout = Duration::from_secs_f64(args.plugin_timeout);
    config.discover_timeout = Duration::from_secs_f64(args.discover_timeout);
    config.plugin_memory = args.plugin_memory_mib << 20;
    anyhow::ensure!(
        (1..=10_000).contains(&args.plugin_instances),
        "--plugin-instances must be between 1 and 10000"
    );
    config.plugin_instances = args.plugin_instances;
    if let Some(lanes) = args.plugin_lanes {
        anyhow::ensure!(
            (1..=10_000).contains(&lanes),
            "--plugin-lanes must be between 1 and 10000"
        );
        config.plugin_lanes = lanes;
    }
    anyhow::ensure!(
        (1..=1_000_000).contains(&args.plugin_calls),
        "--plugin-calls must be between 1 and 1000000"
    );
    config.plugin_calls = args.plugin_calls;
    anyhow::ensure!(
        (1..=10_000).contains(&args.plugin_parallel_requests),
        "--plugin-parallel-requests must be between 1 and 10000"
    );
    config.plugin_parallel_requests = args.plugin_parallel_requests;
    // Half the open files for plugins' requests in flight (a socket each), the rest for the
    // idle connections kept (no more than the requests' half), the database, the listeners and
    // the compiled plugins.
    config.plugin_requests = usize::try_from(open_files.saturating_sub(1024) / 2)
        .unwrap_or(usize::MAX)
        .clamp(16, 1 << 16);
    config.plugin_idle_connections = args.plugin_idle_connections.min(config.plugin_requests);
    anyhow::ensure!(
        args.plugin_http_requests >= 1 && (1..=1 << 20).contains(&args.plugin_http_mib),
        "--plugin-http-requests must be at least 1 and --plugin-http-mib between 1 and 1048576"
    );
    config.plugin_http_budget = podium_runtime::HttpBudget {
        requests: args.plugin_http_requests,
        bytes: args.plugin_http_mib << 20,
    };
    config.secret_key_file = args.secret_key_file;
    if let (Some(cert), Some(key)) = (args.tls_cert, args.tls_key) {
        config.tls = Some(podium_server::TlsFiles { cert, key });
    }
    config.config_drive_listen = args.config_drive_listen;
    config.allow_insecure_http = args.allow_insecure_http;
    config.metrics_listen = args.metrics_listen;
    if args.metrics_public {
        config.metrics_access = podium_server::MetricsAccess::Public;
    }
    if args.compiled_dir.is_some() {
        config.compiled_dir = args.compiled_dir;
    }
    anyhow::ensure!(
        args.probe_interval >= 1,
        "--probe-interval must be at least 1 second"
    );
    anyhow::ensure!(
        args.sync_interval >= 1,
        "--sync-interval must be at least 1 second"
    );
    config.probe_interval = Duration::from_secs(args.probe_interval);
    config.sync_interval = Duration::from_secs(args.sync_interval);
    if let Some(url) = &args.public_url {
        anyhow::ensure!(
            matches!(url.scheme(), "http" | "https") && url.has_host(),
            "--public-url must be an http(s) URL with a host"
        );
    }
    config.public_url = args.public_url;
    anyhow::ensure!(
        (0.3..=3600.0).contains(&args.operation_lease),
        "--operation-lease must be between 0.3 and 3600 seconds"
    );
    anyhow::ensure!(
        (0.01..=600.0).contains(&args.operation_retry_base),
        "--operation-retry-base must be between 0.01 and 600 seconds"
    );
    anyhow::ensure!(
        (1..=100).contains(&args.operation_attempts),
        "--operation-attempts must be between 1 and 100"
    );
    anyhow::ensure!(
        (1..=1024).contains(&args.operations_per_pod_manager),
        "--operations-per-pod-manager must be between 1 and 1024"
    );
    config.operations = podium_app::operations::OperationSettings {
        lease: Duration::from_secs_f64(args.operation_lease),
        retry_base: Duration::from_secs_f64(args.operation_retry_base),
        max_attempts: args.operation_attempts,
        per_pod_manager: args.operations_per_pod_manager,
    };
    anyhow::ensure!(
        (0.0..=3600.0).contains(&args.shutdown_grace),
        "--shutdown-grace must be between 0 and 3600 seconds"
    );
    config.shutdown_grace = Duration::from_secs_f64(args.shutdown_grace);
    anyhow::ensure!(
        args.audit_retention_days <= 36_500,
        "--audit-retention-days must be at most 36500 (0 keeps events for ever)"
    );
    anyhow::ensure!(
        (1..=100_000).contains(&args.event_streams_per_token),
        "--event-streams-per-token must be between 1 and 100000"
    );
    config.event_streams_per_token = args.event_streams_per_token;
    config.event_destinations_local = args.event_destinations_local;
    config.audit_retention = (args.audit_retention_days > 0)
        .then(|| Duration::from_secs(args.audit_retention_days * 86_400));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let started = server::start(&config).await?;
        server::serve(started, shutdown_signal()).await
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
