//! Request bodies and query parameters: what callers send, shared by the API (which
//! deserializes them, naming the field of any error), the application (which validates their
//! values) and the client (which sends them). Unknown fields are refused everywhere.

use crate::{ChassisId, ClaimId, HostId, PodManagerId, TenantId};
use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use utoipa::{IntoParams, ToSchema};

use crate::Secret;

/// `Some(None)` for an explicit `null`, `None` for an absent field.
fn double_option<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// Credentials for an endpoint. Write-only: never returned.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthParams {
    pub username: String,
    #[schema(value_type = String, format = Password)]
    #[serde(serialize_with = "expose")]
    pub password: Secret,
}

/// How the endpoint's TLS certificate is verified.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsParams {
    /// `false` turns verification off (Metal3's `disableCertificateVerification`).
    #[serde(default = "yes")]
    pub verify: bool,
    /// PEM certificates to trust instead of the system roots: a site CA, or the BMC's own
    /// self-signed certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    /// Trust exactly the certificate with this SHA-256 (of its DER encoding; hex, colons
    /// allowed), whoever signed it: pinning a BMC's self-signed certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_sha256: Option<String>,
}

/// A password as a client sends it: the only place a `Secret` is written out.
fn expose<S: serde::Serializer>(secret: &Secret, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(secret.expose())
}

fn yes() -> bool {
    true
}

/// A plugin chosen for a role, by name, optionally pinned, with its configuration.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginBindingParams {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Checked by the plugin's `validate-config` before it is stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub config: Option<serde_json::Value>,
}

crate::names::names! {
    /// Who owns a host's network configuration on a pod manager.
    pub enum NetworkConfigOwner ("a network config owner") {
        /// Rendered from the site's templates and pools; claims may not bring their own.
        Admin => "admin",
        /// Supplied with the claim, validated by the renderer.
        Consumer => "consumer",
        /// The admin's template, plus networks (and VLANs) a claim adds on the links the template
        /// opens to tenants.
        Layered => "layered",
    }
}

/// `POST /v1/pod_managers`.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PodManagerCreate {
    pub name: String,
    /// `http(s)://host[:port]`.
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsParams>,
    /// Default: the bundled `redfish` driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<PluginBindingParams>,
    /// Default: the bundled `ipam-static`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipam: Option<PluginBindingParams>,
    /// Default: none bound, so the newest bundled `render-openstack` renders (the view's
    /// `renderer_default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renderer: Option<PluginBindingParams>,
    /// Default: `admin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_config_owner: Option<NetworkConfigOwner>,
    /// Default: the service's default limit, none for the site.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<OperationLimits>,
    /// The ramdisk a host of this site boots while it waits to be claimed (an ISO, http or
    /// https), as Metal3's preprovisioning image: where the site has DHCP-less pools, an
    /// inspection boots it from the CD with the preprovisioning config drive beside it. Default:
    /// none (nothing is booted before provisioning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preprovisioning_image: Option<String>,
    /// How the site's hosts take disk images and are cleaned after them (`docs/deploy.md`).
    /// Default: a metadata erase, md5 refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy: Option<crate::DeploySettings>,
    /// How the site's hosts are powered off (`docs/operations.md`). Default: the OS is given
    /// 120 seconds to shut down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::PowerSettings>,
    /// What tenants may change of the hosts they claim here (`docs/hardware.md`). Default:
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_firmware: Option<crate::TenantFirmware>,
    /// The firmware settings every host is given before it is `available`
    /// (`docs/hardware.md`). Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_profile: Option<crate::FirmwareProfile>,
}

/// How many operations of a site run at once, counted across every Podium process on the
/// database. `null` (or absent) is the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationLimits {
    /// At the site's shared Redfish service: the operations of its hosts without a BMC of
    /// their own, and its sync. 1 to 10000; default: the server's
    /// `--operations-per-pod-manager` (8).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 10000)]
    pub service: Option<u32>,
    /// At the whole site, its hosts with their own BMC included (each of those runs one
    /// operation at a time, and without this limit as many at once as the site has hosts).
    /// 1 to 10000; default: none.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 10000)]
    pub site: Option<u32>,
    /// Requests one call of the driver sends the site's shared Redfish service at once: how
    /// far a sync's reads of its systems fan out (a service in front of a thousand systems
    /// answers many at once; a single BMC, a few). Hosts with their own BMC are not held to
    /// it. 1 to 10000; default: the server's `--plugin-parallel-requests` (16).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 10000)]
    pub requests: Option<u32>,
}

