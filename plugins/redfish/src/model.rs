//! The parts of Redfish payloads the driver reads, as serde types. They serialize back to JSON
//! under the same names, which is how a call keeps what it parsed between its steps (the SDK's
//! `exchange::memo`) instead of the payloads.
//!
//! BMCs differ widely in what they fill in, so every field is optional and read leniently: a
//! field of the wrong type, `null` or an empty string reads as absent instead of failing the
//! whole payload. What the driver cannot do without (a collection's `Members`, a member's or a
//! link's `@odata.id`) is checked where it is used, so the error can name it.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// `{"@odata.id": "/redfish/v1/Systems"}`.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub(crate) struct Link {
    #[serde(rename = "@odata.id", default, deserialize_with = "text")]
    pub(crate) odata_id: Option<String>,
}

/// `GET /redfish/v1`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct ServiceRoot {
    #[serde(rename = "@odata.id", default, deserialize_with = "text")]
    pub(crate) odata_id: Option<String>,
    #[serde(rename = "RedfishVersion", default, deserialize_with = "text")]
    pub(crate) redfish_version: Option<String>,
    #[serde(rename = "Product", default, deserialize_with = "text")]
    pub(crate) product: Option<String>,
    #[serde(rename = "Vendor", default, deserialize_with = "text")]
    pub(crate) vendor: Option<String>,
    #[serde(rename = "Systems", default, deserialize_with = "lenient")]
    pub(crate) systems: Option<Link>,
    #[serde(rename = "Chassis", default, deserialize_with = "lenient")]
    pub(crate) chassis: Option<Link>,
    #[serde(rename = "CompositionService", default, deserialize_with = "lenient")]
    pub(crate) composition_service: Option<Link>,
    #[serde(rename = "Registries", default, deserialize_with = "lenient")]
    pub(crate) registries: Option<Link>,
    #[serde(rename = "UpdateService", default, deserialize_with = "lenient")]
    pub(crate) update_service: Option<Link>,
}

