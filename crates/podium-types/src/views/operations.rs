//! Operations: driver actions and what came of them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ClaimId, HostId, OperationId, OperationKind, OperationStatus, PodManagerId};

/// A driver action and what came of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OperationView {
    pub id: OperationId,
    pub kind: OperationKind,
    pub status: OperationStatus,
    pub host: Option<HostId>,
    pub pod_manager: PodManagerId,
    /// The body of the request that queued it.
    #[schema(value_type = Object)]
    pub request: serde_json::Value,
    /// Why it failed, in words; while `queued` after a transient failure, why the last try failed.
    pub error: Option<String>,
    /// Tries so far; a transient failure is tried again, with backoff, up to a bound.
    pub attempts: i64,
    /// When a queued operation is tried again after a transient failure.
    pub next_attempt_at: Option<crate::Timestamp>,
    /// The claim at whose tenant's request it runs.
    pub claim: Option<ClaimId>,
    pub created_at: crate::Timestamp,
    pub started_at: Option<crate::Timestamp>,
    pub finished_at: Option<crate::Timestamp>,
    /// What it found or did, once it succeeded: an inspection's inventory and the
    /// preprovisioning it prepared, a power action's power state, a provisioning's image and
    /// config drive, a sync's counts.
    #[schema(value_type = Option<Object>)]
    pub result: serde_json::Value,
    /// How far it is (a firmware update's task at the BMC: its `task`, `state`, `percent` and
    /// `messages`); null for kinds that say nothing of it.
    #[schema(value_type = Option<Object>)]
    pub progress: serde_json::Value,
}
