//! API views: what responses show. Separate from stored rows, so a column never leaks into the
//! API by accident (the sealed credentials, for one).

use podium_types::{ClaimId, HostId, OperationId, PodManagerId, TenantId, TokenId};
use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use podium_app::bindings::{PluginBinding, PodManager};
use podium_store::{HostRow, OperationRow, StatusChange};
use podium_types::{MediaAction, OperationRequest};

#[derive(Debug, Serialize, ToSchema)]
pub(super) struct TlsView {
    pub verify: bool,
    /// Whether a CA bundle is set.
    pub ca_bundle: bool,
    /// The pinned certificate's SHA-256, if one is pinned.
    pub pinned_sha256: Option<String>,
}

/// A pod manager. Its credentials are write-only: `has_auth` says whether there are any.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct PodManagerView {
    pub uuid: PodManagerId,
    pub name: String,
    pub url: String,
    pub description: String,
    pub location: String,
    /// `unknown` until the first probe, then `online` or `offline`.
    pub status: String,
    /// Why the pod manager is offline, in words.
    pub status_message: Option<String>,
    pub last_probe_at: Option<String>,
    /// The service root the driver found.
    pub redfish_link: Option<String>,
    pub bookmark_link: String,
    pub tls: TlsView,
    pub driver: PluginBinding,
    pub ipam: PluginBinding,
    pub renderer: Option<PluginBinding>,
    pub network_config_owner: String,
    pub has_auth: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl From<PodManager> for PodManagerView {
    fn from(pm: PodManager) -> PodManagerView {
        let r = pm.row;
        PodManagerView {
            bookmark_link: format!("/v1/pod_managers/{}", r.uuid),
            uuid: r.uuid,
            name: r.name,
            url: r.url,
            description: r.description,
            location: r.location,
            status: r.status,
            status_message: r.status_message,
            last_probe_at: r.last_probe_at,
            redfish_link: r.redfish_link,
            tls: TlsView {
                verify: r.tls_verify,
                ca_bundle: r.tls_ca_bundle.is_some(),
                pinned_sha256: r.tls_pinned_sha256,
            },
            driver: pm.driver,
            ipam: pm.ipam,
            renderer: pm.renderer,
            network_config_owner: r.network_config_owner,
            has_auth: r.auth_sealed.is_some(),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(super) struct StatusChangeView {
    pub status: String,
    pub message: Option<String>,
    pub at: String,
}

impl From<StatusChange> for StatusChangeView {
    fn from(s: StatusChange) -> StatusChangeView {
        StatusChangeView {
            status: s.status,
            message: s.message,
            at: s.at,
        }
    }
}

/// A machine behind a pod manager.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct HostView {
    pub id: HostId,
    pub pod_manager: PodManagerId,
    /// The driver's id of the system.
    pub system_id: String,
    /// `system` or `chassis`.
    pub kind: String,
    pub name: String,
    pub uuid: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub cpu_count: i64,
    pub memory_mib: i64,
    #[schema(value_type = Vec<Object>)]
    pub nics: serde_json::Value,
    #[schema(value_type = Vec<Object>)]
    pub media_slots: serde_json::Value,
    #[schema(value_type = Option<Object>)]
    pub boot: serde_json::Value,
    pub power_state: String,
    /// `registering`, `inspecting`, `available`, `provisioning`, `provisioned`,
    /// `deprovisioning`, `error`, `missing`, or `maintenance` (`docs/host-lifecycle.md`).
    pub state: String,
    /// While `state` is `error` (or an error lies under a maintenance): what failed.
    pub error: Option<HostErrorView>,
    /// While the host is in maintenance.
    pub maintenance: Option<MaintenanceView>,
    pub labels: BTreeMap<String, String>,
    /// The NIC the host boots from, as the admin set it; `null`: the first of `nics`.
    pub boot_mac: Option<String>,
    /// The host's own BMC, where it has one (its credentials are write-only).
    pub bmc: Option<BmcView>,
    pub created_at: String,
    pub updated_at: String,
    pub last_seen_at: String,
}

/// Why a host is in `error`.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct HostErrorView {
    /// `registration`, `inspection`, `provisioning`, `deprovisioning` or `power_management`.
    #[serde(rename = "type")]
    pub error_type: String,
    /// What the failed operation said.
    pub message: String,
    pub at: Option<String>,
    /// The state the error interrupted.
    pub state: Option<String>,
}

/// A maintenance the admin set.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct MaintenanceView {
    pub reason: String,
    pub since: String,
    /// The state underneath, which operations already running go on changing.
    pub state: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(super) struct BmcView {
    pub url: String,
    pub has_auth: bool,
    pub tls: TlsView,
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

impl From<HostRow> for HostView {
    fn from(h: HostRow) -> HostView {
        let shown = podium_app::lifecycle::shown_state(&h);
        let error = podium_app::lifecycle::shown_error(&h);
        HostView {
            nics: json(&h.nics),
            media_slots: json(&h.media_slots),
            boot: h.boot.as_deref().map_or(serde_json::Value::Null, json),
            id: h.id,
            pod_manager: h.pod_manager,
            system_id: h.system_id,
            kind: h.kind,
            name: h.name,
            uuid: h.uuid,
            manufacturer: h.manufacturer,
            model: h.model,
            serial: h.serial,
            cpu_count: h.cpu_count,
            memory_mib: h.memory_mib,
            power_state: h.power_state,
            error: error.map(|e| HostErrorView {
                error_type: e.error_type,
                message: e.message,
                at: e.at,
                state: e.interrupted.map(|s| s.as_str().to_owned()),
            }),
            maintenance: h.maintenance_since.map(|since| MaintenanceView {
                reason: h.maintenance_reason.unwrap_or_default(),
                since,
                state: h.state.as_str().to_owned(),
            }),
            state: shown.as_str().to_owned(),
            labels: h.labels,
            boot_mac: h.boot_mac,
            bmc: h.bmc_url.map(|url| BmcView {
                url,
                has_auth: h.bmc_auth_sealed.is_some(),
                tls: TlsView {
                    verify: h.bmc_tls_verify,
                    ca_bundle: h.bmc_tls_ca_bundle.is_some(),
                    pinned_sha256: h.bmc_tls_pinned_sha256,
                },
            }),
            created_at: h.created_at,
            updated_at: h.updated_at,
            last_seen_at: h.last_seen_at,
        }
    }
}

/// A driver action and what came of it.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct OperationView {
    pub id: OperationId,
    /// `register`, `inspect`, `provision`, `deprovision`, `power`, `boot`, `media` or `sync`.
    pub kind: String,
    /// `queued`, `running`, `succeeded` or `failed`.
    pub status: String,
    pub host: Option<HostId>,
    pub pod_manager: PodManagerId,
    #[schema(value_type = Object)]
    pub request: serde_json::Value,
    /// Why it failed, in words; while `queued` after a transient failure, why the last try failed.
    pub error: Option<String>,
    /// Tries so far; a transient failure is tried again, with backoff, up to a bound.
    pub attempts: i64,
    /// When a queued operation is tried again after a transient failure.
    pub next_attempt_at: Option<String>,
    /// The claim at whose tenant's request it runs.
    pub claim: Option<ClaimId>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// What it found or did, once it succeeded: an inspection's inventory and the
    /// preprovisioning it prepared, a power action's power state, a provisioning's image and
    /// config drive, a sync's counts.
    #[schema(value_type = Option<Object>)]
    pub result: serde_json::Value,
}

/// An operation's request as the API shows it: the body of the request that queued it.
fn request_json(request: &OperationRequest) -> serde_json::Value {
    use serde_json::json;
    match request {
        OperationRequest::Register
        | OperationRequest::Inspect
        | OperationRequest::Sync
        | OperationRequest::Deprovision => json!({}),
        OperationRequest::Power(action) => json!({ "action": action }),
        OperationRequest::Boot(b) => {
            json!({ "target": b.target, "persistence": b.persistence, "mode": b.mode })
        }
        OperationRequest::Media(MediaAction::Insert(m)) => json!({
            "action": "insert",
            "image_url": m.image_url,
            "media_type": m.media_type,
            "write_protected": m.write_protected,
        }),
        OperationRequest::Media(MediaAction::Eject { media_type }) => {
            json!({ "action": "eject", "media_type": media_type })
        }
        OperationRequest::Provision { image } => json!({ "image": image }),
    }
}

impl From<OperationRow> for OperationView {
    fn from(o: OperationRow) -> OperationView {
        OperationView {
            request: request_json(&o.request),
            kind: o.kind().as_str().to_owned(),
            result: o.result.as_deref().map_or(serde_json::Value::Null, json),
            id: o.id,
            status: o.status.as_str().to_owned(),
            host: o.host_id,
            pod_manager: o.pod_manager,
            error: o.error,
            attempts: o.attempts,
            next_attempt_at: o.next_attempt_at,
            claim: o.claim_id,
            created_at: o.created_at,
            started_at: o.started_at,
            finished_at: o.finished_at,
        }
    }
}

/// A page of a list.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct List<T> {
    pub items: Vec<T>,
    /// The cursor of the next page; `null` on the last.
    pub next: Option<String>,
}