/// `GET /redfish/v1/Systems/{id}`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct ComputerSystem {
    #[serde(rename = "@odata.id", default, deserialize_with = "text")]
    pub(crate) odata_id: Option<String>,
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "Name", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
    #[serde(rename = "UUID", default, deserialize_with = "text")]
    pub(crate) uuid: Option<String>,
    #[serde(rename = "Manufacturer", default, deserialize_with = "text")]
    pub(crate) manufacturer: Option<String>,
    #[serde(rename = "Model", default, deserialize_with = "text")]
    pub(crate) model: Option<String>,
    #[serde(rename = "SerialNumber", default, deserialize_with = "text")]
    pub(crate) serial_number: Option<String>,
    #[serde(rename = "PowerState", default, deserialize_with = "text")]
    pub(crate) power_state: Option<String>,
    #[serde(rename = "ProcessorSummary", default, deserialize_with = "lenient")]
    pub(crate) processor_summary: Option<ProcessorSummary>,
    #[serde(rename = "MemorySummary", default, deserialize_with = "lenient")]
    pub(crate) memory_summary: Option<MemorySummary>,
    #[serde(rename = "Boot", default, deserialize_with = "lenient")]
    pub(crate) boot: Option<Boot>,
    #[serde(rename = "EthernetInterfaces", default, deserialize_with = "lenient")]
    pub(crate) ethernet_interfaces: Option<Link>,
    #[serde(rename = "VirtualMedia", default, deserialize_with = "lenient")]
    pub(crate) virtual_media: Option<Link>,
    #[serde(rename = "Bios", default, deserialize_with = "lenient")]
    pub(crate) bios: Option<Link>,
    #[serde(rename = "SecureBoot", default, deserialize_with = "lenient")]
    pub(crate) secure_boot: Option<Link>,
    #[serde(rename = "Processors", default, deserialize_with = "lenient")]
    pub(crate) processors: Option<Link>,
    #[serde(rename = "Memory", default, deserialize_with = "lenient")]
    pub(crate) memory: Option<Link>,
    #[serde(rename = "Storage", default, deserialize_with = "lenient")]
    pub(crate) storage: Option<Link>,
    #[serde(rename = "SimpleStorage", default, deserialize_with = "lenient")]
    pub(crate) simple_storage: Option<Link>,
    #[serde(rename = "Links", default, deserialize_with = "lenient")]
    pub(crate) links: Option<SystemLinks>,
    #[serde(rename = "Actions", default, deserialize_with = "lenient")]
    pub(crate) actions: Option<SystemActions>,
    #[serde(rename = "BiosVersion", default, deserialize_with = "text")]
    pub(crate) bios_version: Option<String>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct ProcessorSummary {
    #[serde(rename = "Count", default, deserialize_with = "number")]
    pub(crate) count: Option<f64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct MemorySummary {
    #[serde(rename = "TotalSystemMemoryGiB", default, deserialize_with = "number")]
    pub(crate) total_system_memory_gib: Option<f64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Boot {
    #[serde(
        rename = "BootSourceOverrideTarget",
        default,
        deserialize_with = "text"
    )]
    pub(crate) target: Option<String>,
    #[serde(
        rename = "BootSourceOverrideEnabled",
        default,
        deserialize_with = "text"
    )]
    pub(crate) enabled: Option<String>,
    #[serde(rename = "BootSourceOverrideMode", default, deserialize_with = "text")]
    pub(crate) mode: Option<String>,
    #[serde(
        rename = "BootSourceOverrideTarget@Redfish.AllowableValues",
        default,
        deserialize_with = "strings"
    )]
    pub(crate) allowed_targets: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct SystemLinks {
    #[serde(rename = "ManagedBy", default, deserialize_with = "links")]
    pub(crate) managed_by: Option<Vec<Link>>,
    #[serde(rename = "Chassis", default, deserialize_with = "links")]
    pub(crate) chassis: Option<Vec<Link>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct SystemActions {
    #[serde(
        rename = "#ComputerSystem.Reset",
        default,
        deserialize_with = "lenient"
    )]
    pub(crate) reset: Option<ResetAction>,
    /// What a chassis advertises (and a chassis id a 0.1.0 host passed back from `discover`).
    #[serde(rename = "#Chassis.Reset", default, deserialize_with = "lenient")]
    pub(crate) chassis_reset: Option<ResetAction>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct ResetAction {
    #[serde(default, deserialize_with = "text")]
    pub(crate) target: Option<String>,
    #[serde(
        rename = "ResetType@Redfish.AllowableValues",
        default,
        deserialize_with = "strings"
    )]
    pub(crate) allowed: Option<Vec<String>>,
}

/// A member of a system's `EthernetInterfaces`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct EthernetInterface {
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "Name", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
    #[serde(rename = "MACAddress", default, deserialize_with = "text")]
    pub(crate) mac_address: Option<String>,
    #[serde(rename = "PermanentMACAddress", default, deserialize_with = "text")]
    pub(crate) permanent_mac_address: Option<String>,
    #[serde(rename = "SpeedMbps", default, deserialize_with = "number")]
    pub(crate) speed_mbps: Option<f64>,
    /// `LinkUp`, `LinkDown`, `NoLink`.
    #[serde(rename = "LinkStatus", default, deserialize_with = "text")]
    pub(crate) link_status: Option<String>,
    /// `Physical`, or `Virtual` (a VLAN, say, over a physical NIC, with its MAC).
    #[serde(rename = "EthernetInterfaceType", default, deserialize_with = "text")]
    pub(crate) interface_type: Option<String>,
}

/// `GET /redfish/v1/Managers/{id}`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Manager {
    #[serde(rename = "VirtualMedia", default, deserialize_with = "lenient")]
    pub(crate) virtual_media: Option<Link>,
    #[serde(rename = "Name", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
    #[serde(rename = "FirmwareVersion", default, deserialize_with = "text")]
    pub(crate) firmware_version: Option<String>,
}

