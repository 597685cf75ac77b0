//! Chassis: the component tree behind a pod manager (racks, enclosures, blades), as the admin
//! sees it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ChassisId, ChassisState, ComponentHealth, HostId, PodManagerId, PowerState};

/// A chassis behind a pod manager, as its last sync found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChassisView {
    pub id: ChassisId,
    pub pod_manager: PodManagerId,
    /// The driver's id of the chassis (for Redfish, its `@odata.id`).
    pub chassis_id: String,
    pub name: String,
    /// DMTF's `ChassisType`: `Rack`, `RackGroup`, `Enclosure`, `Blade`, `Sled`, `RackMount`,
    /// `StandAlone`, `Drawer`, `Module`, `Zone`, or another name as the service gave it.
    pub chassis_type: String,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    /// Where it stands, in one line (`row North, rack WEB43, U12`).
    pub location: Option<String>,
    /// `null` where the service reports none.
    pub power_state: Option<PowerState>,
    pub health: Option<ComponentHealth>,
    /// The chassis it stands in; `null` at the top of the tree.
    pub parent: Option<ChassisId>,
    /// The chassis it stands in, outermost first (a blade's: its rack, then its enclosure).
    pub path: Vec<ChassisRef>,
    /// The hosts it holds itself (not those of the chassis within it).
    pub hosts: Vec<HostId>,
    /// `missing` when the last sync did not report it.
    pub state: ChassisState,
    pub created_at: crate::Timestamp,
    pub updated_at: crate::Timestamp,
    pub last_seen_at: crate::Timestamp,
}

/// A chassis a tenant's grant reaches: where its hosts may stand, and what a claim may ask for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GrantedChassisView {
    pub id: ChassisId,
    pub name: String,
    /// DMTF's `ChassisType` (`Rack`, `Enclosure`, `Blade`, ...).
    pub chassis_type: String,
    pub location: Option<String>,
    /// The chassis it stands in, where the grant reaches it; `null` otherwise.
    pub parent: Option<ChassisId>,
    /// The chassis it stands in that the grant reaches, outermost first.
    pub path: Vec<ChassisRef>,
}

/// A chassis named in a path: a host's, or another chassis's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChassisRef {
    pub id: ChassisId,
    pub name: String,
    pub chassis_type: String,
}
