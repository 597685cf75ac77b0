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
    pub network_config_owner: NetworkConfigOwner,
    /// As the admin set them; `null` is the default.
    pub limits: OperationLimits,
    /// The ramdisk an inspection boots where the site has DHCP-less pools; `null`: none.
    pub preprovisioning_image: Option<String>,
    pub has_auth: bool,
    pub created_at: String,
    pub updated_at: String,
}

/// A change of a pod manager's status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StatusChangeView {
    pub status: String,
    pub message: Option<String>,
    pub at: String,
}