/// A member of a `VirtualMedia` collection: one slot.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct VirtualMedia {
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "MediaTypes", default, deserialize_with = "strings")]
    pub(crate) media_types: Option<Vec<String>>,
    #[serde(rename = "Inserted", default, deserialize_with = "lenient")]
    pub(crate) inserted: Option<bool>,
    #[serde(rename = "Image", default, deserialize_with = "text")]
    pub(crate) image: Option<String>,
    #[serde(rename = "Actions", default, deserialize_with = "lenient")]
    pub(crate) actions: Option<VirtualMediaActions>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct VirtualMediaActions {
    #[serde(
        rename = "#VirtualMedia.InsertMedia",
        default,
        deserialize_with = "lenient"
    )]
    pub(crate) insert: Option<ActionTarget>,
    #[serde(
        rename = "#VirtualMedia.EjectMedia",
        default,
        deserialize_with = "lenient"
    )]
    pub(crate) eject: Option<ActionTarget>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct ActionTarget {
    #[serde(default, deserialize_with = "text")]
    pub(crate) target: Option<String>,
}

/// `GET /redfish/v1/Chassis/{id}`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Chassis {
    #[serde(rename = "@odata.id", default, deserialize_with = "text")]
    pub(crate) odata_id: Option<String>,
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "Name", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
    #[serde(rename = "UUID", default, deserialize_with = "text")]
    pub(crate) uuid: Option<String>,
    #[serde(rename = "Manufacturer", default, deserialize_with = "text")]
    pub(crate) manufacturer: Option<String>,
    #[serde(rename = "Model", default, deserialize_with = "text")]
    pub(crate) model: Option<String>,
    #[serde(rename = "SerialNumber", default, deserialize_with = "text")]
    pub(crate) serial_number: Option<String>,
    #[serde(rename = "PowerState", default, deserialize_with = "text")]
    pub(crate) power_state: Option<String>,
    #[serde(rename = "ChassisType", default, deserialize_with = "text")]
    pub(crate) chassis_type: Option<String>,
    #[serde(rename = "Status", default, deserialize_with = "lenient")]
    pub(crate) status: Option<Status>,
    #[serde(rename = "Location", default, deserialize_with = "lenient")]
    pub(crate) location: Option<Location>,
    #[serde(rename = "Links", default, deserialize_with = "lenient")]
    pub(crate) links: Option<ChassisLinks>,
    #[serde(rename = "Actions", default, deserialize_with = "lenient")]
    pub(crate) actions: Option<SystemActions>,
}

/// `GET /redfish/v1/CompositionService`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct CompositionService {
    #[serde(rename = "ServiceEnabled", default, deserialize_with = "lenient")]
    pub(crate) service_enabled: Option<bool>,
    #[serde(rename = "ResourceBlocks", default, deserialize_with = "lenient")]
    pub(crate) resource_blocks: Option<Link>,
    #[serde(rename = "ResourceZones", default, deserialize_with = "lenient")]
    pub(crate) resource_zones: Option<Link>,
    #[serde(rename = "Actions", default, deserialize_with = "lenient")]
    pub(crate) actions: Option<CompositionActions>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct CompositionActions {
    #[serde(
        rename = "#CompositionService.Compose",
        default,
        deserialize_with = "lenient"
    )]
    pub(crate) compose: Option<ActionTarget>,
}

