//! The application layer: `Podium` holds the datastore, the plugin runtime and the loaded
//! plugins, and every operation of the platform is a method on it that takes the caller first
//! (`plugin_create(&caller, ...)`). Handlers call these; these call the datastore.

use std::path::Path;
use std::sync::Arc;

use crate::data::Datastore;
use crate::ipam::cache::PoolLocks;
use crate::plugins::cache::PluginCache;
use crate::sealing::Sealer;
use podium_runtime::Runtime;
use podium_types::{Page, Secret};

use crate::error::Error;

/// The platform. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Podium {
    pub(crate) inner: Arc<Inner>,
}

/// What `Podium` holds; the feature modules reach it as `self.inner`.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) datastore: Datastore,
    pub(crate) runtime: Runtime,
    pub(crate) plugins: PluginCache,
    pub(crate) sealer: Sealer,
    pub(crate) ipam_locks: PoolLocks,
    /// One composition of a pod manager at a time (`composition`).
    pub(crate) compose_locks: crate::composition::locks::ComposeLocks,
    /// The base URL BMCs reach this process at (config drive URLs), where the admin set one.
    pub(crate) public_url: std::sync::OnceLock<url::Url>,
    /// Where this process serves config drive downloads, for BMCs when no public URL is set.
    pub(crate) download_listener: std::sync::OnceLock<DownloadListener>,
    /// The durable-operations worker of this process.
    pub(crate) operations: crate::operations::worker::Operations,
    /// The periodic tasks of this process (probe, sync, bind, expiry, leasing, refresh).
    pub(crate) background: crate::tasks::Background,
    /// The metrics of this process.
    pub(crate) metrics: crate::metrics::state::Metrics,
    /// How long audit events are kept (`Some(None)`: for ever); the default when unset.
    pub(crate) audit_retention: std::sync::OnceLock<Option<std::time::Duration>>,
    /// Event streams open in this process, by token, and their bound.
    pub(crate) event_streams:
        std::sync::OnceLock<std::sync::Arc<crate::events::streams::StreamCounts>>,
    /// Whether event subscriptions may push to local addresses (`subscriptions.rs`).
    pub(crate) event_destinations_local: std::sync::OnceLock<bool>,
    /// The client every delivery posts with (its resolver checks each address), made at the
    /// first delivery.
    pub(crate) event_client: std::sync::OnceLock<reqwest::Client>,
    /// How long change events are kept; a day (the events module's `RETENTION`) when unset.
    pub(crate) event_retention: std::sync::OnceLock<std::time::Duration>,
    /// The audit log's writer (group commits).
    pub(crate) audit: crate::audit::writer::AuditWriter,
    /// The newest event, shared by this process's watchers.
    pub(crate) events: crate::events::clock::EventClock,
    /// How long the last run of the `refresh` task took to read its hosts, in milliseconds: a
    /// run comes that long plus its interval after the last, and takes its share for both.
    pub(crate) refresh_took_ms: std::sync::atomic::AtomicU64,
    /// When this process last tried to read each host's power for a Redfish client
    /// (`redfish.rs`), so a host whose BMC does not answer is not asked on every read.
    pub(crate) redfish_power_tried: crate::redfish::tried::PowerTried,
    /// The full inventories read lately for Redfish clients, which the reads after share.
    pub(crate) redfish_inventories: crate::redfish::inventory::Inventories,
    /// How many lookups and heartbeats each host's deploy agent sent this minute.
    pub(crate) agent_windows: crate::agent::windows::Windows,
}

/// Where a process serves config drive downloads: the API's own listener (`http` or `https`),
/// or a plain-HTTP listener that serves nothing else (`--config-drive-listen`).
#[derive(Clone, Debug)]
pub struct DownloadListener {
    /// `scheme://address:port` as bound.
    pub url: url::Url,
    /// Whether it is a listener of its own, not the API's.
    pub dedicated: bool,
}

/// What a Podium process opens at start (`Podium::open`).
#[derive(Debug)]
pub struct Open<'a> {
    /// `None` runs on the embedded SQLite database in `data_dir`.
    pub database_url: Option<&'a Secret>,
    pub data_dir: &'a Path,
    /// The first admin token, where none exists yet; a generated one is written to
    /// `data_dir/admin.token` when `None`.
    pub admin_token: Option<Secret>,
    /// The key that seals stored credentials (created if missing).
    pub secret_key_file: &'a Path,
    pub runtime: Runtime,
}