impl<T> List<T> {
    pub(super) fn from_paged<R>(paged: podium_types::Paged<R>) -> List<T>
    where
        T: From<R>,
    {
        List {
            items: paged.items.into_iter().map(T::from).collect(),
            next: paged.next,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub(super) struct TenantView {
    pub id: TenantId,
    pub name: String,
    pub description: String,
    pub created_at: String,
}

impl From<podium_store::TenantRow> for TenantView {
    fn from(t: podium_store::TenantRow) -> TenantView {
        TenantView {
            id: t.id,
            name: t.name,
            description: t.description,
            created_at: t.created_at,
        }
    }
}

/// A token, without its secret.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct TokenView {
    pub id: TokenId,
    /// `admin` or `tenant`.
    pub role: String,
    pub tenant: Option<TenantId>,
    pub read_only: bool,
    pub description: String,
    pub expires_at: Option<String>,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

impl From<podium_store::TokenRow> for TokenView {
    fn from(t: podium_store::TokenRow) -> TokenView {
        TokenView {
            id: t.id,
            role: match t.role {
                podium_store::Role::Admin => "admin".into(),
                podium_store::Role::Tenant => "tenant".into(),
            },
            tenant: t.tenant_id,
            read_only: t.read_only,
            description: t.description,
            expires_at: t.expires_at,
            created_at: t.created_at,
            revoked_at: t.revoked_at,
        }
    }
}

/// A new token: the only answer that carries its secret.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct TokenCreatedView {
    /// The bearer token. Shown once; Podium keeps only its hash.
    pub token: String,
    #[serde(flatten)]
    pub view: TokenView,
}

impl TokenCreatedView {
    pub(super) fn new(
        row: podium_store::TokenRow,
        secret: podium_types::Secret,
    ) -> TokenCreatedView {
        TokenCreatedView {
            token: secret.expose().to_owned(),
            view: row.into(),
        }
    }
}
