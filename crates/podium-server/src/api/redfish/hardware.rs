//! What a system holds beyond its summary, as a BMC's Redfish service shows it: `Bios` (its
//! `Attributes`, and `Bios/Settings` with what is staged), the attribute registry that types
//! them (one per system, under `Registries`, found as Ironic and sushy find a BMC's),
//! `SecureBoot`, `Processors`, `Memory`, `SimpleStorage`, `Storage` and its `Drives`. Each is
//! read live through the host's driver; a BIOS or secure boot the BMC lacks is not found (404),
//! a part of the inventory it lacks an empty collection.

use std::sync::Arc;

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use serde_json::{Map, Value, json};

use podium_app::app::Podium;
use podium_app::error::Error;
use podium_app::hardware::HardwareOf;
use podium_types::{
    ApplyTime, BiosAttributeType, BiosChange, BiosValue, HardwareInventory, HostId,
    SecureBootChange, StorageController, TenantScope,
};

use super::systems::pick;
use super::{
    Answer, ROOT, RedfishError, RfCaller, accepted, collection, missing, object, optional_object,
    resource, segment, system_uri,
};

/// The prefix of a system's attribute registry's `Id`: the host's id follows.
const REGISTRY: &str = "BiosAttributeRegistry.";

/// A part the host's BMC lacks is not found here; any other failure as the API answers it.
fn part_error(e: Error, uri: &str) -> RedfishError {
    match e {
        Error::Conflict { code, .. } if code.is_unsupported() => missing(uri),
        e => e.into(),
    }
}

/// A read or change of what the BMC may lack: its answer, or not found where it lacks it.
async fn of_part<T>(
    call: impl Future<Output = Result<T, Error>>,
    uri: &str,
) -> Result<T, RedfishError> {
    call.await.map_err(|e| part_error(e, uri))
}

fn registry_id(id: &HostId) -> String {
    format!("{REGISTRY}{id}")
}

fn apply_time_name(t: ApplyTime) -> &'static str {
    super::systems::name_of(&APPLY_TIMES, t)
}

/// `GET Systems/{id}/Bios`: the current attributes (a password's value is never shown), the
/// registry that types them, and where changes are staged.
pub(super) async fn bios_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let host = HostId::from(id.clone());
    let uri = format!("{}/Bios", system_uri(&host));
    let bios = of_part(
        podium.hardware_bios(caller.caller(), HardwareOf::System(&host)),
        &uri,
    )
    .await?;
    let mut settings = json!({
        "@odata.type": "#Settings.v1_3_3.Settings",
        "SettingsObject": {"@odata.id": format!("{uri}/Settings")},
    });
    if !bios.apply_times.is_empty() {
        settings["SupportedApplyTimes"] = json!(
            bios.apply_times
                .iter()
                .map(|t| apply_time_name(*t))
                .collect::<Vec<_>>()
        );
    }
    let mut body = json!({
        "@odata.type": "#Bios.v1_1_0.Bios",
        "@odata.id": uri,
        "Id": "Bios",
        "Name": "BIOS Configuration Current Settings",
        "AttributeRegistry": registry_id(&host),
        "Attributes": bios.attributes,
        "@Redfish.Settings": settings,
    });
    // A reset sets every attribute: only the admin may.
    if matches!(caller.caller().scope(), TenantScope::Every) {
        body["Actions"] = json!({
            "#Bios.ResetBios": {"target": format!("{uri}/Actions/Bios.ResetBios")},
        });
    }
    Ok(resource(body))
}

/// `GET Systems/{id}/Bios/Settings`: the settings object, holding what is staged (the values
/// that differ from the current ones), as many BMCs show it.
pub(super) async fn bios_settings(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let host = HostId::from(id.clone());
    let uri = format!("{}/Bios/Settings", system_uri(&host));
    let bios = of_part(
        podium.hardware_bios(caller.caller(), HardwareOf::System(&host)),
        &uri,
    )
    .await?;
    Ok(resource(json!({
        "@odata.type": "#Bios.v1_1_0.Bios",
        "@odata.id": uri,
        "Id": "Settings",
        "Name": "BIOS Pending Settings",
        "AttributeRegistry": registry_id(&host),
        "Attributes": bios.pending,
    })))
}

/// `GET Registries`: one attribute registry for each system the caller may see.
pub(super) async fn registry_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let systems = podium.redfish_systems(caller.caller()).await?;
    Ok(collection(
        "#MessageRegistryFileCollection.MessageRegistryFileCollection",
        &format!("{ROOT}/Registries"),
        "Registry File Collection",
        systems
            .iter()
            .map(|s| format!("{ROOT}/Registries/{}", registry_id(&s.id)))
            .collect(),
    ))
}

