//! What the runtime counts: plugin calls by plugin, export and outcome, with their latency, and
//! the requests plugins send to their endpoints (BMCs, Redfish services) by pod manager and
//! status. `Runtime::register_metrics` adds them to the process's registry.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::CallError;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    plugin: String,
    export: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ExportLabels {
    plugin: String,
    export: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    pod_manager: String,
    /// The HTTP status, or why there was none (`timeout`, `unreachable`, `tls`).
    status: String,
}

/// Latency buckets from 1 ms to about 65 s.
pub fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

#[derive(Clone, Debug)]
pub(crate) struct Metrics {
    calls: Family<CallLabels, Counter>,
    call_seconds: Family<ExportLabels, Histogram, fn() -> Histogram>,
    endpoint_requests: Family<EndpointLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            calls: Family::default(),
            call_seconds: Family::new_with_constructor(latency_histogram),
            endpoint_requests: Family::default(),
        }
    }
}

impl Metrics {
    pub(crate) fn register(&self, registry: &mut Registry) {
        registry.register(
            "podium_plugin_calls",
            "Plugin calls by plugin, export and outcome (ok, deadline, memory_limit, \
             request_limit, malformed, trap, plugin_error, instantiate, wrong_world)",
            self.calls.clone(),
        );
        registry.register_with_unit(
            "podium_plugin_call_duration",
            "How long plugin calls took, by plugin and export",
            Unit::Seconds,
            self.call_seconds.clone(),
        );
        registry.register(
            "podium_endpoint_requests",
            "Requests plugins sent to their endpoints (BMCs, Redfish services), by pod manager \
             and HTTP status (or timeout, unreachable, tls)",
            self.endpoint_requests.clone(),
        );
    }

    /// One call of `export` (the WIT name) of `plugin` ended after `took`.
    pub(crate) fn call(
        &self,
        plugin: &str,
        export: &'static str,
        took: Duration,
        error: Option<&CallError>,
    ) {
        let plugin = if plugin.is_empty() {
            "(loading)".to_owned()
        } else {
            plugin.to_owned()
        };
        let outcome = match error {
            None => "ok",
            Some(CallError::Deadline { .. }) => "deadline",
            Some(CallError::Busy { .. }) => "busy",
            Some(CallError::MemoryLimit { .. }) => "memory_limit",
            Some(CallError::HttpBudget { .. }) => "request_limit",
            Some(CallError::Malformed { .. }) => "malformed",
            Some(CallError::Trap { .. }) => "trap",
            Some(CallError::Plugin { .. }) => "plugin_error",
            Some(CallError::Instantiate { .. }) => "instantiate",
            Some(CallError::WrongWorld { .. }) => "wrong_world",
        };
        self.call_seconds
            .get_or_create(&ExportLabels {
                plugin: plugin.clone(),
                export,
            })
            .observe(took.as_secs_f64());
        self.calls
            .get_or_create(&CallLabels {
                plugin,
                export,
                outcome,
            })
            .inc();
    }

    /// A request a plugin sent to the endpoint of `pod_manager` was answered with `status` (or
    /// failed, as `status` says).
    pub(crate) fn endpoint_request(&self, pod_manager: &str, status: String) {
        self.endpoint_requests
            .get_or_create(&EndpointLabels {
                pod_manager: pod_manager.to_owned(),
                status,
            })
            .inc();
    }
}

/// The export a `call_export!` expression calls, as its binding names it: `get_power` (WIT's
/// `get-power`) from `b.podium_plugin_driver().call_get_power(s, &id)`.
pub(crate) fn export_name(call: &'static str) -> &'static str {
    let Some(start) = call.find("call_").map(|i| i + "call_".len()) else {
        return "unknown";
    };
    let rest = &call[start..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_is_read_from_the_call() {
        assert_eq!(
            export_name(stringify!(b.podium_plugin_driver().call_get_power(s, &id))),
            "get_power"
        );
        assert_eq!(
            export_name(stringify!(b.podium_plugin_plugin().call_info(s))),
            "info"
        );
        assert_eq!(export_name("nothing"), "unknown");
    }
}
