//! The application layer: `Podium` holds the datastore, the plugin runtime and the loaded
//! plugins, and every operation of the platform is a method on it that takes the caller first
//! (`plugin_create(&caller, ...)`). Handlers call these; these call the datastore.

use std::sync::Arc;

use crate::ipam::PoolLocks;
use crate::plugins::PluginCache;
use crate::runtime::Runtime;
use crate::sealing::Sealer;
use crate::store::Datastore;

/// The platform. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Podium {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub struct Inner {
    pub(crate) datastore: Datastore,
    pub(crate) runtime: Runtime,
    pub(crate) plugins: PluginCache,
    pub(crate) sealer: Sealer,
    pub(crate) ipam_locks: PoolLocks,
}

impl std::ops::Deref for Podium {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.inner
    }
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
            }),
        }
    }

    pub fn datastore(&self) -> &Datastore {
        &self.datastore
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }
}