/// The host whose registry `name` is, where the caller may see it.
async fn registry_host(
    podium: &Podium,
    caller: &RfCaller,
    name: &str,
    uri: &str,
) -> Result<HostId, RedfishError> {
    let id = name.strip_prefix(REGISTRY).ok_or_else(|| missing(uri))?;
    of_part(
        podium.redfish_visible(caller.caller(), &HostId::from(id.to_owned())),
        uri,
    )
    .await
}

/// `GET Registries/{name}`: where a system's attribute registry is.
pub(super) async fn registry_file(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(name): Path<String>,
) -> Answer {
    let uri = format!("{ROOT}/Registries/{}", segment(&name));
    let host = registry_host(&podium, &caller, &name, &uri).await?;
    let id = registry_id(&host);
    Ok(resource(json!({
        "@odata.type": "#MessageRegistryFile.v1_1_0.MessageRegistryFile",
        "@odata.id": uri,
        "Id": id,
        "Name": "BIOS Attribute Registry File",
        "Registry": id,
        "Languages": ["en"],
        "Location": [{"Language": "en", "Uri": format!("{uri}/en")}],
    })))
}

/// `GET Registries/{name}/en`: a system's attribute registry, as its BMC publishes it.
pub(super) async fn registry_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(name): Path<String>,
) -> Answer {
    let uri = format!("{ROOT}/Registries/{}/en", segment(&name));
    let host = registry_host(&podium, &caller, &name, &uri).await?;
    let bios = of_part(
        podium.hardware_bios(caller.caller(), HardwareOf::System(&host)),
        &uri,
    )
    .await?;
    let attributes: Vec<Value> = bios
        .registry
        .iter()
        .map(|(name, entry)| {
            let mut a = Map::new();
            a.insert("AttributeName".into(), json!(name));
            a.insert(
                "Type".into(),
                json!(match entry.attribute_type {
                    BiosAttributeType::Enumeration => "Enumeration",
                    BiosAttributeType::Text => "String",
                    BiosAttributeType::Integer => "Integer",
                    BiosAttributeType::Boolean => "Boolean",
                    BiosAttributeType::Password => "Password",
                }),
            );
            a.insert("ReadOnly".into(), json!(entry.read_only));
            a.insert("ResetRequired".into(), json!(entry.reset_required));
            if let Some(n) = &entry.display_name {
                a.insert("DisplayName".into(), json!(n));
            }
            if !entry.allowed_values.is_empty() {
                let values: Vec<Value> = entry
                    .allowed_values
                    .iter()
                    .map(|v| json!({"ValueName": v, "ValueDisplayName": v}))
                    .collect();
                a.insert("Value".into(), json!(values));
            }
            for (key, value) in [
                ("LowerBound", entry.lower_bound.map(|v| json!(v))),
                ("UpperBound", entry.upper_bound.map(|v| json!(v))),
                ("MinLength", entry.min_length.map(|v| json!(v))),
                ("MaxLength", entry.max_length.map(|v| json!(v))),
            ] {
                if let Some(value) = value {
                    a.insert(key.into(), value);
                }
            }
            Value::Object(a)
        })
        .collect();
    Ok(resource(json!({
        "@odata.type": "#AttributeRegistry.v1_3_0.AttributeRegistry",
        "@odata.id": uri,
        "Id": registry_id(&host),
        "Name": "BIOS Attribute Registry",
        "Language": "en",
        "OwningEntity": "Podium",
        "RegistryVersion": "1.0.0",
        "RegistryEntries": {"Attributes": attributes},
    })))
}

/// `GET Systems/{id}/SecureBoot`.
pub(super) async fn secure_boot_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let host = HostId::from(id);
    let uri = format!("{}/SecureBoot", system_uri(&host));
    let state = of_part(
        podium.hardware_secure_boot(caller.caller(), HardwareOf::System(&host)),
        &uri,
    )
    .await?;
    let mut body = json!({
        "@odata.type": "#SecureBoot.v1_1_0.SecureBoot",
        "@odata.id": uri,
        "Id": "SecureBoot",
        "Name": "UEFI Secure Boot",
        "SecureBootEnable": state.enabled,
    });
    if let Some(current) = state.current_boot {
        body["SecureBootCurrentBoot"] = json!(if current { "Enabled" } else { "Disabled" });
    }
    if let Some(mode) = state.mode {
        body["SecureBootMode"] = json!(mode);
    }
    Ok(resource(body))
}

