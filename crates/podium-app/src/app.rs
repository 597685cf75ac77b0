//! The application layer: `Podium` holds the datastore, the plugin runtime and the loaded
//! plugins, and every operation of the platform is a method on it that takes the caller first
//! (`plugin_create(&caller, ...)`). Handlers call these; these call the datastore.

use std::sync::Arc;

use crate::ipam::cache::PoolLocks;
use crate::plugins::cache::PluginCache;
use crate::sealing::Sealer;
use podium_runtime::Runtime;
use podium_store::Datastore;
use podium_types::Page;

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
    /// The base URL BMCs reach this process at (config drive URLs), where the admin set one.
    pub(crate) public_url: std::sync::OnceLock<url::Url>,
    /// The URL this process listens on, for BMCs when no public URL is set.
    pub(crate) listen_url: std::sync::OnceLock<url::Url>,
    /// The durable-operations worker of this process.
    pub(crate) operations: crate::operations::worker::Operations,
    /// The periodic tasks of this process (probe, sync, bind, expiry, leasing).
    pub(crate) background: crate::background::handle::Background,
}

impl Podium {
    pub fn new(datastore: Datastore, runtime: Runtime, sealer: Sealer) -> Podium {
        Podium {
            inner: Arc::new(Inner {
                datastore,
                runtime,
                sealer,
                plugins: PluginCache::default(),
                ipam_locks: PoolLocks::default(),
                public_url: std::sync::OnceLock::new(),
                listen_url: std::sync::OnceLock::new(),
                operations: crate::operations::worker::Operations::default(),
                background: crate::background::handle::Background::default(),
            }),
        }
    }

    /// Sets the base URL BMCs reach this process at; only the first call counts.
    pub fn set_public_url(&self, url: url::Url) {
        let _ = self.inner.public_url.set(url);
    }

    /// Records the address this process serves on; only the first call counts.
    pub fn set_listen_addr(&self, addr: std::net::SocketAddr) {
        if let Ok(url) = url::Url::parse(&format!("http://{addr}")) {
            let _ = self.inner.listen_url.set(url);
        }
    }

    pub fn public_url(&self) -> Option<&url::Url> {
        self.inner.public_url.get()
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
