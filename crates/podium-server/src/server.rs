//! Starting Podium: open the datastore, bootstrap the admin token, start the runtime, register
//! plugins, and serve the API until shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use podium_app::app::{Open, Podium};
use podium_runtime::{Runtime, RuntimeConfig};
use podium_types::Secret;

/// Everything `podium serve` is configured with.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    /// `None` runs on the embedded SQLite database in `data_dir`.
    pub database_url: Option<Secret>,
    pub plugin_dir: Option<PathBuf>,
    pub admin_token: Option<Secret>,
    pub plugin_timeout: Duration,
    /// The deadline of a driver's `discover` (every system of a pod manager), at least
    /// `plugin_timeout`.
    pub discover_timeout: Duration,
    pub plugin_memory: usize,
    /// Plugin instances alive at once in this process (each holds its memory while its call
    /// waits on its endpoint); further calls wait for one.
    pub plugin_instances: u32,
    /// Plugin calls whose code runs at once, in turn between pod managers.
    pub plugin_lanes: usize,
    /// 0.2.0 driver calls in flight at once (each waits on its endpoint holding no instance):
    /// also the most operations this process runs at once.
    pub plugin_calls: u32,
    /// Plugins' requests in flight at once (a socket each): `podium serve` sets half its open
    /// files limit.
    pub plugin_requests: usize,
    /// Connections to BMCs kept open idle at once, for a BMC's next request (one a BMC, for
    /// a few seconds); past it, a BMC without one has its connection closed after each answer.
    pub plugin_idle_connections: usize,
    /// Requests one 0.2.0 driver call sends its endpoint at once (a step's fan-out), where its
    /// pod manager's `limits.requests` does not say.
    pub plugin_parallel_requests: usize,
    /// How long a call waits for an instance before it fails as busy (not part of its deadline).
    pub plugin_slot_wait: Duration,
    /// What one plugin call may send to its endpoint (a discovery: `HttpBudget::DISCOVERY`).
    pub plugin_http_budget: podium_runtime::HttpBudget,
    /// Where compiled plugins are cached; `data_dir/compiled` when `None`.
    pub compiled_dir: Option<PathBuf>,
    /// The key that seals stored credentials; `data_dir/secret.key` (created if missing) when `None`.
    pub secret_key_file: Option<PathBuf>,
    /// How often every pod manager is probed.
    pub probe_interval: Duration,
    /// How often every online pod manager's inventory is synced.
    pub sync_interval: Duration,
    /// The base URL BMCs reach this process at; the address each caller used when `None`.
    pub public_url: Option<url::Url>,
    /// How durable operations are leased, retried and limited.
    pub operations: podium_app::operations::OperationSettings,
    /// A second listener serving `/metrics` with no token, and nothing else.
    pub metrics_listen: Option<SocketAddr>,
    /// Serve the API over TLS with this certificate and key.
    pub tls: Option<crate::listen::TlsFiles>,
    /// A plain-HTTP listener serving config drive downloads, and nothing else (for BMCs that
    /// do not trust the API's certificate).
    pub config_drive_listen: Option<SocketAddr>,
    /// Accept bearer tokens over plain HTTP on a listener that is not loopback.
    pub allow_insecure_http: bool,
    /// Who may read `/metrics` on the API's listener.
    pub metrics_access: crate::api::MetricsAccess,
    /// How long running operations may take to finish at shutdown before they are handed back.
    pub shutdown_grace: Duration,
    /// How long audit events are kept; `None` keeps them for ever.
    pub audit_retention: Option<Duration>,
    /// How long change events are kept (`GET /v1/events` resumes within it): a day.
    pub event_retention: Duration,
    /// `GET /v1/events` streams one token may hold open in this process.
    pub event_streams_per_token: usize,
    /// Whether Redfish event subscriptions may push to loopback and link-local addresses (a
    /// receiver on this machine); refused by default.
    pub event_destinations_local: bool,
    /// The plugins built with the binary, `(name, component)`, registered at start.
    pub bundled: &'static [(&'static str, &'static [u8])],
}

