//! Claims: a tenant's hold on a host, as the tenant sees it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::requests::ImageParams;
use crate::{ClaimId, ClaimState, HostId, PodManagerId, ShownState, TenantId};

/// A claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClaimView {
    pub id: ClaimId,
    pub state: ClaimState,
    /// Why it waits or failed.
    pub reason: Option<String>,
    pub tenant: TenantId,
    pub pod_manager: PodManagerId,
    pub selector: BTreeMap<String, String>,
    pub min_cpu: i64,
    pub min_memory_mib: i64,
    pub image: ImageParams,
    pub online: bool,
    pub has_user_data: bool,
    /// The chassis the host must stand in (or a chassis within it), as the claim asked.
    pub chassis: Option<crate::ChassisId>,
    /// Its spread group: the tenant's claims at the pod manager in the group hold hosts of
    /// different racks.
    pub spread: Option<String>,
    /// Whether a node is composed for the claim where no free host matches.
    pub compose: bool,
    pub host: Option<ClaimedHostView>,
    pub created_at: crate::Timestamp,
    pub updated_at: crate::Timestamp,
}

/// A NIC of a claimed host, as its consumer sees it (not the driver's id of it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ClaimedNicView {
    pub name: Option<String>,
    pub mac: String,
    pub speed_mbps: Option<u32>,
}

/// The consumer's view of its host: hardware data, power and provisioning state. Never the BMC,
/// its credentials, the pod manager's URL or the driver's system id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClaimedHostView {
    pub id: HostId,
    pub name: String,
    /// Where it stands, outermost first (its rack, its enclosure, its blade); empty where the
    /// site names no chassis.
    pub chassis: Vec<super::ChassisRef>,
    pub uuid: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub cpu_count: i64,
    pub memory_mib: i64,
    pub nics: Vec<ClaimedNicView>,
    pub power_state: crate::PowerState,
    pub provisioning_state: ShownState,
    /// Addresses IPAM holds for the claim and its host.
    pub addresses: Vec<AddressView>,
}

/// An address the claim's host has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AddressView {
    pub address: String,
    pub prefix: u8,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
}
