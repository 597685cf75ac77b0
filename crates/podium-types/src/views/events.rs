//! An event of `GET /v1/events`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    ClaimId, ClaimState, EventAction, EventKind, HostId, OperationId, OperationKind,
    OperationStatus, PodManagerId, ShownState, TenantId,
};

/// One change of a claim, a host or an operation, with the state it left: the `data` of a
/// server-sent event whose `event` is the `kind` and whose `id` is the `seq`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventView {
    /// Events are numbered in the order their changes were committed; resume after the last one
    /// seen with `Last-Event-ID` (or `?after=`).
    pub seq: i64,
    /// When the change was made (RFC 3339, UTC).
    pub at: crate::Timestamp,
    pub kind: EventKind,
    pub action: EventAction,
    /// The claim's state, when `kind` is `claim`.
    pub claim: Option<ClaimEventView>,
    /// The host's state, when `kind` is `host`.
    pub host: Option<HostEventView>,
    /// The operation's state, when `kind` is `operation`.
    pub operation: Option<OperationEventView>,
}

/// The `data` of the `ready` event that starts every stream of `GET /v1/events`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReadyData {
    /// The stream starts after this event (also the `ready` event's `id`): a client that
    /// reconnects before any change came resumes after it.
    pub after: i64,
}

/// The `data` of the `reset` event: the stream resumed from before what is kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResetData {
    /// Events up to this one are forgotten (also the `reset` event's `id`): what the client
    /// follows may have changed unseen, so it lists it again.
    pub forgotten_through: i64,
    pub message: String,
}

/// A claim as a change left it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClaimEventView {
    pub id: ClaimId,
    pub tenant: TenantId,
    pub pod_manager: PodManagerId,
    pub state: ClaimState,
    pub online: bool,
    /// Why it waits or failed.
    pub reason: Option<String>,
    /// The host bound to it.
    pub host: Option<HostId>,
}

/// A host as a change left it: what its consumer sees of it (`ClaimedHostView`), and for an
/// admin its error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HostEventView {
    pub id: HostId,
    pub provisioning_state: ShownState,
    pub power_state: crate::PowerState,
    /// The claim it is bound to.
    pub claim: Option<ClaimId>,
    /// Admins only: the pod manager it belongs to.
    pub pod_manager: Option<PodManagerId>,
    /// Admins only: the error's type and message, while the host is in error.
    pub error: Option<String>,
}

/// An operation as a change left it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OperationEventView {
    pub id: OperationId,
    pub kind: OperationKind,
    pub status: OperationStatus,
    pub attempts: i64,
    pub error: Option<String>,
    /// When a queued operation is tried again after a transient failure.
    pub next_attempt_at: Option<crate::Timestamp>,
    pub host: Option<HostId>,
    pub claim: Option<ClaimId>,
}
