//! Which hosts this process asked for their power state for a Redfish client, and when (a
//! leaf: `Podium` holds it).

use podium_types::HostId;

/// How long a host this process tried is not tried again: the freshness the Redfish service
/// keeps power states to (`POWER_FRESH_SECS` in `redfish/mod.rs`).
pub(crate) const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// The hosts this process asked for their power state lately, and when.
#[derive(Debug, Default)]
pub(crate) struct PowerTried(
    std::sync::Mutex<std::collections::HashMap<HostId, std::time::Instant>>,
);

impl PowerTried {
    /// Whether to try `host` now: not tried within [`RETRY_AFTER`]; marks it tried.
    pub(crate) fn try_now(&self, host: &HostId) -> bool {
        let fresh = RETRY_AFTER;
        let now = std::time::Instant::now();
        let mut tried = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if tried
            .get(host)
            .is_some_and(|t| now.duration_since(*t) < fresh)
        {
            return false;
        }
        if tried.len() >= 10_000 {
            tried.retain(|_, t| now.duration_since(*t) < fresh);
        }
        tried.insert(host.clone(), now);
        true
    }
}
