//! Operations: driver actions and what came of them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::names::names;
use crate::requests::{BootParams, ImageParams, MediaParams, PowerParams};
use crate::{
    BiosAction, BiosChange, ClaimId, FirmwareUpdate, HostId, MediaAction, OperationId,
    OperationKind, OperationProgress, OperationRequest, OperationResult, OperationStatus,
    PodManagerId, SecureBootChange,
};

/// A driver action and what came of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "OperationJson")]
pub struct OperationView {
    pub id: OperationId,
    pub kind: OperationKind,
    pub status: OperationStatus,
    pub host: Option<HostId>,
    pub pod_manager: PodManagerId,
    /// The body of the request that queued it.
    pub request: RequestBody,
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
    /// What it found or did, once it succeeded, a shape per kind: an inspection's inventory
    /// and the preprovisioning it prepared, a power action's power state, a provisioning's
    /// image and config drive, a sync's counts.
    pub result: Option<OperationResult>,
    /// How far it is (a firmware update's task at the BMC: its `task`, `state`, `percent` and
    /// `messages`); null for kinds that say nothing of it.
    pub progress: Option<OperationProgress>,
}

/// An operation as JSON has it: its result and progress are read by its kind.
#[derive(Deserialize)]
struct OperationJson {
    id: OperationId,
    kind: OperationKind,
    status: OperationStatus,
    host: Option<HostId>,
    pod_manager: PodManagerId,
    request: serde_json::Value,
    error: Option<String>,
    attempts: i64,
    next_attempt_at: Option<crate::Timestamp>,
    claim: Option<ClaimId>,
    created_at: crate::Timestamp,
    started_at: Option<crate::Timestamp>,
    finished_at: Option<crate::Timestamp>,
    result: Option<serde_json::Value>,
    progress: Option<serde_json::Value>,
}

impl TryFrom<OperationJson> for OperationView {
    type Error = String;

    fn try_from(o: OperationJson) -> Result<OperationView, String> {
        let result = o
            .result
            .map(|json| OperationResult::from_stored(o.kind, json));
        let progress = o
            .progress
            .and_then(|json| OperationProgress::from_stored(o.kind, json));
        Ok(OperationView {
            id: o.id,
            kind: o.kind,
            status: o.status,
            host: o.host,
            pod_manager: o.pod_manager,
            request: RequestBody::read(o.kind, o.request).map_err(|e| format!("request: {e}"))?,
            error: o.error,
            attempts: o.attempts,
            next_attempt_at: o.next_attempt_at,
            claim: o.claim,
            created_at: o.created_at,
            started_at: o.started_at,
            finished_at: o.finished_at,
            result,
            progress,
        })
    }
}

/// The body of the request that queued an operation, as the API takes it: `{}` for what Podium
/// queues itself (`register`, `inspect`, `sync`) and for a release's `deprovision`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RequestBody {
    Power(PowerParams),
    Boot(BootParams),
    Media(MediaParams),
    Bios(BiosChange),
    BiosReset(BiosReset),
    SecureBoot(SecureBootChange),
    FirmwareUpdate(FirmwareUpdate),
    Provision(ProvisionBody),
    Empty(NoBody),
}

crate::outcomes::any_of_schema!(
    RequestBody,
    "The body of the request that queued an operation, a shape per kind.",
    [
        PowerParams,
        BootParams,
        MediaParams,
        BiosChange,
        BiosReset,
        SecureBootChange,
        FirmwareUpdate,
        ProvisionBody,
        NoBody,
    ]
);

/// A BIOS reset (`POST .../bios/reset` takes no body): `{"action": "reset"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BiosReset {
    pub action: ResetAction,
}

names! {
    /// What a BIOS reset does.
    pub enum ResetAction ("a reset action") {
        Reset => "reset",
    }
}

/// A provisioning: the claim's image as it was asked for (null where an early release recorded
/// none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProvisionBody {
    pub image: Option<ImageParams>,
}

/// No body: `{}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct NoBody {}

impl From<&OperationRequest> for RequestBody {
    fn from(request: &OperationRequest) -> RequestBody {
        match request {
            OperationRequest::Register
            | OperationRequest::Inspect
            | OperationRequest::Sync
            | OperationRequest::Deprovision => RequestBody::Empty(NoBody {}),
            OperationRequest::Power(action) => RequestBody::Power(PowerParams { action: *action }),
            OperationRequest::Boot(b) => RequestBody::Boot(BootParams {
                target: b.target,
                persistence: b.persistence,
                mode: b.mode,
            }),
            OperationRequest::Media(MediaAction::Insert(m)) => {
                RequestBody::Media(MediaParams::Insert {
                    image_url: m.image_url.clone(),
                    media_type: m.media_type,
                    write_protected: m.write_protected,
                })
            }
            OperationRequest::Media(MediaAction::Eject { media_type }) => {
                RequestBody::Media(MediaParams::Eject {
                    media_type: *media_type,
                })
            }
            OperationRequest::Bios(BiosAction::Set(change)) => RequestBody::Bios(change.clone()),
            OperationRequest::Bios(BiosAction::Reset) => RequestBody::BiosReset(BiosReset {
                action: ResetAction::Reset,
            }),
            OperationRequest::SecureBoot { enabled } => {
                RequestBody::SecureBoot(SecureBootChange { enabled: *enabled })
            }
            OperationRequest::FirmwareUpdate(u) => RequestBody::FirmwareUpdate(u.clone()),
            OperationRequest::Provision { image } => RequestBody::Provision(ProvisionBody {
                image: image.as_deref().cloned(),
            }),
        }
    }
}

impl RequestBody {
    /// Reads back the request body of an operation of `kind`, as the API wrote it.
    pub fn read(kind: OperationKind, json: serde_json::Value) -> serde_json::Result<RequestBody> {
        use serde_json::from_value;
        Ok(match kind {
            OperationKind::Register
            | OperationKind::Inspect
            | OperationKind::Sync
            | OperationKind::Deprovision => RequestBody::Empty(from_value(json)?),
            OperationKind::Power => RequestBody::Power(from_value(json)?),
            OperationKind::Boot => RequestBody::Boot(from_value(json)?),
            OperationKind::Media => RequestBody::Media(from_value(json)?),
            OperationKind::Bios if json.get("action").is_some() => {
                RequestBody::BiosReset(from_value(json)?)
            }
            OperationKind::Bios => RequestBody::Bios(from_value(json)?),
            OperationKind::SecureBoot => RequestBody::SecureBoot(from_value(json)?),
            OperationKind::FirmwareUpdate => RequestBody::FirmwareUpdate(from_value(json)?),
            OperationKind::Provision => RequestBody::Provision(from_value(json)?),
        })
    }
}
