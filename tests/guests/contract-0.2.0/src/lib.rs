//! `contract-0-2-0`: a sans-IO hardware driver written against `podium:plugin@0.2.0` as released,
//! with wit-bindgen and this crate's own copy of the WIT. It answers every case of `call` with
//! its own case of `outcome`, talking to a Redfish service (sushy-tools) through `send` steps:
//!
//! - `probe`, `discover`, `inspect`, `get-power`: the service root, `Systems`, each system and
//!   its `EthernetInterfaces` (the system's boot override, processor count and memory too);
//! - `set-power`: `ComputerSystem.Reset`; `set-boot-override`: a PATCH of the system's `Boot`;
//! - `insert-media`, `eject-media`: the system's `VirtualMedia` slots and their actions;
//! - `discover-chassis`: the `Chassis` collection, with `Links.ContainedBy` and
//!   `Links.ComputerSystems`;
//! - `read-bios`, `set-bios`, `reset-bios`: the system's `Bios`, its settings object and
//!   `Bios.ResetBios`; the registry is not read (values are typed as JSON types them, and
//!   `registry` is empty);
//! - `read-secure-boot`, `set-secure-boot`: the system's `SecureBoot`;
//! - `read-hardware`: the system's `Processors` and `EthernetInterfaces` (`memory` and
//!   `storage` are always empty);
//! - `read-firmware`: the system's `BiosVersion` (the component is the system) and its
//!   managers' `FirmwareVersion`, updateable where the root links an `UpdateService`;
//! - `update-firmware`: `UpdateService.SimpleUpdate`, answering the task its `Location` names;
//!   `read-task`: the task's `TaskState` and `PercentComplete`.
//!
//! sushy-tools composes nothing, so `read-composition` answers a fixed, empty composition
//! service without sending anything, and `compose` and `decompose` answer `unsupported`.
//!
//! A call's state is the answers of its steps so far (JSON): each step runs the call again from
//! its start over them, and sends what the first unanswered step asks for.
//! Configuration: `{"root": "/redfish/v1"}` (optional).

wit_bindgen::generate!({
    path: "wit",
    world: "hardware-driver",
});

use exports::podium::plugin::driver::{Call, Guest as DriverGuest, Outcome, Pending, Step};
use exports::podium::plugin::plugin::Guest as PluginGuest;
use podium::plugin::components::{Chassis, ChassisType, Health};
use podium::plugin::composition::CompositionService;
use podium::plugin::firmware::{
    ComponentKind, FirmwareComponent, FirmwareUpdate, TaskState, TaskStatus,
};
use podium::plugin::hardware::{
    BootMode, BootPersistence, BootSettings, BootTarget, CapabilitySet, MediaRequest, MediaType,
    Nic, PowerAction, PowerState, ServiceInfo, System, SystemKind,
};
use podium::plugin::http::{HttpError, Method, Request, Response};
use podium::plugin::inventory::{HardwareInventory, LinkState, NicLink, Processor};
use podium::plugin::settings::{
    ApplyTime, Attribute, AttributeValue, Bios, BiosChange, SecureBoot,
};
use podium::plugin::types::{Error, PluginInfo, RemoteError};
use serde_json::{Map, Value, json};

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Component;

/// Why a run of the call stopped before its outcome: requests to send first, or a failure.
enum Stop {
    Send(Vec<Request>),
    Fail(Error),
}

impl From<Error> for Stop {
    fn from(error: Error) -> Stop {
        Stop::Fail(error)
    }
}

/// The answers of the steps so far, each answer `{"status", "location", "body"}` or
/// `{"error"}`, and how many of the steps this run has used.
struct Exchange {
    steps: Vec<Vec<Value>>,
    used: usize,
}

