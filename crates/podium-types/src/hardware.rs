//! What Podium asks of a machine and hears back: power, boot and virtual media. Defined once
//! here; the API takes them in its bodies, the runtime converts them at the WIT edge, the store
//! keeps them in its own format.

use serde::{Deserialize, Serialize};

crate::names::names! {
    /// A machine's power state, as its driver reports it.
    #[derive(Default)]
    pub enum PowerState ("a power state") {
        On => "on",
        Off => "off",
        PoweringOn => "powering_on",
        PoweringOff => "powering_off",
        #[default]
        Unknown => "unknown",
    }
}

crate::names::names! {
    /// A component's health, as its driver reports it (DMTF's `Health`). (Not `Health`: that
    /// name is the health check's answer in the API document.)
    pub enum ComponentHealth ("a health") {
        Ok => "ok",
        Warning => "warning",
        Critical => "critical",
    }
}

crate::names::names! {
    /// Whether a chassis was in its pod manager's last answer (`missing`: it was not, and it is
    /// kept, as a host is).
    pub enum ChassisState ("a chassis state") {
        Present => "present",
        Missing => "missing",
    }
}

/// How a pod manager's hosts are powered off (`docs/operations.md`). Every field absent is its
/// default.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, utoipa::ToSchema,
)]
#[serde(deny_unknown_fields)]
pub struct PowerSettings {
    /// Seconds a power off (`off`, a claim's `online: false`) waits for the OS to shut down
    /// after asking it (`GracefulShutdown`) before it forces the power off (`ForceOff`); 0
    /// forces it at once. 0 to 3600; default 120.
    #[serde(default = "PowerSettings::default_shutdown_timeout")]
    #[schema(minimum = 0, maximum = 3600)]
    pub shutdown_timeout: u32,
}

impl PowerSettings {
    /// The longest a power off waits for the OS.
    pub const SHUTDOWN_TIMEOUT_MAX: u32 = 3600;

    fn default_shutdown_timeout() -> u32 {
        120
    }
}

impl Default for PowerSettings {
    fn default() -> PowerSettings {
        PowerSettings {
            shutdown_timeout: PowerSettings::default_shutdown_timeout(),
        }
    }
}

/// A power action. `reboot` is read as `force_restart`. `off` asks the OS to shut down and
/// forces the power off only after the site's `power.shutdown_timeout`; `force_off` cuts it at
/// once; `graceful_shutdown` only asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerAction {
    On,
    Off,
    GracefulShutdown,
    ForceOff,
    GracefulRestart,
    #[serde(alias = "reboot")]
    ForceRestart,
}

impl PowerAction {
    /// Every name the API accepts, `reboot` included.
    pub const NAMES: [&'static str; 7] = [
        "on",
        "off",
        "graceful_shutdown",
        "force_off",
        "graceful_restart",
        "force_restart",
        "reboot",
    ];
}

// The API document's schema, under the name it has always had (generated clients keep their
// type names): every accepted name, `reboot` included, which a derive would leave out.
impl utoipa::PartialSchema for PowerAction {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(PowerAction::NAMES))
            .description(Some(
                "A power action; `reboot` is the same as `force_restart`.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for PowerAction {
    fn name() -> std::borrow::Cow<'static, str> {
        "PowerActionParam".into()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BootTarget {
    None,
    Pxe,
    Cd,
    Hdd,
    UefiHttp,
    Usb,
    BiosSetup,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BootPersistence {
    Disabled,
    Once,
    Continuous,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BootMode {
    Uefi,
    Legacy,
}

/// A network interface of a machine, as its driver reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Nic {
    pub id: String,
    pub name: Option<String>,
    pub mac: String,
    pub speed_mbps: Option<u32>,
}

/// A virtual media slot of a machine: what it takes and what is in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MediaSlot {
    pub id: String,
    pub media_types: Vec<MediaType>,
    pub inserted: bool,
    pub image: Option<String>,
}

/// A boot override.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BootSettings {
    pub target: BootTarget,
    pub persistence: BootPersistence,
    pub mode: Option<BootMode>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MediaType {
    Cd,
    Dvd,
    Floppy,
    Usb,
}

/// An image to insert as virtual media.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaRequest {
    pub image_url: String,
    pub media_type: MediaType,
    pub write_protected: bool,
}

/// A virtual media action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MediaAction {
    Insert(MediaRequest),
    Eject { media_type: MediaType },
}

crate::names::names! {
    /// DMTF's `ResourceBlockType`: what a resource block holds (DMTF's names, as blocks and
    /// limits, `MinCompute`, spell them).
    pub enum BlockType ("a resource block type") {
        Compute => "Compute",
        Processor => "Processor",
        Memory => "Memory",
        Network => "Network",
        Storage => "Storage",
        ComputerSystem => "ComputerSystem",
        Expansion => "Expansion",
    }
}

crate::names::names! {
    /// DMTF's `CompositionState` of a resource block.
    pub enum CompositionState ("a composition state") {
        Unused => "Unused",
        Composing => "Composing",
        Composed => "Composed",
        ComposedAndAvailable => "ComposedAndAvailable",
        Failed => "Failed",
        Unavailable => "Unavailable",
    }
}
