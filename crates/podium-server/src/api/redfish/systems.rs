//! `Systems` (the hosts a caller may drive: power, boot override, reset), their
//! `EthernetInterfaces`, and `Chassis`, one per system.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::header::IF_MATCH;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use podium_app::app::Podium;
use podium_app::redfish::BootChange;
use podium_types::views::SystemView;
use podium_types::{
    BootMode, BootPersistence, BootSettings, BootTarget, HostId, PowerAction, PowerState,
};

use super::{
    Answer, ROOT, RedfishError, RfCaller, accepted, chassis_uri, collection, etag_of, manager_uri,
    missing, object, resource, segment, system_uri,
};

pub(super) const RESET_TYPES: [&str; 6] = [
    "On",
    "ForceOn",
    "ForceOff",
    "GracefulShutdown",
    "GracefulRestart",
    "ForceRestart",
];

pub(super) const BOOT_TARGETS: [(&str, BootTarget); 7] = [
    ("None", BootTarget::None),
    ("Pxe", BootTarget::Pxe),
    ("Cd", BootTarget::Cd),
    ("Hdd", BootTarget::Hdd),
    ("UefiHttp", BootTarget::UefiHttp),
    ("Usb", BootTarget::Usb),
    ("BiosSetup", BootTarget::BiosSetup),
];

pub(super) const BOOT_ENABLED: [(&str, BootPersistence); 3] = [
    ("Disabled", BootPersistence::Disabled),
    ("Once", BootPersistence::Once),
    ("Continuous", BootPersistence::Continuous),
];

pub(super) const BOOT_MODES: [(&str, BootMode); 2] =
    [("UEFI", BootMode::Uefi), ("Legacy", BootMode::Legacy)];

pub(super) fn name_of<T: PartialEq + Copy>(table: &[(&'static str, T)], value: T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| *v == value)
        .map_or("None", |(n, _)| n)
}

pub(super) fn power_state(p: PowerState) -> Value {
    match p {
        PowerState::On => json!("On"),
        PowerState::Off => json!("Off"),
        PowerState::PoweringOn => json!("PoweringOn"),
        PowerState::PoweringOff => json!("PoweringOff"),
        PowerState::Unknown => Value::Null,
    }
}

pub(super) fn system(s: &SystemView) -> Value {
    let uri = system_uri(&s.id);
    let boot = s.boot.unwrap_or(BootSettings {
        target: BootTarget::None,
        persistence: BootPersistence::Disabled,
        mode: None,
    });
    let health = if s.state.as_str() == "error" {
        "Warning"
    } else {
        "OK"
    };
    let mut boot_json = json!({
        "BootSourceOverrideEnabled": name_of(&BOOT_ENABLED, boot.persistence),
        "BootSourceOverrideEnabled@Redfish.AllowableValues": BOOT_ENABLED.map(|(n, _)| n),
        "BootSourceOverrideTarget": name_of(&BOOT_TARGETS, boot.target),
        "BootSourceOverrideTarget@Redfish.AllowableValues": BOOT_TARGETS.map(|(n, _)| n),
        "BootSourceOverrideMode@Redfish.AllowableValues": BOOT_MODES.map(|(n, _)| n),
    });
    if let Some(mode) = boot.mode {
        boot_json["BootSourceOverrideMode"] = json!(name_of(&BOOT_MODES, mode));
    }
    let mut oem = json!({"ProvisioningState": s.state.as_str()});
    if let Some(claim) = &s.claim {
        oem["Claim"] = json!(claim);
    }
    let mut body = json!({
        "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
        "@odata.id": uri,
        "Id": s.id,
        "Name": s.name,
        "UUID": s.uuid,
        "Manufacturer": s.manufacturer,
        "Model": s.model,
        "SerialNumber": s.serial,
        "SystemType": "Physical",
        "PowerState": power_state(s.power_state),
        "Status": {"State": "Enabled", "Health": health},
        "ProcessorSummary": {"Count": s.cpu_count},
        "MemorySummary": {"TotalSystemMemoryGiB": s.memory_mib as f64 / 1024.0},
        "Boot": boot_json,
        "EthernetInterfaces": {"@odata.id": format!("{uri}/EthernetInterfaces")},
        "VirtualMedia": {"@odata.id": format!("{uri}/VirtualMedia")},
        "Links": {
            "ManagedBy": [{"@odata.id": manager_uri(&s.id)}],
            "Chassis": [{"@odata.id": chassis_uri(&s.id)}],
        },
        "Actions": {"#ComputerSystem.Reset": {
            "target": format!("{uri}/Actions/ComputerSystem.Reset"),
            "ResetType@Redfish.AllowableValues": RESET_TYPES,
        }},
        "Oem": {"Podium": oem},
    });
    if let Some(version) = &s.bios_version {
        body["BiosVersion"] = json!(version);
    }
    if let Some(body) = body.as_object_mut() {
        body.extend(super::hardware::system_links(&uri));
    }
    body
}

pub(super) async fn system_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let systems = podium.redfish_systems(caller.caller()).await?;
    Ok(collection(
        "#ComputerSystemCollection.ComputerSystemCollection",
        &format!("{ROOT}/Systems"),
        "Computer System Collection",
        systems.iter().map(|s| system_uri(&s.id)).collect(),
    ))
}

pub(super) async fn system_get(
    podium: &Podium,
    caller: &RfCaller,
    id: String,
) -> Result<SystemView, RedfishError> {
    Ok(podium
        .redfish_system(caller.caller(), &HostId::from(id))
        .await?)
}

pub(super) async fn system_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    Ok(resource(system(&system_get(&podium, &caller, id).await?)))
}