/// `PATCH /v1/pod_managers/{uuid}`: any field of the create body; absent fields are kept.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PodManagerUpdate {
    /// Refused: a pod manager's uuid never changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub uuid: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `null` removes the credentials.
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub auth: Option<Option<AuthParams>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<PluginBindingParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipam: Option<PluginBindingParams>,
    /// `null` unbinds the renderer: the default renders again.
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub renderer: Option<Option<PluginBindingParams>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_config_owner: Option<NetworkConfigOwner>,
    /// Replaces both limits: a field absent or `null` goes back to its default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<OperationLimits>,
    /// `null` removes it.
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub preprovisioning_image: Option<Option<String>>,
    /// Replaces the settings: a field absent goes back to its default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy: Option<crate::DeploySettings>,
    /// Replaces the settings: a field absent goes back to its default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::PowerSettings>,
    /// Replaces the settings: a field absent goes back to its default (nothing allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_firmware: Option<crate::TenantFirmware>,
    /// Replaces the profile (`{}`: none); hosts are given it at their next inspection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_profile: Option<crate::FirmwareProfile>,
}

/// Paging of every list.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageParams {
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    /// The `next` of the previous page.
    pub cursor: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PodManagerQuery {
    pub name: Option<String>,
    pub location: Option<String>,
    /// `unknown`, `online` or `offline`.
    pub status: Option<String>,
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// `POST /v1/hosts`: a host with its own BMC, under a pod manager acting as a site.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HostCreate {
    pub pod_manager: PodManagerId,
    pub bmc: BmcParams,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
}

/// A host's own BMC.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BmcParams {
    /// `http(s)://host[:port]`.
    pub url: String,
    /// Which system of the BMC (its id, path or UUID); needed only where it has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsParams>,
}

/// `PATCH /v1/hosts/{id}`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HostUpdate {
    /// Replaces every label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// The MAC of the NIC the host boots from (one of its NICs); `null` for the first NIC.
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>)]
    pub boot_mac: Option<Option<String>>,
    /// New credentials for the host's own BMC: the host registers again with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bmc: Option<BmcUpdate>,
    /// The disk a `raw` or `qcow2` image is written to when the claim names none
    /// (`docs/deploy.md`); `null` removes it.
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub root_device: Option<Option<RootDeviceHints>>,
}

/// What of a host's own BMC can change.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BmcUpdate {
    pub auth: AuthParams,
}

/// `PUT /v1/hosts/{id}/maintenance`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MaintenanceParams {
    /// Why, for whoever reads the host (at most 255 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `POST /v1/hosts/{id}/power`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PowerParams {
    pub action: crate::PowerAction,
}

/// `POST /v1/hosts/{id}/boot`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BootParams {
    #[schema(value_type = String, example = "pxe")]
    pub target: crate::BootTarget,
    #[schema(value_type = String, example = "once")]
    pub persistence: crate::BootPersistence,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "uefi")]
    pub mode: Option<crate::BootMode>,
}

/// `POST /v1/hosts/{id}/media`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields, tag = "action", rename_all = "snake_case")]
pub enum MediaParams {
    Insert {
        image_url: String,
        #[serde(default = "cd")]
        #[schema(value_type = String)]
        media_type: crate::MediaType,
        #[serde(default = "yes")]
        write_protected: bool,
    },
    Eject {
        #[serde(default = "cd")]
        #[schema(value_type = String)]
        media_type: crate::MediaType,
    },
}

impl From<BootParams> for crate::BootSettings {
    fn from(p: BootParams) -> crate::BootSettings {
        crate::BootSettings {
            target: p.target,
            persistence: p.persistence,
            mode: p.mode,
        }
    }
}

impl From<MediaParams> for crate::MediaAction {
    fn from(p: MediaParams) -> crate::MediaAction {
        match p {
            MediaParams::Insert {
                image_url,
                media_type,
                write_protected,
            } => crate::MediaAction::Insert(crate::MediaRequest {
                image_url,
                media_type,
                write_protected,
            }),
            MediaParams::Eject { media_type } => crate::MediaAction::Eject { media_type },
        }
    }
}

fn cd() -> crate::MediaType {
    crate::MediaType::Cd
}