/// A resource block of a composition service.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct ResourceBlock {
    #[serde(rename = "@odata.id", default, deserialize_with = "text")]
    pub(crate) odata_id: Option<String>,
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "Name", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
    #[serde(rename = "ResourceBlockType", default, deserialize_with = "strings")]
    pub(crate) block_types: Option<Vec<String>>,
    #[serde(rename = "CompositionStatus", default, deserialize_with = "lenient")]
    pub(crate) status: Option<CompositionStatus>,
    #[serde(rename = "Processors", default, deserialize_with = "links")]
    pub(crate) processors: Option<Vec<Link>>,
    #[serde(rename = "Memory", default, deserialize_with = "links")]
    pub(crate) memory: Option<Vec<Link>>,
    #[serde(rename = "Drives", default, deserialize_with = "links")]
    pub(crate) drives: Option<Vec<Link>>,
    #[serde(rename = "EthernetInterfaces", default, deserialize_with = "links")]
    pub(crate) nics: Option<Vec<Link>>,
    #[serde(rename = "Links", default, deserialize_with = "lenient")]
    pub(crate) links: Option<ResourceBlockLinks>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct CompositionStatus {
    #[serde(rename = "CompositionState", default, deserialize_with = "text")]
    pub(crate) state: Option<String>,
    #[serde(rename = "Reserved", default, deserialize_with = "lenient")]
    pub(crate) reserved: Option<bool>,
    #[serde(rename = "MaxCompositions", default, deserialize_with = "number")]
    pub(crate) max_compositions: Option<f64>,
    #[serde(rename = "NumberOfCompositions", default, deserialize_with = "number")]
    pub(crate) compositions: Option<f64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct ResourceBlockLinks {
    #[serde(rename = "Zones", default, deserialize_with = "links")]
    pub(crate) zones: Option<Vec<Link>>,
    #[serde(rename = "ComputerSystems", default, deserialize_with = "links")]
    pub(crate) computer_systems: Option<Vec<Link>>,
}

/// A resource zone, or any resource read only for its name.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Named {
    #[serde(rename = "@odata.id", default, deserialize_with = "text")]
    pub(crate) odata_id: Option<String>,
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "Name", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
}

/// What a block's processor, memory module or drive adds up to.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Part {
    #[serde(rename = "TotalCores", default, deserialize_with = "number")]
    pub(crate) cores: Option<f64>,
    #[serde(rename = "CapacityMiB", default, deserialize_with = "number")]
    pub(crate) capacity_mib: Option<f64>,
    #[serde(rename = "CapacityBytes", default, deserialize_with = "number")]
    pub(crate) capacity_bytes: Option<f64>,
}

/// `Status` of a resource.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Status {
    #[serde(rename = "Health", default, deserialize_with = "text")]
    pub(crate) health: Option<String>,
}

