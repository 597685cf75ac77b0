//! What a hardware driver reports, in the host's own types: a system with its NICs, media slots
//! and boot settings, the service behind an endpoint, and what the driver can do. Built only
//! from output `validate.rs` checked.

use podium_types::{BootSettings, PowerState};

/// What a driver says it can do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Capabilities {
    pub discover: bool,
    pub power: bool,
    pub boot_override: bool,
    pub virtual_media: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceInfo {
    pub root_link: String,
    pub product: Option<String>,
    pub version: Option<String>,
}

pub use podium_types::{BlockType, CompositionState, MediaSlot, Nic};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemKind {
    System,
    Chassis,
}

/// A system (or chassis) as a driver reported it, checked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct System {
    pub id: String,
    pub kind: SystemKind,
    pub name: String,
    pub uuid: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub cpu_count: u32,
    pub memory_mib: u64,
    pub nics: Vec<Nic>,
    pub power: PowerState,
    pub boot: Option<BootSettings>,
    pub media_slots: Vec<MediaSlot>,
}

/// DMTF's `ChassisType`, as far as the host tells them apart.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChassisType {
    Rack,
    RackGroup,
    Enclosure,
    Blade,
    Sled,
    RackMount,
    StandAlone,
    Drawer,
    Module,
    Zone,
    /// Any other type, by the name the endpoint gave it.
    Other(String),
}

impl ChassisType {
    /// DMTF's name of the type (`RackMount`), as Redfish and Podium's API spell it.
    pub fn dmtf_name(&self) -> &str {
        match self {
            ChassisType::Rack => "Rack",
            ChassisType::RackGroup => "RackGroup",
            ChassisType::Enclosure => "Enclosure",
            ChassisType::Blade => "Blade",
            ChassisType::Sled => "Sled",
            ChassisType::RackMount => "RackMount",
            ChassisType::StandAlone => "StandAlone",
            ChassisType::Drawer => "Drawer",
            ChassisType::Module => "Module",
            ChassisType::Zone => "Zone",
            ChassisType::Other(name) => name,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Ok,
    Warning,
    Critical,
}

/// A chassis as a driver reported it (`discover-chassis`), checked: its `contained_by` names a
/// chassis of the same answer, and no chassis is in itself however far the links go.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Chassis {
    pub id: String,
    pub name: String,
    pub chassis_type: ChassisType,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub location: Option<String>,
    pub power: Option<PowerState>,
    pub health: Option<Health>,
    pub contained_by: Option<String>,
    /// The ids of the systems it holds.
    pub systems: Vec<String>,
}

/// A resource block of a composition service, as a driver reported it, checked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceBlock {
    pub id: String,
    pub name: String,
    pub block_types: Vec<BlockType>,
    pub state: CompositionState,
    pub reserved: bool,
    pub max_compositions: u32,
    pub compositions: u32,
    pub zones: Vec<String>,
    pub processors: u32,
    pub cores: u32,
    pub memory_mib: u64,
    pub drives: u32,
    pub drive_bytes: u64,
    pub nics: u32,
    pub systems: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceZone {
    pub id: String,
    pub name: String,
}

/// At least `min` and at most `max` blocks of a type in one composed system.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BlockLimit {
    pub block_type: BlockType,
    pub min: Option<u32>,
    pub max: Option<u32>,
}

/// A composition service as a driver read it (`read-composition`), checked: every block's zones
/// are zones of the answer, as are the zones offered for composition.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CompositionService {
    pub blocks: Vec<ResourceBlock>,
    pub zones: Vec<ResourceZone>,
    pub offered_zones: Vec<String>,
    pub limits: Vec<BlockLimit>,
}