impl ServeConfig {
    pub fn new(listen: SocketAddr, data_dir: PathBuf) -> ServeConfig {
        let defaults = RuntimeConfig::default();
        ServeConfig {
            listen,
            data_dir,
            database_url: None,
            plugin_dir: None,
            admin_token: None,
            plugin_timeout: defaults.call_timeout,
            discover_timeout: defaults.discover_timeout,
            plugin_memory: defaults.memory_limit,
            plugin_instances: defaults.max_instances,
            plugin_lanes: defaults.lanes,
            plugin_calls: defaults.max_calls,
            plugin_requests: defaults.max_requests,
            plugin_idle_connections: defaults.idle_connections,
            plugin_parallel_requests: defaults.parallel_requests,
            plugin_slot_wait: defaults.slot_wait,
            plugin_http_budget: podium_runtime::HttpBudget::CALL,
            bundled: &[],
            metrics_listen: None,
            tls: None,
            config_drive_listen: None,
            allow_insecure_http: false,
            metrics_access: crate::api::MetricsAccess::Token,
            compiled_dir: None,
            secret_key_file: None,
            probe_interval: Duration::from_secs(60),
            sync_interval: Duration::from_secs(600),
            public_url: None,
            operations: podium_app::operations::OperationSettings::default(),
            shutdown_grace: Duration::from_secs(20),
            audit_retention: Some(podium_app::audit::DEFAULT_RETENTION),
            event_retention: podium_app::events::RETENTION,
            event_streams_per_token: podium_app::events::STREAMS_PER_TOKEN,
            event_destinations_local: false,
        }
    }
}

/// A started Podium: the platform and the bound address.
#[derive(Debug)]
pub struct Started {
    pub podium: Podium,
    pub listener: tokio::net::TcpListener,
    /// The scrapers' listener, where the admin asked for one.
    pub metrics_listener: Option<tokio::net::TcpListener>,
    /// The config drives' plain-HTTP listener, where the admin asked for one.
    pub config_drive_listener: Option<tokio::net::TcpListener>,
    pub metrics_access: crate::api::MetricsAccess,
    pub shutdown_grace: Duration,
    /// The API's certificate and where it comes from, when it serves TLS.
    tls: Option<(
        axum_server::tls_rustls::RustlsConfig,
        crate::listen::TlsFiles,
    )>,
    /// Whether a bearer token is refused on the API's listener: it is plain HTTP, not loopback,
    /// and the admin did not allow it.
    refuse_tokens_in_clear: bool,
}

/// Opens everything and binds the listener; `serve` then runs it.
pub async fn start(config: &ServeConfig) -> anyhow::Result<Started> {
    std::fs::create_dir_all(&config.data_dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot create the data directory {}: {e}",
            config.data_dir.display()
        )
    })?;
    let runtime = Runtime::new(RuntimeConfig {
        call_timeout: config.plugin_timeout,
        discover_timeout: config.discover_timeout,
        memory_limit: config.plugin_memory,
        max_instances: config.plugin_instances,
        lanes: config.plugin_lanes,
        max_calls: config.plugin_calls,
        max_requests: config.plugin_requests,
        idle_connections: config.plugin_idle_connections,
        parallel_requests: config.plugin_parallel_requests,
        slot_wait: config.plugin_slot_wait,
        http_budget: Some(config.plugin_http_budget),
        cache_dir: Some(
            config
                .compiled_dir
                .clone()
                .unwrap_or_else(|| config.data_dir.join("compiled")),
        ),
        ..RuntimeConfig::default()
    })?;
    if !runtime.pooling() {
        tracing::warn!("plugin instances are allocated on demand: calls are slower");
    }
    let key_file = config
        .secret_key_file
        .clone()
        .unwrap_or_else(|| config.data_dir.join("secret.key"));
    let podium = Podium::open(Open {
        database_url: config.database_url.as_ref(),
        data_dir: &config.data_dir,
        admin_token: config.admin_token.clone(),
        secret_key_file: &key_file,
        runtime,
    })
    .await?;
    if let Some(url) = &config.public_url {
        podium.set_public_url(url.clone());
    }
    podium.set_operation_settings(config.operations.clone());
    podium.set_audit_retention(config.audit_retention);
    podium.set_event_retention(config.event_retention);
    podium.set_event_streams_per_token(config.event_streams_per_token);
    podium.set_event_destinations_local(config.event_destinations_local);
    podium
        .plugins_register_at_start(config.bundled, config.plugin_dir.as_deref())
        .await?;
    // The certificate first: a bad one stops the start before anything listens.
    let tls = match &config.tls {
        Some(files) => Some((files.load().await?, files.clone())),
        None => None,
    };
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    let addr = listener.local_addr()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let refuse_tokens_in_clear =
        tls.is_none() && !addr.ip().is_loopback() && !config.allow_insecure_http;
    let bind = |addr: Option<SocketAddr>, what: &'static str| async move {
        match addr {
            Some(addr) => tokio::net::TcpListener::bind(addr)
                .await
                .map(Some)
                .map_err(|e| anyhow::anyhow!("cannot listen for {what} on {addr}: {e}")),
            None => Ok(None),
        }
    };
    let metrics_listener = bind(config.metrics_listen, "metrics").await?;
    let config_drive_listener = bind(config.config_drive_listen, "config drives").await?;
    let download = match &config_drive_listener {
        Some(l) => (format!("http://{}", l.local_addr()?), true),
        None => (format!("{scheme}://{addr}"), false),
    };
    if config.public_url.is_none()
        && let Ok(url) = url::Url::parse(&download.0)
        && url
            .host_str()
            .is_some_and(|h| h == "0.0.0.0" || h == "[::]")
    {
        tracing::warn!(listener = %download.0, "no --public-url: config drives a provisioning inserts are offered at the address bound, which no BMC can reach; set --public-url to the address BMCs use");
    }
    podium.set_download_listener(podium_app::app::DownloadListener {
        url: url::Url::parse(&download.0)?,
        dedicated: download.1,
    });
    podium.background_start(podium_app::background::Intervals {
        probe: config.probe_interval,
        sync: config.sync_interval,
        housekeeping: config.probe_interval,
        leasing: std::time::Duration::from_millis(500),
    });
    Ok(Started {
        podium,
        listener,
        metrics_listener,
        config_drive_listener,
        metrics_access: config.metrics_access,
        shutdown_grace: config.shutdown_grace,
        tls,
        refuse_tokens_in_clear,
    })
}