#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct OperationQuery {
    /// Only operations in these states, comma-separated: `queued`, `running`, `succeeded`,
    /// `failed` (what is queued, running and failed now: `queued,running,failed`).
    #[serde(default, deserialize_with = "crate::names::comma_list")]
    #[param(value_type = Option<String>, example = "queued,running")]
    pub status: Vec<crate::OperationStatus>,
    /// Only operations of these kinds, comma-separated (`provision,deprovision`).
    #[serde(default, deserialize_with = "crate::names::comma_list")]
    #[param(value_type = Option<String>, example = "provision,deprovision")]
    pub kind: Vec<crate::OperationKind>,
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub host: Option<HostId>,
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub pod_manager: Option<PodManagerId>,
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub claim: Option<ClaimId>,
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// `GET /v1/audit`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// Only this tenant's requests (admins; a tenant sees only its own anyway).
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub tenant: Option<TenantId>,
    /// Only requests about this resource: the one created, or any id in the path.
    pub resource: Option<String>,
    /// Only requests at or after this time (RFC 3339).
    pub since: Option<crate::Timestamp>,
    /// Only requests before this time (RFC 3339).
    pub until: Option<crate::Timestamp>,
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// `GET /v1/events`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Only these kinds, comma-separated: `claim`, `host`, `operation`.
    pub kind: Option<String>,
    /// Only events of this claim, of its host while bound to it, and of its operations.
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub claim: Option<ClaimId>,
    /// Only events of this host and of its operations.
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub host: Option<HostId>,
    /// Only events of this operation.
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub operation: Option<crate::OperationId>,
    /// Start after this event (as `Last-Event-ID` does; the header wins). Without either, the
    /// stream starts with the next change.
    pub after: Option<i64>,
}

/// `GET /v1/tenants`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TenantQuery {
    /// Only the tenant with this name.
    pub name: Option<String>,
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// `POST /v1/tenants`.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantCreate {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `POST /v1/tenants/{id}/tokens` and `POST /v1/admin/tokens`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenCreate {
    /// A read-only token can call only `GET` endpoints.
    #[serde(default)]
    pub read_only: bool,
    /// When the token stops working (RFC 3339); never when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<crate::Timestamp>,
    /// Seconds from now until the token stops working; an alternative to `expires_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `POST /v1/grants`: let a tenant claim hosts of a pod manager.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantCreate {
    /// The tenant's id.
    pub tenant: TenantId,
    /// The pod manager's uuid.
    pub pod_manager: PodManagerId,
    /// Labels a host must all carry to be claimable under this grant; all hosts when empty.
    #[serde(default)]
    pub selector: BTreeMap<String, String>,
    /// At most this many hosts at once; no limit when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_hosts: Option<u32>,
    /// Only the hosts of this chassis of the pod manager (a rack, an enclosure) and of the
    /// chassis within it; every host when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chassis: Option<ChassisId>,
}

/// `POST /v1/pod_managers/{uuid}/composed_nodes`: a node composed of the resource blocks named,
/// or of blocks Podium picks to meet a requirement; exactly one of `blocks` and `requirement`.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ComposedNodeCreate {
    /// The composed system's name: 1 to 63 characters of A-Z, a-z, 0-9, `.`, `_` and `-`.
    pub name: String,
    /// The resource blocks, by the driver's ids (`GET /v1/pod_managers/{uuid}/composition`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<String>>,
    /// What the node must hold at least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirement: Option<CompositionRequirement>,
}

/// What a composed node must hold at least; a field left out asks for none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompositionRequirement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processors: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drives: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nics: Option<u32>,
}

impl CompositionRequirement {
    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        [
            self.processors.map(u64::from),
            self.cores.map(u64::from),
            self.memory_mib,
            self.drives.map(u64::from),
            self.drive_bytes,
            self.nics.map(u64::from),
        ]
        .iter()
        .all(|v| v.unwrap_or(0) == 0)
    }
}

/// A list that is only paged (`GET /v1/pod_managers/{uuid}/chassis`).
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// `GET /v1/me/pod_managers`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct GrantedPodManagerQuery {
    /// Only the pod manager with this name.
    pub name: Option<String>,
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct GrantQuery {
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub tenant: Option<TenantId>,
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub pod_manager: Option<PodManagerId>,
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// What a claimed host runs.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageParams {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// `md5`, `sha256` or `sha512`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum_type: Option<crate::ChecksumType>,
    /// `raw`, `qcow2` or `live-iso`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<crate::ImageFormat>,
    /// The disk a `raw` or `qcow2` image is written to (`docs/deploy.md`); the smallest disk of
    /// at least 4 GiB when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_device: Option<RootDeviceHints>,
}

/// Which disk an image is written to, as Ironic's root device hints: every hint given must
/// match the disk (strings compared without case).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RootDeviceHints {
    /// The disk's size in GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// World Wide Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwn: Option<String>,
    /// The device's name: `/dev/sda`, or a `/dev/disk/by-path/` link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// Whether the disk spins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

