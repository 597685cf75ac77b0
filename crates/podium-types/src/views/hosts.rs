//! Hosts: the machines behind pod managers, as the admin sees them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::TlsView;
use crate::{HostId, HostState, PodManagerId, ShownState};

/// A machine behind a pod manager.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HostView {
    pub id: HostId,
    pub pod_manager: PodManagerId,
    /// The chassis it stands in, outermost first (its rack, its enclosure, its blade), as the
    /// last sync of its pod manager's chassis found them; empty where they name none.
    pub chassis: Vec<super::ChassisRef>,
    /// The driver's id of the system.
    pub system_id: String,
    /// `system` or `chassis`.
    pub kind: crate::HostKind,
    pub name: String,
    pub uuid: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub cpu_count: i64,
    pub memory_mib: i64,
    pub nics: Vec<crate::Nic>,
    pub media_slots: Vec<crate::MediaSlot>,
    /// The boot override the BMC last reported; `null` where it reports none.
    pub boot: Option<crate::BootSettings>,
    pub power_state: crate::PowerState,
    /// `registering`, `inspecting`, `available`, `provisioning`, `provisioned`,
    /// `deprovisioning`, `error`, `missing`, or `maintenance` (`docs/host-lifecycle.md`).
    pub state: ShownState,
    /// While `state` is `error` (or an error lies under a maintenance): what failed.
    pub error: Option<HostErrorView>,
    /// While the host is in maintenance.
    pub maintenance: Option<MaintenanceView>,
    pub labels: BTreeMap<String, String>,
    /// The NIC the host boots from, as the admin set it; `null`: the first of `nics`.
    pub boot_mac: Option<String>,
    /// The disk a `raw` or `qcow2` image is written to when the claim names none, as the admin
    /// set it; `null`: the claim's hints, else the smallest disk of at least 4 GiB.
    pub root_device: Option<crate::requests::RootDeviceHints>,
    /// The host's own BMC, where it has one (its credentials are write-only).
    pub bmc: Option<BmcView>,
    /// The BIOS's firmware version as the last read of the host's firmware found it (an
    /// inspection, an update, `GET /v1/hosts/{id}/firmware`); `null`: never read, or not
    /// reported.
    pub bios_version: Option<String>,
    /// The BMC's firmware version, read as `bios_version` is.
    pub bmc_version: Option<String>,
    /// Whether the disks may hold a tenant's data, and their last cleaning.
    pub disks: DisksView,
    pub created_at: crate::Timestamp,
    pub updated_at: crate::Timestamp,
    pub last_seen_at: crate::Timestamp,
}

/// What may be on a host's disks (`docs/deploy.md`, cleaning).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DisksView {
    /// The claim whose data the disks may hold: an image was written for it, or it was given
    /// the machine to boot, and no cleaning succeeded since; `null`: nothing of a claim's.
    pub may_hold_data_of: Option<crate::ClaimId>,
    /// The last cleaning of the disks between tenants; `null`: never cleaned.
    pub last_cleaning: Option<crate::CleaningRecord>,
    /// What a release of this host erases now, by its pod manager's settings, and why.
    pub cleaning: crate::CleaningInEffect,
}

/// Why a host is in `error`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HostErrorView {
    /// What failed: `registration`, `inspection`, `provisioning`, `deprovisioning` or
    /// `power_management`.
    #[serde(rename = "type")]
    pub error_type: crate::HostErrorKind,
    /// What the failed operation said.
    pub message: String,
    pub at: Option<crate::Timestamp>,
    /// The state the error interrupted.
    pub state: Option<HostState>,
}

/// A maintenance the admin set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct MaintenanceView {
    pub reason: String,
    pub since: crate::Timestamp,
    /// The state underneath, which operations already running go on changing.
    pub state: HostState,
}

/// A host's own BMC.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct BmcView {
    pub url: String,
    pub has_auth: bool,
    pub tls: TlsView,
}

/// The deploy agent (the Ironic Python Agent in the ramdisk) a host runs or is booting
/// (`GET /v1/hosts/{id}/agent`, `docs/deploy.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AgentView {
    /// `booting` (no lookup yet), `looked_up` (its token issued) or `connected` (it heartbeats,
    /// and Podium reached it at `address` over TLS with the certificate it announced).
    pub state: AgentState,
    /// The address Podium gave the host's ramdisk; the only one it calls the agent at.
    pub address: String,
    /// When Podium booted the ramdisk.
    pub expected_since: crate::Timestamp,
    /// When the agent looked up and was issued its token.
    pub looked_up_at: Option<crate::Timestamp>,
    /// The agent's API, as its latest heartbeat announced it.
    pub url: Option<String>,
    /// The agent's version, from its heartbeat.
    pub version: Option<String>,
    pub last_heartbeat_at: Option<crate::Timestamp>,
    pub heartbeats: u64,
    /// When Podium last reached the agent as announced.
    pub verified_at: Option<crate::Timestamp>,
}

/// How far a host's agent got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    Booting,
    LookedUp,
    Connected,
}