/// `PATCH Systems/{id}/SecureBoot` `{"SecureBootEnable": bool}`: secure boot turned on or off
/// from the next boot on, as an operation (202 and its task).
pub(super) async fn secure_boot_patch(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let host = HostId::from(id);
    let uri = format!("{}/SecureBoot", system_uri(&host));
    let mut enabled = None;
    for (key, value) in &object(body)? {
        match key.as_str() {
            "SecureBootEnable" => {
                enabled = Some(
                    value
                        .as_bool()
                        .ok_or_else(|| RedfishError::property_type(key, "true or false"))?,
                )
            }
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::property_unknown(k)),
        }
    }
    let enabled = enabled.ok_or_else(|| RedfishError::property_missing("SecureBootEnable"))?;
    Ok(accepted(
        &of_part(
            podium.hardware_secure_boot_set(
                caller.caller(),
                HardwareOf::System(&host),
                SecureBootChange { enabled },
            ),
            &uri,
        )
        .await?,
    ))
}

/// The apply times a change names, as Redfish names them.
const APPLY_TIMES: [(&str, ApplyTime); 4] = [
    ("Immediate", ApplyTime::Immediate),
    ("OnReset", ApplyTime::OnReset),
    (
        "AtMaintenanceWindowStart",
        ApplyTime::AtMaintenanceWindowStart,
    ),
    (
        "InMaintenanceWindowOnReset",
        ApplyTime::InMaintenanceWindowOnReset,
    ),
];

/// `PATCH Systems/{id}/Bios/Settings` `{"Attributes": {..}}`, with an
/// `@Redfish.SettingsApplyTime` where the BMC offers apply times: a change of BIOS attributes,
/// as an operation (202 and its task) checked first as the JSON API's is; to a tenant, only the
/// attributes its site lets it change.
pub(super) async fn bios_settings_patch(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let host = HostId::from(id);
    let uri = format!("{}/Bios/Settings", system_uri(&host));
    let (mut attributes, mut apply_time) = (None, None);
    for (key, value) in &object(body)? {
        match key.as_str() {
            "Attributes" => attributes = Some(bios_values(value)?),
            "@Redfish.SettingsApplyTime" => {
                let time = value.get("ApplyTime").ok_or_else(|| {
                    RedfishError::property_missing("@Redfish.SettingsApplyTime/ApplyTime")
                })?;
                apply_time = Some(pick(
                    "@Redfish.SettingsApplyTime/ApplyTime",
                    time,
                    &APPLY_TIMES,
                )?);
            }
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::property_unknown(k)),
        }
    }
    let attributes = attributes.ok_or_else(|| RedfishError::property_missing("Attributes"))?;
    let change = BiosChange {
        attributes,
        apply_time,
    };
    Ok(accepted(
        &of_part(
            podium.hardware_bios_change(caller.caller(), HardwareOf::System(&host), change),
            &uri,
        )
        .await?,
    ))
}

/// A PATCH's `Attributes`: each a string, an integer or true or false.
fn bios_values(value: &Value) -> Result<BTreeMap<String, BiosValue>, RedfishError> {
    let object = value
        .as_object()
        .ok_or_else(|| RedfishError::property_type("Attributes", "an object"))?;
    object
        .iter()
        .map(|(name, v)| {
            let value = match v {
                Value::Bool(b) => BiosValue::Boolean(*b),
                Value::String(s) => BiosValue::Text(s.clone()),
                Value::Number(n) => BiosValue::Integer(n.as_i64().ok_or_else(|| {
                    RedfishError::property_type(&format!("Attributes/{name}"), "an integer")
                })?),
                _ => {
                    return Err(RedfishError::property_type(
                        &format!("Attributes/{name}"),
                        "a string, an integer or true or false",
                    ));
                }
            };
            Ok((name.clone(), value))
        })
        .collect()
}

/// `Bios.ResetBios` (an admin's only): the attributes reset to their defaults, as an operation
/// (202 and its task). Its body, if any, is an empty object.
pub(super) async fn bios_reset(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    const ACTION: &str = "Bios.ResetBios";
    if let Some(key) = optional_object(body)?.keys().find(|k| !k.starts_with('@')) {
        return Err(RedfishError::parameter_unknown(ACTION, key));
    }
    let host = HostId::from(id);
    let uri = format!("{}/Bios/Actions/{ACTION}", system_uri(&host));
    Ok(accepted(
        &of_part(
            podium.hardware_bios_reset(caller.caller(), HardwareOf::System(&host)),
            &uri,
        )
        .await?,
    ))
}