/// A chassis' `Location` (Resource.Location): where it stands in a rack, where it sits in its
/// parent, or (before Redfish 1.5) a line of `Info`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Location {
    #[serde(rename = "Placement", default, deserialize_with = "lenient")]
    pub(crate) placement: Option<Placement>,
    #[serde(rename = "PartLocation", default, deserialize_with = "lenient")]
    pub(crate) part_location: Option<PartLocation>,
    #[serde(rename = "Info", default, deserialize_with = "text")]
    pub(crate) info: Option<String>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Placement {
    #[serde(rename = "Row", default, deserialize_with = "text")]
    pub(crate) row: Option<String>,
    #[serde(rename = "Rack", default, deserialize_with = "text")]
    pub(crate) rack: Option<String>,
    #[serde(rename = "RackOffset", default, deserialize_with = "number")]
    pub(crate) rack_offset: Option<f64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct PartLocation {
    #[serde(rename = "ServiceLabel", default, deserialize_with = "text")]
    pub(crate) service_label: Option<String>,
    #[serde(rename = "LocationType", default, deserialize_with = "text")]
    pub(crate) location_type: Option<String>,
    #[serde(rename = "LocationOrdinalValue", default, deserialize_with = "number")]
    pub(crate) ordinal: Option<f64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct ChassisLinks {
    #[serde(rename = "ContainedBy", default, deserialize_with = "lenient")]
    pub(crate) contained_by: Option<Link>,
    #[serde(rename = "Contains", default, deserialize_with = "links")]
    pub(crate) contains: Option<Vec<Link>>,
    #[serde(rename = "ComputerSystems", default, deserialize_with = "links")]
    pub(crate) computer_systems: Option<Vec<Link>>,
}

/// `GET .../Bios`, and its settings object (the same schema: the values staged there).
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Bios {
    #[serde(rename = "AttributeRegistry", default, deserialize_with = "text")]
    pub(crate) attribute_registry: Option<String>,
    /// The values as the BMC sends them: the registry types them.
    #[serde(rename = "Attributes", default, deserialize_with = "lenient")]
    pub(crate) attributes: Option<serde_json::Map<String, Value>>,
    #[serde(rename = "@Redfish.Settings", default, deserialize_with = "lenient")]
    pub(crate) settings: Option<Settings>,
    #[serde(rename = "Actions", default, deserialize_with = "lenient")]
    pub(crate) actions: Option<BiosActions>,
}

/// `GET /redfish/v1/UpdateService`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct UpdateService {
    #[serde(rename = "FirmwareInventory", default, deserialize_with = "lenient")]
    pub(crate) firmware_inventory: Option<Link>,
    #[serde(rename = "Actions", default, deserialize_with = "lenient")]
    pub(crate) actions: Option<UpdateActions>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct UpdateActions {
    #[serde(
        rename = "#UpdateService.SimpleUpdate",
        default,
        deserialize_with = "lenient"
    )]
    pub(crate) simple_update: Option<SimpleUpdateAction>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct SimpleUpdateAction {
    #[serde(default, deserialize_with = "text")]
    pub(crate) target: Option<String>,
    #[serde(
        rename = "TransferProtocol@Redfish.AllowableValues",
        default,
        deserialize_with = "strings"
    )]
    pub(crate) transfer_protocols: Option<Vec<String>>,
}

/// A member of `FirmwareInventory`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct SoftwareInventory {
    #[serde(rename = "@odata.id", default, deserialize_with = "text")]
    pub(crate) odata_id: Option<String>,
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "Name", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
    #[serde(rename = "Version", default, deserialize_with = "text")]
    pub(crate) version: Option<String>,
    #[serde(rename = "Updateable", default, deserialize_with = "lenient")]
    pub(crate) updateable: Option<bool>,
    #[serde(rename = "RelatedItem", default, deserialize_with = "links")]
    pub(crate) related_item: Option<Vec<Link>>,
}

/// `GET` of a `Task` (or of a task monitor, which answers one while the task runs).
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Task {
    #[serde(rename = "TaskState", default, deserialize_with = "text")]
    pub(crate) task_state: Option<String>,
    #[serde(rename = "TaskStatus", default, deserialize_with = "text")]
    pub(crate) task_status: Option<String>,
    #[serde(rename = "PercentComplete", default, deserialize_with = "number")]
    pub(crate) percent_complete: Option<f64>,
    #[serde(rename = "Messages", default, deserialize_with = "objects")]
    pub(crate) messages: Option<Vec<TaskMessage>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct TaskMessage {
    #[serde(rename = "Message", default, deserialize_with = "text")]
    pub(crate) message: Option<String>,
}

/// `GET .../SecureBoot`.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct SecureBoot {
    #[serde(rename = "SecureBootEnable", default, deserialize_with = "lenient")]
    pub(crate) enable: Option<bool>,
    /// `Enabled`, `Disabled`.
    #[serde(rename = "SecureBootCurrentBoot", default, deserialize_with = "text")]
    pub(crate) current_boot: Option<String>,
    #[serde(rename = "SecureBootMode", default, deserialize_with = "text")]
    pub(crate) mode: Option<String>,
}