/// A PATCH of `Boot` (the only property that can change): a boot override operation. An
/// `If-Match` that is not the system's current ETag is refused (412).
pub(super) async fn system_patch(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let current = system_get(&podium, &caller, id).await?;
    if let Some(if_match) = headers.get(IF_MATCH) {
        let etag = etag_of(&system(&current));
        let matches = if_match.to_str().is_ok_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|t| t == "*" || t == etag || t == etag.trim_start_matches("W/"))
        });
        if !matches {
            return Err(RedfishError::new(
                StatusCode::PRECONDITION_FAILED,
                "PreconditionFailed",
                "The ETag supplied did not match the ETag required to change this resource.",
            ));
        }
    }
    let body = object(body)?;
    let mut boot = None;
    for (key, value) in &body {
        match key.as_str() {
            "Boot" => boot = Some(value),
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::property_unknown(k)),
        }
    }
    let Some(boot) = boot else {
        return Err(RedfishError::property_missing("Boot"));
    };
    let op = podium
        .redfish_boot(caller.caller(), &current.id, boot_change(boot)?)
        .await?;
    Ok(accepted(&op))
}

/// The value of `table` a property names, or the error that lists the values it may have.
pub(super) fn pick<T: Copy>(
    name: &str,
    value: &Value,
    table: &[(&'static str, T)],
) -> Result<T, RedfishError> {
    value
        .as_str()
        .and_then(|v| table.iter().find(|(n, _)| *n == v))
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            RedfishError::property_value(
                name,
                value,
                &table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
            )
        })
}

/// What a PATCH of `Boot` names (`podium-app` reads it over the current override).
pub(super) fn boot_change(boot: &Value) -> Result<BootChange, RedfishError> {
    let Some(boot) = boot.as_object() else {
        return Err(RedfishError::property_type("Boot", "an object"));
    };
    let mut change = BootChange::default();
    for (key, value) in boot {
        match key.as_str() {
            "BootSourceOverrideTarget" => change.target = Some(pick(key, value, &BOOT_TARGETS)?),
            "BootSourceOverrideEnabled" => {
                change.persistence = Some(pick(key, value, &BOOT_ENABLED)?)
            }
            "BootSourceOverrideMode" => change.mode = Some(pick(key, value, &BOOT_MODES)?),
            k => return Err(RedfishError::property_unknown(&format!("Boot/{k}"))),
        }
    }
    Ok(change)
}

pub(super) async fn system_reset(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    const ACTION: &str = "ComputerSystem.Reset";
    let body = object(body)?;
    let mut reset = None;
    for (key, value) in &body {
        match key.as_str() {
            "ResetType" => reset = Some(value),
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::parameter_unknown(ACTION, k)),
        }
    }
    let reset = reset.ok_or_else(|| RedfishError::parameter_missing(ACTION, "ResetType"))?;
    let action = match reset.as_str() {
        Some("On" | "ForceOn") => PowerAction::On,
        Some("ForceOff") => PowerAction::ForceOff,
        Some("GracefulShutdown") => PowerAction::GracefulShutdown,
        Some("GracefulRestart") => PowerAction::GracefulRestart,
        Some("ForceRestart") => PowerAction::ForceRestart,
        _ => {
            return Err(RedfishError::parameter_value(
                ACTION,
                "ResetType",
                reset,
                &RESET_TYPES.join(", "),
            ));
        }
    };
    let op = podium
        .redfish_reset(caller.caller(), &HostId::from(id), action)
        .await?;
    Ok(accepted(&op))
}

pub(super) async fn nic_list(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let uri = format!("{}/EthernetInterfaces", system_uri(&s.id));
    Ok(collection(
        "#EthernetInterfaceCollection.EthernetInterfaceCollection",
        &uri,
        "Ethernet Interface Collection",
        s.nics
            .iter()
            .map(|n| format!("{uri}/{}", segment(&n.id)))
            .collect(),
    ))
}

pub(super) async fn nic_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path((id, nic)): Path<(String, String)>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let uri = format!("{}/EthernetInterfaces/{nic}", system_uri(&s.id));
    let n = s
        .nics
        .iter()
        .find(|n| segment(&n.id) == nic)
        .ok_or_else(|| missing(&uri))?;
    let mut body = json!({
        "@odata.type": "#EthernetInterface.v1_4_0.EthernetInterface",
        "@odata.id": uri,
        "Id": segment(&n.id),
        "Name": n.name.clone().unwrap_or_else(|| n.id.clone()),
        "MACAddress": n.mac,
        "PermanentMACAddress": n.mac,
        "Status": {"State": "Enabled", "Health": "OK"},
    });
    if let Some(speed) = n.speed_mbps {
        body["SpeedMbps"] = json!(speed);
    }
    Ok(resource(body))
}

pub(super) async fn chassis_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let systems = podium.redfish_systems(caller.caller()).await?;
    Ok(collection(
        "#ChassisCollection.ChassisCollection",
        &format!("{ROOT}/Chassis"),
        "Chassis Collection",
        systems.iter().map(|s| chassis_uri(&s.id)).collect(),
    ))
}

/// Each system's enclosure: what inventory tools walk to find the system.
pub(super) async fn chassis_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    Ok(resource(json!({
        "@odata.type": "#Chassis.v1_14_0.Chassis",
        "@odata.id": chassis_uri(&s.id),
        "Id": s.id,
        "Name": format!("Chassis of {}", s.name),
        "ChassisType": "RackMount",
        "Manufacturer": s.manufacturer,
        "Model": s.model,
        "SerialNumber": s.serial,
        "PowerState": power_state(s.power_state),
        "Status": {"State": "Enabled", "Health": "OK"},
        "Links": {
            "ComputerSystems": [{"@odata.id": system_uri(&s.id)}],
            "ManagedBy": [{"@odata.id": manager_uri(&s.id)}],
        },
    })))
}
