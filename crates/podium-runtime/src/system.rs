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

pub use podium_types::{MediaSlot, Nic};

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
