//! Claims: a tenant's hold on a host, from its request to its release.

use crate::names::names;

names! {
    /// Where a claim is.
    pub enum ClaimState ("a claim state") {
        /// Nothing granted is free now; bound when a host frees up.
        Pending => "pending",
        /// Holding a host.
        Bound => "bound",
        /// Nothing granted could ever match it.
        Failed => "failed",
        /// Released: its host is being deprovisioned, then the claim is gone.
        Releasing => "releasing",
    }
}

/// A new claim's state.
impl Default for ClaimState {
    fn default() -> ClaimState {
        ClaimState::Pending
    }
}
