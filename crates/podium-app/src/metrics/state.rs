//! The process's metrics, as `Podium` holds them (`mod.rs` serves them): the registry every
//! crate adds its own to (the runtime's plugin calls and endpoint requests, the store's token
//! cache, the API's requests, the operations counted here), and the gauges read from the
//! database at each scrape (hosts by state and power state, operations queued and running, pool
//! usage), so every replica on one PostgreSQL database reports the same fleet.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

use podium_types::OperationKind;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AttemptLabels {
    kind: &'static str,
    /// `succeeded`, `retry` (a transient failure, tried again later) or `failed`.
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct HostLabels {
    /// `system` or `chassis`.
    pub(super) kind: String,
    pub(super) state: String,
    pub(super) power_state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct OperationLabels {
    pub(super) kind: String,
    pub(super) status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct PoolLabels {
    pub(super) pool: String,
    /// `allocated`, `pre_allocated` or `free`.
    pub(super) usage: &'static str,
}

/// How an attempt at an operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    Succeeded,
    Retry,
    Failed,
}

/// What the application counts, and the registry of the process.
#[derive(Debug)]
pub(crate) struct Metrics {
    pub(super) registry: std::sync::Mutex<Registry>,
    /// One scrape refreshes the gauges at a time.
    pub(super) scrape: tokio::sync::Mutex<()>,
    attempts: Family<AttemptLabels, Counter>,
    attempt_seconds: Family<KindLabels, Histogram, fn() -> Histogram>,
    pub(super) hosts: Family<HostLabels, Gauge>,
    pub(super) operations: Family<OperationLabels, Gauge>,
    /// Counts past 2^63 (IPv6 pools) as floats.
    pub(super) pool_addresses: Family<PoolLabels, Gauge<f64, AtomicU64>>,
}

impl Metrics {
    pub(crate) fn new(
        datastore: &crate::data::Datastore,
        runtime: &podium_runtime::Runtime,
    ) -> Metrics {
        let metrics = Metrics {
            registry: std::sync::Mutex::new(Registry::default()),
            scrape: tokio::sync::Mutex::new(()),
            attempts: Family::default(),
            attempt_seconds: Family::new_with_constructor(podium_runtime::latency_histogram),
            hosts: Family::default(),
            operations: Family::default(),
            pool_addresses: Family::default(),
        };
        let mut registry = metrics.registry.lock().expect("metrics registry poisoned");
        runtime.register_metrics(&mut registry);
        datastore.register_metrics(&mut registry);
        registry.register(
            "podium_operation_attempts",
            "Attempts at operations by kind and how they ended (succeeded, retry, failed)",
            metrics.attempts.clone(),
        );
        registry.register_with_unit(
            "podium_operation_attempt_duration",
            "How long attempts at operations took, by kind",
            Unit::Seconds,
            metrics.attempt_seconds.clone(),
        );
        registry.register(
            "podium_hosts",
            "Hosts by kind (system, chassis), the state they show (maintenance over any) and \
             power state",
            metrics.hosts.clone(),
        );
        registry.register(
            "podium_operations",
            "Operations queued and running, by kind",
            metrics.operations.clone(),
        );
        registry.register(
            "podium_pool_addresses",
            "Addresses of each IP pool: allocated, pre-allocated (to an owner that has not \
             claimed it yet) and free",
            metrics.pool_addresses.clone(),
        );
        drop(registry);
        metrics
    }

    /// An attempt at an operation of `kind` ended after `took`.
    pub(crate) fn attempt(&self, kind: OperationKind, took: Duration, outcome: Attempt) {
        let kind = kind.as_str();
        self.attempt_seconds
            .get_or_create(&KindLabels { kind })
            .observe(took.as_secs_f64());
        let outcome = match outcome {
            Attempt::Succeeded => "succeeded",
            Attempt::Retry => "retry",
            Attempt::Failed => "failed",
        };
        self.attempts
            .get_or_create(&AttemptLabels { kind, outcome })
            .inc();
    }
}