impl Exchange {
    /// The answers to `requests`, sent together as one step: the recorded answers of this step,
    /// or a stop asking for them.
    fn send(&mut self, requests: Vec<Request>) -> Result<Vec<Value>, Stop> {
        match self.steps.get(self.used) {
            Some(answers) => {
                self.used += 1;
                Ok(answers.clone())
            }
            None => Err(Stop::Send(requests)),
        }
    }

    /// The JSON bodies of GETs of `urls`, in one step; any answer but a 2xx fails the call.
    fn get_all(&mut self, urls: &[String]) -> Result<Vec<Value>, Stop> {
        let requests = urls.iter().map(|u| request(Method::Get, u, None)).collect();
        let answers = self.send(requests)?;
        urls.iter()
            .zip(answers)
            .map(|(url, answer)| checked("GET", url, answer).map(|a| a["body"].clone()))
            .collect()
    }

    fn get(&mut self, url: &str) -> Result<Value, Stop> {
        Ok(self.get_all(&[url.to_owned()])?.remove(0))
    }

    /// Sends one request with a JSON body; answers the checked answer.
    fn write(&mut self, method: Method, url: &str, body: Value) -> Result<Value, Stop> {
        let verb = format!("{method:?}").to_uppercase();
        let answer = self.send(vec![request(method, url, Some(body))])?.remove(0);
        checked(&verb, url, answer)
    }

    /// The member paths of the collection at `url`.
    fn members(&mut self, url: &str) -> Result<Vec<String>, Stop> {
        Ok(links(&self.get(url)?["Members"]))
    }
}

fn request(method: Method, url: &str, body: Option<Value>) -> Request {
    let mut headers = vec![("Accept".to_owned(), "application/json".to_owned())];
    if body.is_some() {
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
    }
    Request {
        method,
        url: url.to_owned(),
        headers,
        body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
    }
}

/// An answer as the state keeps it.
fn recorded(answer: Result<Response, HttpError>) -> Value {
    match answer {
        Ok(response) => {
            let location = response
                .headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("location"))
                .map(|(_, value)| value.clone());
            let body: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
            json!({"status": response.status, "location": location, "body": body})
        }
        Err(HttpError::Timeout(m)) => json!({"error": "timeout", "message": m}),
        Err(HttpError::Unreachable(m) | HttpError::Tls(m)) => {
            json!({"error": "unreachable", "message": m})
        }
        Err(e) => json!({"error": "other", "message": format!("{e:?}")}),
    }
}

/// The answer if it is a 2xx; else the error its status or failure says.
fn checked(verb: &str, url: &str, answer: Value) -> Result<Value, Stop> {
    let message = format!("{verb} {url}: {}", answer["message"].as_str().unwrap_or(""));
    let status = match answer["error"].as_str() {
        Some("timeout") => return Err(Error::Timeout(message).into()),
        Some("unreachable") => return Err(Error::Unreachable(message).into()),
        Some(_) => return Err(Error::Protocol(message).into()),
        None => answer["status"].as_u64().unwrap_or(0) as u16,
    };
    let message = format!("{verb} {url}: {status}");
    Err(match status {
        200..=299 => return Ok(answer),
        401 | 403 => Error::Unauthorized(message),
        404 => Error::NotFound(message),
        400 | 415 | 422 => Error::InvalidInput(message),
        405 | 501 => Error::Unsupported(message),
        409 => Error::Conflict(message),
        _ => Error::Remote(RemoteError { status, message }),
    }
    .into())
}

fn root(config: &str) -> Result<String, Error> {
    let value: Value =
        serde_json::from_str(config).map_err(|e| Error::InvalidConfig(format!("not JSON: {e}")))?;
    match value.get("root") {
        None => Ok("/redfish/v1".to_owned()),
        Some(Value::String(r)) if r.starts_with('/') => Ok(r.trim_end_matches('/').to_owned()),
        Some(_) => Err(Error::InvalidConfig(
            "root: a path such as /redfish/v1".to_owned(),
        )),
    }
}

