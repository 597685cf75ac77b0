//! The durable-operations worker's own state in this process: its settings, who it is in a
//! lease, and how many operations it runs now. The worker itself is `operations/mod.rs`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use podium_types::OperationId;
use tokio::sync::Notify;

/// How the worker runs operations; `podium serve` flags set it.
#[derive(Clone, Debug)]
pub struct OperationSettings {
    /// How long a lease lasts unless renewed (renewed every third of it).
    pub lease: Duration,
    /// The first retry's delay; each next one doubles it, up to a minute.
    pub retry_base: Duration,
    /// Tries before a transient failure becomes the operation's end.
    pub max_attempts: u32,
    /// Operations of one pod manager's shared service that run at once, across every process
    /// (a host with its own BMC is not counted), where its `limits.service` is not set.
    pub per_pod_manager: usize,
}

impl Default for OperationSettings {
    fn default() -> OperationSettings {
        OperationSettings {
            lease: Duration::from_secs(30),
            retry_base: Duration::from_secs(1),
            max_attempts: 6,
            per_pod_manager: 8,
        }
    }
}

/// The worker's state in this process.
#[derive(Debug)]
pub(crate) struct Operations {
    /// Who this process is in `lease_owner`.
    pub(crate) worker_id: String,
    pub(crate) settings: RwLock<OperationSettings>,
    /// Operations this process runs now.
    pub(super) running: AtomicUsize,
    /// The tasks running them, to stop those still running when a shutdown's grace ends.
    pub(super) tasks: Mutex<HashMap<OperationId, tokio::task::JoinHandle<()>>>,
    /// Set when the process shuts down: nothing more is leased.
    pub(super) draining: AtomicBool,
    /// Held (shared) from the check of `draining` until a leased operation's task is spawned;
    /// a shutdown takes it alone after setting `draining`, so no lease is under way when it
    /// counts what runs.
    pub(super) leasing: tokio::sync::RwLock<()>,
    /// Woken whenever an operation of this process ends.
    pub(super) ended: Notify,
}

impl Default for Operations {
    fn default() -> Operations {
        Operations {
            worker_id: format!("worker-{}", crate::data::new_id()),
            settings: RwLock::new(OperationSettings::default()),
            running: AtomicUsize::new(0),
            tasks: Mutex::new(HashMap::new()),
            draining: AtomicBool::new(false),
            leasing: tokio::sync::RwLock::new(()),
            ended: Notify::new(),
        }
    }
}