/// Serves the API until `shutdown` resolves, then shuts down: the listeners stop accepting and
/// finish the requests under way while the operations worker leases nothing more, lets running
/// operations finish for up to the grace and hands back the rest.
pub async fn serve(
    started: Started,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    use futures::FutureExt;
    let shutdown = shutdown.boxed().shared();
    let podium = started.podium;
    let addr = started.listener.local_addr()?;
    let (tls, url) = match started.tls {
        Some((config, files)) => {
            files.watch(config.clone());
            (Some(config), format!("https://{addr}"))
        }
        None => (None, format!("http://{addr}")),
    };
    tracing::info!(%addr, %url, "podium is serving");
    if started.refuse_tokens_in_clear {
        tracing::warn!(%addr, "plain HTTP on an address that is not loopback: requests with a bearer token are refused (serve TLS with --tls-cert and --tls-key, or allow it with --allow-insecure-http)");
    }
    let app = crate::api::router(
        podium.clone(),
        crate::api::RouterOptions {
            metrics_access: started.metrics_access,
            refuse_tokens_in_clear: started.refuse_tokens_in_clear,
        },
    );
    let mut listeners = vec![crate::listen::serve(
        started.listener,
        tls,
        app,
        shutdown.clone(),
    )];
    if let Some(listener) = started.metrics_listener {
        tracing::info!(addr = %listener.local_addr()?, "serving /metrics to scrapers");
        let app = crate::api::metrics_router(podium.clone());
        listeners.push(crate::listen::serve(listener, None, app, shutdown.clone()));
    }
    if let Some(listener) = started.config_drive_listener {
        tracing::info!(addr = %listener.local_addr()?, "serving config drives over plain HTTP");
        let app = crate::api::config_drive_router(podium.clone());
        listeners.push(crate::listen::serve(listener, None, app, shutdown.clone()));
    }
    let grace = started.shutdown_grace;
    let work = async move {
        shutdown.await;
        podium.shutdown(grace).await;
    };
    let listeners = futures::future::try_join_all(listeners);
    tokio::pin!(listeners, work);
    tokio::select! {
        // A listener that fails ends the process at once (its operations are taken over when
        // their leases expire); listeners that end did so at the shutdown.
        served = &mut listeners => {
            served?;
            work.await;
        }
        () = &mut work => {
            listeners.await?;
        }
    }
    tracing::info!("podium stopped");
    Ok(())
}