/// `@Redfish.Settings`: where changes are staged, and when they may apply.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct Settings {
    #[serde(rename = "SettingsObject", default, deserialize_with = "lenient")]
    pub(crate) settings_object: Option<Link>,
    #[serde(rename = "SupportedApplyTimes", default, deserialize_with = "strings")]
    pub(crate) supported_apply_times: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct BiosActions {
    #[serde(rename = "#Bios.ResetBios", default, deserialize_with = "lenient")]
    pub(crate) reset_bios: Option<ActionTarget>,
}

/// A member of `GET /redfish/v1/Registries`: where a registry is published.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct RegistryFile {
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "Registry", default, deserialize_with = "text")]
    pub(crate) registry: Option<String>,
    #[serde(rename = "Location", default, deserialize_with = "objects")]
    pub(crate) location: Option<Vec<RegistryLocation>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct RegistryLocation {
    #[serde(rename = "Language", default, deserialize_with = "text")]
    pub(crate) language: Option<String>,
    /// The registry served by this service (`PublicationUri`, on the internet, is never read).
    #[serde(rename = "Uri", default, deserialize_with = "text")]
    pub(crate) uri: Option<String>,
}

/// An `AttributeRegistry`: what each BIOS attribute may hold.
#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct AttributeRegistry {
    #[serde(rename = "Id", default, deserialize_with = "text")]
    pub(crate) id: Option<String>,
    #[serde(rename = "RegistryEntries", default, deserialize_with = "lenient")]
    pub(crate) entries: Option<RegistryEntries>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct RegistryEntries {
    #[serde(rename = "Attributes", default, deserialize_with = "objects")]
    pub(crate) attributes: Option<Vec<RegistryAttribute>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct RegistryAttribute {
    #[serde(rename = "AttributeName", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
    /// `Enumeration`, `String`, `Integer`, `Boolean`, `Password`.
    #[serde(rename = "Type", default, deserialize_with = "text")]
    pub(crate) kind: Option<String>,
    #[serde(rename = "DisplayName", default, deserialize_with = "text")]
    pub(crate) display_name: Option<String>,
    #[serde(rename = "Value", default, deserialize_with = "objects")]
    pub(crate) values: Option<Vec<RegistryValue>>,
    #[serde(rename = "ReadOnly", default, deserialize_with = "lenient")]
    pub(crate) read_only: Option<bool>,
    #[serde(rename = "Immutable", default, deserialize_with = "lenient")]
    pub(crate) immutable: Option<bool>,
    #[serde(rename = "ResetRequired", default, deserialize_with = "lenient")]
    pub(crate) reset_required: Option<bool>,
    #[serde(rename = "LowerBound", default, deserialize_with = "number")]
    pub(crate) lower_bound: Option<f64>,
    #[serde(rename = "UpperBound", default, deserialize_with = "number")]
    pub(crate) upper_bound: Option<f64>,
    #[serde(rename = "MinLength", default, deserialize_with = "number")]
    pub(crate) min_length: Option<f64>,
    #[serde(rename = "MaxLength", default, deserialize_with = "number")]
    pub(crate) max_length: Option<f64>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub(crate) struct RegistryValue {
    #[serde(rename = "ValueName", default, deserialize_with = "text")]
    pub(crate) name: Option<String>,
}

/// Any value that does not deserialize as `T` reads as absent.
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

/// A string with something in it, trimmed; anything else reads as absent.
fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(value
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned))
}

/// A finite number (some BMCs send integers as `2.0`); anything else reads as absent.
fn number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(value.as_f64().filter(|n| n.is_finite()))
}

/// The strings of a list, skipping anything else in it.
fn strings<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(value.as_array().map(|items| {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    }))
}

/// The link objects of a list, skipping anything else in it.
fn links<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<Link>>, D::Error> {
    objects(deserializer)
}

/// The objects of a list that read as `T`, skipping anything else in it.
fn objects<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    Ok(value.as_array().map(|items| {
        items
            .iter()
            .filter(|item| item.is_object())
            .filter_map(|item| serde_json::from_value(item.clone()).ok())
            .collect()
    }))
}
