//! Which records of a list to read: the filters of the API's list queries, as the application
//! and the store take them.

use crate::{ClaimId, HostId, PodManagerId};

/// Hosts whose every given field matches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostFilter {
    pub pod_manager: Option<PodManagerId>,
    pub state: Option<String>,
    pub power_state: Option<String>,
    /// The host's name, exactly.
    pub name: Option<String>,
    /// Every `(key, value)` must be a label of the host.
    pub labels: Vec<(String, String)>,
    /// In this chassis, or in any chassis it holds (a rack's hosts, an enclosure's).
    pub chassis: Option<crate::ChassisId>,
}

/// Operations of a host, a pod manager or a claim.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OperationFilter {
    pub host: Option<HostId>,
    pub pod_manager: Option<PodManagerId>,
    pub claim: Option<ClaimId>,
    /// In one of these states; any when empty.
    pub statuses: Vec<crate::OperationStatus>,
    /// Of one of these kinds; any when empty.
    pub kinds: Vec<crate::OperationKind>,
}

/// Audit events by tenant, resource and time (times as stored: RFC 3339, UTC, microseconds).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub tenant: Option<crate::TenantId>,
    pub resource: Option<String>,
    pub since: Option<crate::Timestamp>,
    pub until: Option<crate::Timestamp>,
}

/// Pod managers by name, location and status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodManagerFilter {
    pub name: Option<String>,
    pub location: Option<String>,
    pub status: Option<String>,
}