/// A part of the inventory: its kind in the system's URI and in Redfish's types.
#[derive(Clone, Copy)]
pub(super) enum Part {
    Processors,
    Memory,
    SimpleStorage,
    Storage,
}

impl Part {
    fn path(self) -> &'static str {
        match self {
            Part::Processors => "Processors",
            Part::Memory => "Memory",
            Part::SimpleStorage => "SimpleStorage",
            Part::Storage => "Storage",
        }
    }

    fn collection_type(self) -> &'static str {
        match self {
            Part::Processors => "#ProcessorCollection.ProcessorCollection",
            Part::Memory => "#MemoryCollection.MemoryCollection",
            Part::SimpleStorage => "#SimpleStorageCollection.SimpleStorageCollection",
            Part::Storage => "#StorageCollection.StorageCollection",
        }
    }

    /// The members' ids, as path segments.
    fn ids(self, hw: &HardwareInventory) -> Vec<String> {
        match self {
            Part::Processors => hw.processors.iter().map(|p| segment(&p.id)).collect(),
            Part::Memory => hw.memory.iter().map(|m| segment(&m.id)).collect(),
            Part::SimpleStorage | Part::Storage => {
                hw.storage.iter().map(|s| segment(&s.id)).collect()
            }
        }
    }

    /// The member whose id is `member`, as Redfish shows it.
    fn member(self, hw: &HardwareInventory, uri: &str, member: &str) -> Option<Value> {
        // Present; its health is not read (a BMC's would be passed on, not made up).
        let status = json!({"State": "Enabled"});
        match self {
            Part::Processors => hw.processors.iter().find(|p| segment(&p.id) == member).map(|p| {
                json!({
                    "@odata.type": "#Processor.v1_0_0.Processor",
                    "@odata.id": uri,
                    "Id": member,
                    "Name": p.id,
                    "Socket": p.socket,
                    "ProcessorType": p.processor_type,
                    "InstructionSet": p.instruction_set,
                    "ProcessorArchitecture": p.instruction_set.as_deref().and_then(architecture),
                    "Manufacturer": p.manufacturer,
                    "Model": p.model,
                    "TotalCores": p.cores,
                    "TotalThreads": p.threads,
                    "MaxSpeedMHz": p.max_speed_mhz,
                    "Status": status,
                })
            }),
            Part::Memory => hw.memory.iter().find(|m| segment(&m.id) == member).map(|m| {
                json!({
                    "@odata.type": "#Memory.v1_7_0.Memory",
                    "@odata.id": uri,
                    "Id": member,
                    "Name": m.name.as_deref().unwrap_or(&m.id),
                    "CapacityMiB": m.capacity_mib,
                    "MemoryDeviceType": m.device_type,
                    "OperatingSpeedMhz": m.speed_mhz,
                    "Manufacturer": m.manufacturer,
                    "PartNumber": m.part_number,
                    "SerialNumber": m.serial,
                    "Status": status,
                })
            }),
            Part::SimpleStorage => storage_of(hw, member).map(|s| {
                let devices: Vec<Value> = s
                    .drives
                    .iter()
                    .map(|d| {
                        json!({
                            "Name": d.name.as_deref().unwrap_or(&d.id),
                            "Manufacturer": d.manufacturer,
                            "Model": d.model,
                            "CapacityBytes": d.capacity_bytes,
                            "Status": {"State": "Enabled"},
                        })
                    })
                    .collect();
                json!({
                    "@odata.type": "#SimpleStorage.v1_2_0.SimpleStorage",
                    "@odata.id": uri,
                    "Id": member,
                    "Name": s.name.as_deref().unwrap_or(&s.id),
                    "Devices": devices,
                    "Status": status,
                })
            }),
            Part::Storage => storage_of(hw, member).map(|s| {
                let drives: Vec<Value> = s
                    .drives
                    .iter()
                    .map(|d| json!({"@odata.id": format!("{uri}/Drives/{}", segment(&d.id))}))
                    .collect();
                json!({
                    "@odata.type": "#Storage.v1_7_0.Storage",
                    "@odata.id": uri,
                    "Id": member,
                    "Name": s.name.as_deref().unwrap_or(&s.id),
                    "Drives@odata.count": drives.len(),
                    "Drives": drives,
                    "Status": status,
                })
            }),
        }
    }
}