/// `POST /v1/claims`.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimCreate {
    /// A pod manager granted to the tenant; any granted one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_manager: Option<PodManagerId>,
    /// Labels the host must carry (besides the grant's).
    #[serde(default)]
    pub selector: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cpu: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_memory_mib: Option<u64>,
    pub image: ImageParams,
    /// User data as text, at most 64 KiB; handed to the host as bytes, never parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    /// User data as base64 (for binary user data, gzip for one), at most 64 KiB decoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data_base64: Option<String>,
    /// metaData keys (string values), where the pod manager's template allows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub meta_data: Option<serde_json::Value>,
    /// `network_data.json`: a whole document where the pod manager's network config owner is
    /// `consumer`, additions where it is `layered`; refused where it is `admin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub network_data: Option<serde_json::Value>,
    /// Default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online: Option<bool>,
    /// A host of this chassis (a rack, an enclosure), or of a chassis within it: one of the
    /// chassis the tenant's grant reaches (`GET /v1/me/pod_managers/{uuid}/chassis`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chassis: Option<ChassisId>,
    /// A spread group (anti-affinity): the claims of the tenant at the pod manager in one group
    /// hold hosts of different racks, and only hosts whose rack is known qualify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<String>,
    /// Where no free host matches, compose a node for the claim of the pod manager's resource
    /// blocks (at least `min_cpu` processors, one where it is 0, and `min_memory_mib`), bind
    /// it once it is available, and decompose it when the claim is released. Not with
    /// `selector`, `chassis` or `spread`. Default `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compose: bool,
}

/// `PATCH /v1/claims/{id}`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data_base64: Option<String>,
    /// Replaces the claim's metaData keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub meta_data: Option<serde_json::Value>,
    /// Replaces the claim's networkData, checked against its host once bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub network_data: Option<serde_json::Value>,
}

/// `GET /v1/hosts/{id}/rendered`.
#[derive(Clone, Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RenderedQuery {
    /// `preprovisioning` or `provisioning` (the default; the host must be claimed).
    #[serde(default)]
    pub phase: Option<crate::Phase>,
}

/// `POST /v1/hosts/{id}/config_drive`, `POST /v1/claims/{id}/config_drive`.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigDriveCreate {
    /// For a host (admin): `preprovisioning` or `provisioning` (default). Claims are always
    /// `provisioning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<crate::Phase>,
    /// Seconds until the URL stops working: 60 to 86400, default 3600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
}

/// One range of a pool: `{"start", "end"}` (inclusive), or `{"subnet"}` for a whole subnet
/// minus its network address (and, for IPv4, its broadcast address).
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IpRangeParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnet: Option<String>,
}

/// `POST /v1/ip_pools`.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IpPoolCreate {
    /// Unique among pools.
    pub name: String,
    pub ranges: Vec<IpRangeParams>,
    /// The subnet's prefix length; every range and the gateway lie in that subnet.
    pub prefix: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    #[serde(default)]
    pub dns_servers: Vec<String>,
    /// Addresses inside the ranges that are never handed out.
    #[serde(default)]
    pub reserved: Vec<String>,
    /// Owner to address: that owner always gets that address, nobody else does.
    #[serde(default)]
    pub pre_allocations: BTreeMap<String, String>,
    /// The IPAM plugin and its configuration. Default: the pod manager's IPAM binding where the
    /// pool serves one, else the bundled `ipam-static` (sequential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginBindingParams>,
    /// The pod manager whose hosts the pool serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_manager: Option<PodManagerId>,
    /// Only these tenants' claims, where given; every tenant of the pod manager when empty.
    #[serde(default)]
    pub tenants: Vec<TenantId>,
}

/// `PATCH /v1/ip_pools/{id}`: any field of the create body; absent fields are kept. A change
/// that would leave an allocated address outside the pool is refused.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IpPoolUpdate {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Vec<IpRangeParams>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<u8>,
    /// `null` removes the gateway.
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>)]
    pub gateway: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dns_servers: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_allocations: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginBindingParams>,
    /// `null` detaches the pool from its pod manager.
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>)]
    pub pod_manager: Option<Option<PodManagerId>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenants: Option<Vec<TenantId>>,
}

#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct IpPoolQuery {
    #[serde(default, deserialize_with = "crate::ids::query_id")]
    pub pod_manager: Option<PodManagerId>,
    /// Only the pool with this name.
    pub name: Option<String>,
    /// 1 to 1000; default 100.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// `POST /v1/ip_pools/{id}/claims`.
#[derive(Clone, Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IpClaimCreate {
    /// Who the address is for: `host:<id>`, `claim:<id>`, or any other name
    /// (letters, digits, `.`, `_`, `-`, `:`, `/`; at most 253 characters).
    pub owner: String,
    /// A wanted address: honoured, or refused with 409 naming its holder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

/// `DELETE /v1/tenants/{id}`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TenantDeleteQuery {
    /// Release the tenant's claims (deprovisioning their hosts) and delete it after them.
    pub release: Option<bool>,
}