impl Podium {
    /// Opens the datastore (migrating it), creates the first admin token if there is none, and
    /// loads the sealing key.
    pub async fn open(open: Open<'_>) -> anyhow::Result<Podium> {
        let datastore = match open.database_url {
            Some(url) => Datastore::open(url.expose()).await?,
            None => Datastore::open_sqlite(open.data_dir).await?,
        };
        if let Some(origin) =
            crate::auth::bootstrap_admin(&datastore, open.admin_token, open.data_dir).await?
        {
            tracing::info!(origin, "created the first admin token");
        }
        let sealer = Sealer::load_or_create(open.secret_key_file)?;
        Ok(Podium::new(datastore, open.runtime, sealer))
    }

    fn new(datastore: Datastore, runtime: Runtime, sealer: Sealer) -> Podium {
        Podium {
            inner: Arc::new(Inner {
                metrics: crate::metrics::state::Metrics::new(&datastore, &runtime),
                datastore,
                runtime,
                sealer,
                plugins: PluginCache::default(),
                ipam_locks: PoolLocks::default(),
                compose_locks: Default::default(),
                public_url: std::sync::OnceLock::new(),
                download_listener: std::sync::OnceLock::new(),
                operations: crate::operations::worker::Operations::default(),
                background: crate::tasks::Background::default(),
                audit_retention: std::sync::OnceLock::new(),
                event_retention: std::sync::OnceLock::new(),
                event_destinations_local: std::sync::OnceLock::new(),
                event_client: std::sync::OnceLock::new(),
                event_streams: std::sync::OnceLock::new(),
                audit: crate::audit::writer::AuditWriter::default(),
                events: crate::events::clock::EventClock::default(),
                refresh_took_ms: std::sync::atomic::AtomicU64::new(0),
                redfish_power_tried: crate::redfish::tried::PowerTried::default(),
                redfish_inventories: crate::redfish::inventory::Inventories::default(),
                agent_windows: crate::agent::windows::Windows::default(),
            }),
        }
    }

    /// The caller an `Authorization` header names (`Bearer <token>`): a token that is known, not
    /// revoked and not expired.
    pub async fn authenticate(&self, header: Option<&str>) -> Result<crate::auth::Caller, Error> {
        crate::auth::authenticate(self.datastore(), header).await
    }

    /// Whether the database answers (`GET /healthz`).
    pub async fn ping(&self) -> Result<(), Error> {
        Ok(self.datastore().ping().await?)
    }

    /// Sets the base URL BMCs reach this process at; only the first call counts.
    pub fn set_public_url(&self, url: url::Url) {
        let _ = self.inner.public_url.set(url);
    }

    /// Records where this process serves config drive downloads; only the first call counts.
    pub fn set_download_listener(&self, listener: DownloadListener) {
        let _ = self.inner.download_listener.set(listener);
    }

    pub fn download_listener(&self) -> Option<&DownloadListener> {
        self.inner.download_listener.get()
    }

    pub fn public_url(&self) -> Option<&url::Url> {
        self.inner.public_url.get()
    }

    /// The base URL BMCs download from: `--public-url`, else the address this process serves
    /// downloads on.
    pub(crate) fn download_base(&self) -> Result<String, Error> {
        self.public_url()
            .or_else(|| self.download_listener().map(|l| &l.url))
            .map(|u| u.as_str().trim_end_matches('/').to_owned())
            .ok_or_else(|| {
                Error::Internal(anyhow::anyhow!(
                    "no URL for BMCs to download from: set --public-url"
                ))
            })
    }

    pub fn datastore(&self) -> &Datastore {
        &self.inner.datastore
    }

    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }
}

/// The page size a list uses when the caller gives none, and the most it may ask for.
pub fn page(limit: Option<u32>, cursor: Option<String>) -> Result<Page, Error> {
    let limit = limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(Error::invalid("limit", "must be between 1 and 1000"));
    }
    Ok(Page { limit, cursor })
}