/// Redfish's `ProcessorArchitecture` of an `InstructionSet`.
fn architecture(instruction_set: &str) -> Option<&'static str> {
    match instruction_set {
        "x86" | "x86-64" => Some("x86"),
        "IA-64" => Some("IA-64"),
        "ARM-A32" | "ARM-A64" => Some("ARM"),
        "MIPS32" | "MIPS64" => Some("MIPS"),
        "PowerISA" => Some("Power"),
        "RV32" | "RV64" => Some("RISC-V"),
        _ => None,
    }
}

fn storage_of<'a>(hw: &'a HardwareInventory, member: &str) -> Option<&'a StorageController> {
    hw.storage.iter().find(|s| segment(&s.id) == member)
}

/// `GET Systems/{id}/{Processors|Memory|SimpleStorage|Storage}`.
pub(super) async fn part_list(podium: Podium, caller: RfCaller, id: String, part: Part) -> Answer {
    let uri = format!("{}/{}", system_uri(&HostId::from(id.clone())), part.path());
    // A BMC with no inventory shows empty collections, as one lacking a part does (tools that
    // follow every link of a system, DMTF's `rf_sys_inventory.py`, stop at a 404).
    let hw = match podium
        .redfish_hardware(caller.caller(), &HostId::from(id.clone()))
        .await
    {
        Ok(hw) => hw,
        Err(Error::Conflict { code, .. }) if code.is_unsupported() => {
            Arc::new(HardwareInventory::default())
        }
        Err(e) => return Err(e.into()),
    };
    let members = part
        .ids(&hw)
        .into_iter()
        .map(|m| format!("{uri}/{m}"))
        .collect();
    Ok(collection(
        part.collection_type(),
        &uri,
        part.path(),
        members,
    ))
}

/// `GET Systems/{id}/{part}/{member}`.
pub(super) async fn part_view(
    podium: Podium,
    caller: RfCaller,
    id: String,
    part: Part,
    member: String,
) -> Answer {
    let base = format!("{}/{}", system_uri(&HostId::from(id.clone())), part.path());
    let uri = format!("{base}/{}", segment(&member));
    let hw = of_part(
        podium.redfish_hardware(caller.caller(), &HostId::from(id.clone())),
        &uri,
    )
    .await?;
    part.member(&hw, &uri, &member)
        .map(resource)
        .ok_or_else(|| missing(&uri))
}

/// `GET Systems/{id}/Storage/{storage}/Drives/{drive}`.
pub(super) async fn drive_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path((id, storage, drive)): Path<(String, String, String)>,
) -> Answer {
    let uri = format!(
        "{}/Storage/{}/Drives/{}",
        system_uri(&HostId::from(id.clone())),
        segment(&storage),
        segment(&drive)
    );
    let hw = of_part(
        podium.redfish_hardware(caller.caller(), &HostId::from(id.clone())),
        &uri,
    )
    .await?;
    let d = storage_of(&hw, &storage)
        .and_then(|s| s.drives.iter().find(|d| segment(&d.id) == drive))
        .ok_or_else(|| missing(&uri))?;
    Ok(resource(json!({
        "@odata.type": "#Drive.v1_4_0.Drive",
        "@odata.id": uri,
        "Id": drive,
        "Name": d.name.as_deref().unwrap_or(&d.id),
        "Manufacturer": d.manufacturer,
        "Model": d.model,
        "SerialNumber": d.serial,
        "CapacityBytes": d.capacity_bytes,
        "MediaType": d.media_type,
        "Protocol": d.protocol,
        "Status": {"State": "Enabled"},
    })))
}

macro_rules! part_routes {
    ($($list:ident, $view:ident => $part:expr;)*) => {$(
        pub(super) async fn $list(
            State(podium): State<Podium>,
            caller: RfCaller,
            Path(id): Path<String>,
        ) -> Answer {
            part_list(podium, caller, id, $part).await
        }

        pub(super) async fn $view(
            State(podium): State<Podium>,
            caller: RfCaller,
            Path((id, member)): Path<(String, String)>,
        ) -> Answer {
            part_view(podium, caller, id, $part, member).await
        }
    )*};
}

part_routes! {
    processor_list, processor_view => Part::Processors;
    memory_list, memory_view => Part::Memory;
    simple_storage_list, simple_storage_view => Part::SimpleStorage;
    storage_list, storage_view => Part::Storage;
}

/// The links a system's resource gives to what this module serves.
pub(super) fn system_links(uri: &str) -> Map<String, Value> {
    [
        "Bios",
        "SecureBoot",
        "Processors",
        "Memory",
        "SimpleStorage",
        "Storage",
    ]
    .into_iter()
    .map(|p| (p.to_owned(), json!({"@odata.id": format!("{uri}/{p}")})))
    .collect()
}
