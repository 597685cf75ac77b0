//! Pod managers: the registry of sites.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::requests::{NetworkConfigOwner, OperationLimits};
use crate::{PluginBinding, PodManagerId};

/// How the host checks a BMC's or a Redfish service's certificate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TlsView {
    pub verify: bool,
    /// Whether a CA bundle is set.
    pub ca_bundle: bool,
    /// The pinned certificate's SHA-256, if one is pinned.
    pub pinned_sha256: Option<String>,
}

/// A pod manager. Its credentials are write-only: `has_auth` says whether there are any.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PodManagerView {
    pub uuid: PodManagerId,
    pub name: String,
    pub url: String,
    pub description: String,
    pub location: String,
    /// `unknown` until the first probe, then `online` or `offline`.
    pub status: crate::PodManagerStatus,
    /// Why the pod manager is offline, in words.
    pub status_message: Option<String>,
    pub last_probe_at: Option<crate::Timestamp>,
    /// The service root the driver found.
    pub redfish_link: Option<String>,
    pub bookmark_link: String,
    pub tls: TlsView,
    pub driver: PluginBinding,
    pub ipam: PluginBinding,
    /// The renderer in effect: the one the admin bound, or the bundled `render-openstack`
    /// (its newest version) where `renderer_default`; `null` only where neither is installed.
    pub renderer: Option<PluginBinding>,
    /// The admin bound no renderer: the default renders this pod manager's documents, and
    /// follows it when a newer version is installed.
    pub renderer_default: bool,
    pub network_config_owner: NetworkConfigOwner,
    /// As the admin set them; `null` is the default.
    pub limits: OperationLimits,
    /// The ramdisk an inspection boots where the site has DHCP-less pools; `null`: none.
    pub preprovisioning_image: Option<String>,
    /// How the site's hosts take disk images and are cleaned after them.
    pub deploy: crate::DeploySettings,
    /// What a release erases now, as `deploy` and the deploy ramdisk allow, and why.
    pub cleaning: crate::CleaningInEffect,
    /// How the site's hosts are powered off.
    pub power: crate::PowerSettings,
    /// What tenants may change of the hosts they claim here.
    pub tenant_firmware: crate::TenantFirmware,
    /// The firmware settings every host is given before it is `available`.
    pub firmware_profile: crate::FirmwareProfile,
    pub has_auth: bool,
    pub created_at: crate::Timestamp,
    pub updated_at: crate::Timestamp,
}

/// A pod manager as a tenant granted it sees it (`GET /v1/me/pod_managers`): where it is and
/// what the grant lets the tenant claim there; never its URL, credentials or plugins.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GrantedPodManagerView {
    pub uuid: PodManagerId,
    pub name: String,
    pub description: String,
    pub location: String,
    /// `unknown` until the first probe, then `online` or `offline`.
    pub status: crate::PodManagerStatus,
    /// Who writes a claimed host's network config there: the site (`admin`), the claim
    /// (`consumer`), or the claim on top of the site's (`layered`).
    pub network_config_owner: NetworkConfigOwner,
    /// What the tenant may change of the hosts it claims there: BIOS attributes, secure boot,
    /// firmware updates.
    pub tenant_firmware: crate::TenantFirmware,
    /// What a release of a host claimed there erases of the tenant's data, and why.
    pub cleaning: crate::CleaningInEffect,
    pub grant: TenantGrantView,
}

/// What a grant lets its tenant claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TenantGrantView {
    pub id: crate::GrantId,
    /// Labels every host the tenant claims there carries; every host when empty.
    pub selector: std::collections::BTreeMap<String, String>,
    /// At most this many hosts at once; `null` for no limit.
    pub max_hosts: Option<i64>,
    /// Only the hosts of this chassis and of the chassis within it; `null`: every host.
    pub chassis: Option<crate::ChassisId>,
    pub created_at: crate::Timestamp,
}

/// A change of a pod manager's status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StatusChangeView {
    pub status: crate::PodManagerStatus,
    pub message: Option<String>,
    pub at: crate::Timestamp,
}
