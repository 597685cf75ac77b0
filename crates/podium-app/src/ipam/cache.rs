//! What this process keeps per pool between allocations: the lock that serialises them (the
//! datastore's constraints serialise them across processes), the pool's definition and free
//! space it guards, and the requests waiting for it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use podium_types::IpPoolId;

use crate::error::Error;
use podium_runtime::IpamHost;

use super::space::FreeSpace;

use super::pool::{IpClaim, IpPool};

/// What this process knows of a pool between allocations: its definition and its free space,
/// both derived from the datastore and dropped whenever a commit finds them out of date.
#[derive(Debug)]
pub(crate) struct PoolState {
    pub(super) pool: IpPool,
    pub(super) free: Arc<Mutex<FreeSpace>>,
    pub(super) loaded: Instant,
}

/// One request for an address, waiting for its pool.
pub(crate) struct Job {
    pub(super) owner: String,
    pub(super) host: Option<IpamHost>,
    pub(super) wanted: Option<String>,
    pub(super) reply: tokio::sync::oneshot::Sender<Result<(IpClaim, bool), Error>>,
}

/// A pool's lock, the cached state it guards, and the jobs waiting for it.
#[derive(Debug, Default)]
pub(crate) struct PoolEntry {
    pub(super) state: tokio::sync::Mutex<Option<PoolState>>,
    pub(super) queue: Mutex<Vec<Job>>,
    /// Set while a group runs in a caller's own future: if that caller goes away mid-group,
    /// the cached free space may hold an address marked taken but never committed, so the next
    /// holder of the lock drops the cache.
    pub(super) unfinished: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

/// Per pool, the in-process lock that serialises its allocations (the datastore's constraints
/// serialise them across processes) and the cached state it guards.
#[derive(Debug, Default)]
pub(crate) struct PoolLocks {
    by_pool: Mutex<HashMap<IpPoolId, Arc<PoolEntry>>>,
}

impl PoolLocks {
    pub(super) fn get(&self, pool_id: &IpPoolId) -> Arc<PoolEntry> {
        self.by_pool
            .lock()
            .expect("pool lock map poisoned")
            .entry(pool_id.clone())
            .or_default()
            .clone()
    }

    pub(super) fn forget(&self, pool_id: &IpPoolId) {
        self.by_pool
            .lock()
            .expect("pool lock map poisoned")
            .remove(pool_id);
    }
}
