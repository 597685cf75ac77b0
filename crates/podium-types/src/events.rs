//! Events: what `GET /v1/events` streams, one per change of a claim, a host or an operation.

use crate::names::names;
use crate::{ClaimId, HostId, OperationId, TenantId};

names! {
    /// What changed.
    pub enum EventKind ("an event kind") {
        Claim => "claim",
        Host => "host",
        Operation => "operation",
    }
}

names! {
    /// How it changed.
    pub enum EventAction ("an event action") {
        Created => "created",
        Changed => "changed",
        Deleted => "deleted",
    }
}

/// Which events a watcher reads: every given field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Events a tenant may see: of its claims, of the hosts bound to them, of the operations run
    /// for them.
    pub tenant: Option<TenantId>,
    /// Events of this claim, of its host while bound, and of the operations run for it.
    pub claim: Option<ClaimId>,
    /// Events of this host and of its operations.
    pub host: Option<HostId>,
    /// Events of this operation.
    pub operation: Option<OperationId>,
    /// Only these kinds; empty: every kind.
    pub kinds: Vec<EventKind>,
}