/// The `@odata.id`s of a list of links.
fn links(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["@odata.id"].as_str().map(str::to_owned))
        .collect()
}

/// The link `key` of `resource`; `unsupported` naming it where there is none.
fn link(resource: &Value, key: &str, of: &str) -> Result<String, Error> {
    resource[key]["@odata.id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::Unsupported(format!("{of} links no {key}")))
}

fn text(value: &Value, key: &str) -> Option<String> {
    value[key]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A whole number sent as a number or as a string (sushy-tools sends some as strings).
fn number(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
}

fn power(resource: &Value) -> PowerState {
    match resource["PowerState"].as_str() {
        Some("On") => PowerState::On,
        Some("Off") => PowerState::Off,
        Some("PoweringOn") => PowerState::PoweringOn,
        Some("PoweringOff") => PowerState::PoweringOff,
        _ => PowerState::Unknown,
    }
}

const BOOT_TARGETS: [(BootTarget, &str); 7] = [
    (BootTarget::None, "None"),
    (BootTarget::Pxe, "Pxe"),
    (BootTarget::Cd, "Cd"),
    (BootTarget::Hdd, "Hdd"),
    (BootTarget::UefiHttp, "UefiHttp"),
    (BootTarget::Usb, "Usb"),
    (BootTarget::BiosSetup, "BiosSetup"),
];

const BOOT_PERSISTENCES: [(BootPersistence, &str); 3] = [
    (BootPersistence::Disabled, "Disabled"),
    (BootPersistence::Once, "Once"),
    (BootPersistence::Continuous, "Continuous"),
];

const MEDIA_TYPES: [(MediaType, &str); 4] = [
    (MediaType::Cd, "CD"),
    (MediaType::Dvd, "DVD"),
    (MediaType::Floppy, "Floppy"),
    (MediaType::Usb, "USBStick"),
];

fn name_of<T: PartialEq + Copy>(table: &[(T, &'static str)], wanted: T) -> &'static str {
    table
        .iter()
        .find(|(t, _)| *t == wanted)
        .map_or("None", |(_, n)| n)
}

fn case_of<T: Copy>(table: &[(T, &'static str)], redfish: Option<&str>) -> Option<T> {
    table
        .iter()
        .find(|(_, n)| Some(*n) == redfish)
        .map(|(t, _)| *t)
}

fn boot(system: &Value) -> Option<BootSettings> {
    let boot = &system["Boot"];
    Some(BootSettings {
        target: case_of(&BOOT_TARGETS, boot["BootSourceOverrideTarget"].as_str())?,
        persistence: case_of(
            &BOOT_PERSISTENCES,
            boot["BootSourceOverrideEnabled"].as_str(),
        )?,
        mode: match boot["BootSourceOverrideMode"].as_str() {
            Some("UEFI") => Some(BootMode::Uefi),
            Some("Legacy") => Some(BootMode::Legacy),
            _ => None,
        },
    })
}

/// A system and its NICs, from the system's resource.
fn system(exchange: &mut Exchange, id: &str, resource: &Value) -> Result<System, Stop> {
    let mut nics = Vec::new();
    if let Ok(collection) = link(resource, "EthernetInterfaces", id) {
        let paths = exchange.members(&collection)?;
        for (path, nic) in paths.iter().zip(exchange.get_all(&paths)?) {
            if let Some(mac) = text(&nic, "MACAddress") {
                nics.push(Nic {
                    id: path.clone(),
                    name: text(&nic, "Name"),
                    mac,
                    speed_mbps: None,
                });
            }
        }
    }
    let gib = resource["MemorySummary"]["TotalSystemMemoryGiB"]
        .as_f64()
        .unwrap_or(0.0);
    Ok(System {
        id: id.to_owned(),
        kind: SystemKind::System,
        name: text(resource, "Name").unwrap_or_else(|| id.to_owned()),
        uuid: text(resource, "UUID").map(|u| u.to_lowercase()),
        manufacturer: text(resource, "Manufacturer"),
        model: text(resource, "Model"),
        serial: text(resource, "SerialNumber"),
        cpu_count: number(&resource["ProcessorSummary"]["Count"]).unwrap_or(0) as u32,
        memory_mib: (gib * 1024.0) as u64,
        nics,
        power: power(resource),
        boot: boot(resource),
        media_slots: Vec::new(),
    })
}

/// The system's virtual media slots that take `wanted` (CD and DVD stand in for each other):
/// each slot's resource.
fn slots(exchange: &mut Exchange, id: &str, wanted: MediaType) -> Result<Vec<Value>, Stop> {
    let resource = exchange.get(id)?;
    let collection = link(&resource, "VirtualMedia", id)?;
    let paths = exchange.members(&collection)?;
    let optical = [MediaType::Cd, MediaType::Dvd];
    let takes = |name: &str| match case_of(&MEDIA_TYPES, Some(name)) {
        Some(t) => t == wanted || (optical.contains(&t) && optical.contains(&wanted)),
        None => false,
    };
    Ok(exchange
        .get_all(&paths)?
        .into_iter()
        .filter(|slot| {
            slot["MediaTypes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .any(takes)
        })
        .collect())
}

fn action(resource: &Value, name: &str, of: &str) -> Result<String, Error> {
    resource["Actions"][name]["target"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::Unsupported(format!("{of} offers no {name}")))
}

fn chassis_type(redfish: Option<&str>) -> ChassisType {
    match redfish.unwrap_or("Other") {
        "Rack" => ChassisType::Rack,
        "RackGroup" => ChassisType::RackGroup,
        "Enclosure" => ChassisType::Enclosure,
        "Blade" => ChassisType::Blade,
        "Sled" => ChassisType::Sled,
        "RackMount" => ChassisType::RackMount,
        "StandAlone" => ChassisType::StandAlone,
        "Drawer" => ChassisType::Drawer,
        "Module" => ChassisType::Module,
        "Zone" => ChassisType::Zone,
        other => ChassisType::Other(other.to_owned()),
    }
}

fn attribute_value(value: &Value) -> Option<AttributeValue> {
    match value {
        Value::Null => None,
        Value::Bool(b) => Some(AttributeValue::Boolean(*b)),
        Value::Number(n) => Some(match n.as_i64() {
            Some(i) => AttributeValue::Integer(i),
            None => AttributeValue::Text(n.to_string()),
        }),
        Value::String(s) => Some(AttributeValue::Text(s.clone())),
        other => Some(AttributeValue::Text(other.to_string())),
    }
}

fn attributes(bios: &Value) -> Vec<Attribute> {
    bios["Attributes"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, value)| Attribute {
            name: name.clone(),
            value: attribute_value(value),
        })
        .collect()
}

const APPLY_TIMES: [(ApplyTime, &str); 4] = [
    (ApplyTime::Immediate, "Immediate"),
    (ApplyTime::OnReset, "OnReset"),
    (
        ApplyTime::AtMaintenanceWindowStart,
        "AtMaintenanceWindowStart",
    ),
    (
        ApplyTime::InMaintenanceWindowOnReset,
        "InMaintenanceWindowOnReset",
    ),
];

/// The system's `Bios` resource and its path.
fn bios_of(exchange: &mut Exchange, id: &str) -> Result<(String, Value), Stop> {
    let system = exchange.get(id)?;
    let path = link(&system, "Bios", id)?;
    let bios = exchange.get(&path)?;
    Ok((path, bios))
}

fn read_bios(exchange: &mut Exchange, id: &str) -> Result<Bios, Stop> {
    let (_, bios) = bios_of(exchange, id)?;
    let current = attributes(&bios);
    let settings = &bios["@Redfish.Settings"];
    // Staged: the settings object's values that differ from the current ones.
    let pending = match settings["SettingsObject"]["@odata.id"].as_str() {
        Some(path) => {
            let mut staged = exchange.get(path)?;
            if let Some(values) = staged["Attributes"].as_object_mut() {
                values.retain(|name, value| bios["Attributes"][name.as_str()] != *value);
            }
            attributes(&staged)
        }
        None => Vec::new(),
    };
    let apply_times = settings["SupportedApplyTimes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| case_of(&APPLY_TIMES, t.as_str()))
        .collect();
    Ok(Bios {
        attributes: current,
        registry: Vec::new(),
        pending,
        apply_times,
    })
}

fn set_bios(exchange: &mut Exchange, id: &str, change: &BiosChange) -> Result<(), Stop> {
    let (path, bios) = bios_of(exchange, id)?;
    let target = text(&bios["@Redfish.Settings"]["SettingsObject"], "@odata.id").unwrap_or(path);
    let values: Map<String, Value> = change
        .attributes
        .iter()
        .map(|a| {
            let value = match &a.value {
                None => Value::Null,
                Some(AttributeValue::Text(s)) => json!(s),
                Some(AttributeValue::Integer(i)) => json!(i),
                Some(AttributeValue::Boolean(b)) => json!(b),
            };
            (a.name.clone(), value)
        })
        .collect();
    let mut body = json!({ "Attributes": values });
    if let Some(time) = change.apply_time {
        body["@Redfish.SettingsApplyTime"] = json!({"ApplyTime": name_of(&APPLY_TIMES, time)});
    }
    exchange.write(Method::Patch, &target, body).map(drop)
}

fn secure_boot_of(exchange: &mut Exchange, id: &str) -> Result<String, Stop> {
    let system = exchange.get(id)?;
    Ok(link(&system, "SecureBoot", id)?)
}

fn read_hardware(exchange: &mut Exchange, id: &str) -> Result<HardwareInventory, Stop> {
    let system = exchange.get(id)?;
    let mut inventory = HardwareInventory {
        processors: Vec::new(),
        memory: Vec::new(),
        storage: Vec::new(),
        nics: Vec::new(),
    };
    if let Ok(collection) = link(&system, "Processors", id) {
        let paths = exchange.members(&collection)?;
        for cpu in exchange.get_all(&paths)? {
            inventory.processors.push(Processor {
                id: text(&cpu, "Id").unwrap_or_default(),
                socket: text(&cpu, "Socket"),
                processor_type: text(&cpu, "ProcessorType"),
                instruction_set: text(&cpu, "InstructionSet"),
                manufacturer: text(&cpu, "Manufacturer"),
                model: text(&cpu, "Model"),
                cores: number(&cpu["TotalCores"]).map(|n| n as u32),
                threads: number(&cpu["TotalThreads"]).map(|n| n as u32),
                max_speed_mhz: number(&cpu["MaxSpeedMHz"]).map(|n| n as u32),
            });
        }
    }
    if let Ok(collection) = link(&system, "EthernetInterfaces", id) {
        let paths = exchange.members(&collection)?;
        for nic in exchange.get_all(&paths)? {
            inventory.nics.push(NicLink {
                id: text(&nic, "Id").unwrap_or_default(),
                name: text(&nic, "Name"),
                mac: text(&nic, "MACAddress").map(|m| m.to_lowercase()),
                link: match nic["LinkStatus"].as_str() {
                    Some("LinkUp") => Some(LinkState::Up),
                    Some("LinkDown") => Some(LinkState::Down),
                    Some("NoLink") => Some(LinkState::NoLink),
                    _ => None,
                },
                speed_mbps: number(&nic["SpeedMbps"]).map(|n| n as u32),
            });
        }
    }
    if inventory.processors.is_empty() && inventory.nics.is_empty() {
        return Err(Error::Unsupported(format!("{id} links no Processors or NICs")).into());
    }
    Ok(inventory)
}

fn read_firmware(
    exchange: &mut Exchange,
    root: &str,
    id: &str,
) -> Result<Vec<FirmwareComponent>, Stop> {
    let service = exchange.get(root)?;
    let updateable = service["UpdateService"]["@odata.id"].is_string();
    let system = exchange.get(id)?;
    let mut components = Vec::new();
    if let Some(version) = text(&system, "BiosVersion") {
        components.push(FirmwareComponent {
            id: id.to_owned(),
            name: "BIOS".to_owned(),
            kind: ComponentKind::Bios,
            version: Some(version),
            updateable,
        });
    }
    let managers = links(&system["Links"]["ManagedBy"]);
    for (path, manager) in managers.iter().zip(exchange.get_all(&managers)?) {
        if let Some(version) = text(&manager, "FirmwareVersion") {
            components.push(FirmwareComponent {
                id: path.clone(),
                name: text(&manager, "Name").unwrap_or_else(|| "BMC".to_owned()),
                kind: ComponentKind::Bmc,
                version: Some(version),
                updateable,
            });
        }
    }
    if components.is_empty() {
        return Err(Error::Unsupported(format!("{id} reports no firmware version")).into());
    }
    Ok(components)
}

fn update_firmware(
    exchange: &mut Exchange,
    root: &str,
    update: &FirmwareUpdate,
) -> Result<Option<String>, Stop> {
    let service = exchange.get(root)?;
    let path = link(&service, "UpdateService", root)?;
    let updates = exchange.get(&path)?;
    let target = action(&updates, "#UpdateService.SimpleUpdate", &path)?;
    let body = json!({"ImageURI": update.image_url, "Targets": update.targets});
    let answer = exchange.write(Method::Post, &target, body)?;
    let task = answer["body"]["@odata.id"]
        .as_str()
        .filter(|_| answer["body"]["TaskState"].is_string())
        .or(answer["location"].as_str());
    Ok(task.map(|t| url_path(t).to_owned()))
}

/// The path of a URL a service answered (a `Location` may be absolute).
fn url_path(url: &str) -> &str {
    match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |at| &rest[at..]),
        None => url,
    }
}

fn read_task(exchange: &mut Exchange, task: &str) -> Result<TaskStatus, Stop> {
    let task = exchange.get(task)?;
    Ok(TaskStatus {
        state: match task["TaskState"].as_str() {
            Some("Completed") if task["TaskStatus"] == "Critical" => TaskState::Failed,
            Some("Completed") => TaskState::Completed,
            Some("Exception" | "Killed" | "Cancelled") => TaskState::Failed,
            _ => TaskState::Running,
        },
        percent: number(&task["PercentComplete"]).map(|p| p.min(100) as u8),
        messages: task["Messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| text(m, "Message"))
            .collect(),
    })
}

/// The call, run from its start over the answers the exchange holds.
fn run(exchange: &mut Exchange, call: &Call) -> Result<Outcome, Stop> {
    let root = root(&podium::plugin::config::get())?;
    Ok(match call {
        Call::Probe => {
            let service = exchange.get(&root)?;
            Outcome::ServiceInfo(ServiceInfo {
                root_link: root,
                product: text(&service, "Product"),
                version: text(&service, "RedfishVersion"),
            })
        }
        Call::Discover => {
            let paths = exchange.members(&format!("{root}/Systems"))?;
            let resources = exchange.get_all(&paths)?;
            let mut systems = Vec::new();
            for (path, resource) in paths.iter().zip(&resources) {
                systems.push(system(exchange, path, resource)?);
            }
            Outcome::Systems(systems)
        }
        Call::Inspect(id) => {
            let resource = exchange.get(id)?;
            Outcome::System(system(exchange, id, &resource)?)
        }
        Call::GetPower(id) => Outcome::Power(power(&exchange.get(id)?)),
        Call::SetPower((id, action)) => {
            let reset = match action {
                PowerAction::On => "On",
                PowerAction::Off | PowerAction::ForceOff => "ForceOff",
                PowerAction::GracefulShutdown => "GracefulShutdown",
                PowerAction::GracefulRestart => "GracefulRestart",
                PowerAction::ForceRestart => "ForceRestart",
            };
            let target = format!("{id}/Actions/ComputerSystem.Reset");
            exchange.write(Method::Post, &target, json!({"ResetType": reset}))?;
            Outcome::Done
        }
        Call::SetBootOverride((id, settings)) => {
            let mut boot = json!({
                "BootSourceOverrideTarget": name_of(&BOOT_TARGETS, settings.target),
                "BootSourceOverrideEnabled": name_of(&BOOT_PERSISTENCES, settings.persistence),
            });
            if let Some(mode) = settings.mode {
                boot["BootSourceOverrideMode"] = json!(match mode {
                    BootMode::Uefi => "UEFI",
                    BootMode::Legacy => "Legacy",
                });
            }
            exchange.write(Method::Patch, id, json!({ "Boot": boot }))?;
            Outcome::Done
        }
        Call::InsertMedia((
            id,
            MediaRequest {
                image_url,
                media_type,
                write_protected,
            },
        )) => {
            let slots = slots(exchange, id, *media_type)?;
            if slots
                .iter()
                .any(|s| s["Inserted"] == true && s["Image"] == *image_url)
            {
                return Ok(Outcome::Done);
            }
            let Some(free) = slots.iter().find(|s| s["Inserted"] != true) else {
                return Err(Error::Conflict(format!("{id}: no free slot")).into());
            };
            let target = action(free, "#VirtualMedia.InsertMedia", id)?;
            let body =
                json!({"Image": image_url, "Inserted": true, "WriteProtected": write_protected});
            exchange.write(Method::Post, &target, body)?;
            Outcome::Done
        }
        Call::EjectMedia((id, media_type)) => {
            for slot in slots(exchange, id, *media_type)? {
                if slot["Inserted"] == true {
                    let target = action(&slot, "#VirtualMedia.EjectMedia", id)?;
                    exchange.write(Method::Post, &target, json!({}))?;
                }
            }
            Outcome::Done
        }
        Call::DiscoverChassis => {
            let paths = exchange.members(&format!("{root}/Chassis"))?;
            let resources = exchange.get_all(&paths)?;
            Outcome::Chassis(
                paths
                    .iter()
                    .zip(&resources)
                    .map(|(path, c)| Chassis {
                        id: path.clone(),
                        name: text(c, "Name").unwrap_or_else(|| path.clone()),
                        chassis_type: chassis_type(c["ChassisType"].as_str()),
                        manufacturer: text(c, "Manufacturer"),
                        model: text(c, "Model"),
                        serial: text(c, "SerialNumber"),
                        location: None,
                        power: c["PowerState"].as_str().map(|_| power(c)),
                        health: match c["Status"]["Health"].as_str() {
                            Some("OK") => Some(Health::Ok),
                            Some("Warning") => Some(Health::Warning),
                            Some("Critical") => Some(Health::Critical),
                            _ => None,
                        },
                        contained_by: text(&c["Links"]["ContainedBy"], "@odata.id")
                            .filter(|parent| parent != path && paths.contains(parent)),
                        systems: links(&c["Links"]["ComputerSystems"]),
                    })
                    .collect(),
            )
        }
        // sushy-tools composes nothing: a fixed, empty service, and no composing.
        Call::ReadComposition => Outcome::Composition(CompositionService {
            blocks: Vec::new(),
            zones: Vec::new(),
            offered_zones: Vec::new(),
            limits: Vec::new(),
        }),
        Call::Compose(request) => {
            return Err(Error::Unsupported(format!(
                "composing {}: the emulator composes nothing",
                request.name
            ))
            .into());
        }
        Call::Decompose(id) => {
            return Err(Error::Unsupported(format!(
                "decomposing {id}: the emulator composes nothing"
            ))
            .into());
        }
        Call::ReadBios(id) => Outcome::Bios(read_bios(exchange, id)?),
        Call::SetBios((id, change)) => {
            set_bios(exchange, id, change)?;
            Outcome::Done
        }
        Call::ResetBios(id) => {
            let (path, bios) = bios_of(exchange, id)?;
            let target = action(&bios, "#Bios.ResetBios", &path)?;
            exchange.write(Method::Post, &target, json!({}))?;
            Outcome::Done
        }
        Call::ReadSecureBoot(id) => {
            let path = secure_boot_of(exchange, id)?;
            let state = exchange.get(&path)?;
            Outcome::SecureBoot(SecureBoot {
                enabled: state["SecureBootEnable"]
                    .as_bool()
                    .ok_or_else(|| Error::Protocol(format!("GET {path}: no SecureBootEnable")))?,
                current_boot: match state["SecureBootCurrentBoot"].as_str() {
                    Some("Enabled") => Some(true),
                    Some("Disabled") => Some(false),
                    _ => None,
                },
                mode: text(&state, "SecureBootMode"),
            })
        }
        Call::SetSecureBoot((id, enabled)) => {
            let path = secure_boot_of(exchange, id)?;
            exchange.write(Method::Patch, &path, json!({"SecureBootEnable": enabled}))?;
            Outcome::Done
        }
        Call::ReadHardware(id) => Outcome::Hardware(read_hardware(exchange, id)?),
        Call::ReadFirmware(id) => Outcome::Firmware(read_firmware(exchange, &root, id)?),
        Call::UpdateFirmware((_, update)) => {
            Outcome::TaskStarted(update_firmware(exchange, &root, update)?)
        }
        Call::ReadTask((_, task)) => Outcome::Task(read_task(exchange, task)?),
    })
}

/// The step after a run over `steps`: its requests, with the answers so far as the state, or
/// the call's outcome.
fn step(call: &Call, steps: Vec<Vec<Value>>) -> Step {
    let mut exchange = Exchange { steps, used: 0 };
    match run(&mut exchange, call) {
        Ok(outcome) => Step::Finished(Ok(outcome)),
        Err(Stop::Fail(error)) => Step::Finished(Err(error)),
        Err(Stop::Send(requests)) => Step::Send(Pending {
            requests,
            state: Value::from(
                exchange
                    .steps
                    .into_iter()
                    .map(Value::from)
                    .collect::<Vec<_>>(),
            )
            .to_string()
            .into_bytes(),
        }),
    }
}

impl PluginGuest for Component {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "contract-0-2-0".to_owned(),
            version: "0.2.0".to_owned(),
            description: "A driver built against podium:plugin@0.2.0 as released".to_owned(),
        }
    }

    fn validate_config(config: String) -> Result<(), Error> {
        root(&config).map(drop)
    }
}

impl DriverGuest for Component {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::DISCOVER
            | CapabilitySet::POWER
            | CapabilitySet::BOOT_OVERRIDE
            | CapabilitySet::VIRTUAL_MEDIA
    }

    fn start(call: Call) -> Step {
        step(&call, Vec::new())
    }

    fn resume(call: Call, state: Vec<u8>, answers: Vec<Result<Response, HttpError>>) -> Step {
        let mut steps: Vec<Vec<Value>> = match serde_json::from_slice(&state) {
            Ok(steps) => steps,
            Err(e) => {
                return Step::Finished(Err(Error::Internal(format!("a state of its own: {e}"))));
            }
        };
        steps.push(answers.into_iter().map(recorded).collect());
        step(&call, steps)
    }
}

/// The exports' C-ABI shims are `unsafe`: allowed for this expansion alone, in wasm builds only.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod export_glue {
    use super::Component;
    super::export!(Component with_types_in super);
}
