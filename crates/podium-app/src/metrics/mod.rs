//! `GET /metrics`, in the OpenMetrics text format: every crate's metrics in one registry
//! (`state.rs`), with the gauges read from the database at each scrape (hosts by state and power
//! state, operations queued and running, pool usage), so every replica on one PostgreSQL
//! database reports the same fleet.

pub(crate) mod state;

use prometheus_client::registry::Registry;

use self::state::{HostLabels, OperationLabels, PoolLabels};
use crate::app::Podium;
use crate::auth::Caller;
use crate::error::Error;

impl Podium {
    /// Adds metrics of another part of the process (the API's requests) to the registry.
    pub fn metrics_register(&self, register: impl FnOnce(&mut Registry)) {
        register(
            &mut self
                .inner
                .metrics
                .registry
                .lock()
                .expect("metrics registry poisoned"),
        );
    }

    /// `GET /metrics`: every metric of the process, in the OpenMetrics text format, the gauges
    /// read from the database now. `None` as the caller: a listener the admin opened for
    /// scrapers without a token.
    pub async fn metrics_text(&self, caller: Option<&Caller>) -> Result<String, Error> {
        if let Some(caller) = caller {
            caller.require_admin_read()?;
        }
        let metrics = &self.inner.metrics;
        let _scrape = metrics.scrape.lock().await;
        let hosts = self.datastore().host_counts().await?;
        let operations = self.datastore().operation_counts().await?;
        let pools = self.ip_pool_usages().await?;
        metrics.hosts.clear();
        for (kind, state, power_state, n) in hosts {
            metrics
                .hosts
                .get_or_create(&HostLabels {
                    kind,
                    state,
                    power_state,
                })
                .set(n);
        }
        metrics.operations.clear();
        for (kind, status, n) in operations {
            metrics
                .operations
                .get_or_create(&OperationLabels { kind, status })
                .set(n);
        }
        metrics.pool_addresses.clear();
        for (pool, usage) in pools {
            for (label, n) in [
                ("allocated", usage.allocated),
                ("pre_allocated", usage.pre_allocated),
                ("free", usage.free),
            ] {
                metrics
                    .pool_addresses
                    .get_or_create(&PoolLabels {
                        pool: pool.clone(),
                        usage: label,
                    })
                    .set(n as f64);
            }
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(
            &mut text,
            &metrics.registry.lock().expect("metrics registry poisoned"),
        )
        .map_err(|e| Error::Internal(anyhow::anyhow!("encoding the metrics: {e}")))?;
        Ok(text)
    }
}
