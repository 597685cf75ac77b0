//! `contract-0-1-0`: a hardware driver written against `podium:plugin@0.1.0` as released, with
//! wit-bindgen and this crate's own copy of the WIT. It uses every import of its world (`http`,
//! `log`, `config`) and answers every export: `probe`, `discover`, `inspect`, `get-power` and
//! `set-power` against a Redfish service; boot override and virtual media are `unsupported`.
//! Configuration: `{"root": "/redfish/v1"}` (optional).

wit_bindgen::generate!({
    path: "wit",
    world: "hardware-driver",
});

use exports::podium::plugin::driver::{
    BootSettings, CapabilitySet, Guest as DriverGuest, MediaRequest, MediaType, Nic, PowerAction,
    PowerState, ServiceInfo, System, SystemKind,
};
use exports::podium::plugin::plugin::Guest as PluginGuest;
use podium::plugin::http::{self, Method, Request};
use podium::plugin::log::{self, Level};
use podium::plugin::types::{Error, PluginInfo, RemoteError};
use serde_json::{Value, json};

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Component;

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

fn send(method: Method, url: &str, body: Option<Value>) -> Result<Value, Error> {
    let mut headers = vec![("Accept".to_owned(), "application/json".to_owned())];
    if body.is_some() {
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
    }
    let response = http::send(&Request {
        method,
        url: url.to_owned(),
        headers,
        body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
    })
    .map_err(|e| Error::Unreachable(format!("{url}: {e:?}")))?;
    match response.status {
        200..=299 if response.body.is_empty() => Ok(Value::Null),
        200..=299 => serde_json::from_slice(&response.body)
            .map_err(|e| Error::Protocol(format!("{url}: {e}"))),
        401 | 403 => Err(Error::Unauthorized(url.to_owned())),
        404 => Err(Error::NotFound(url.to_owned())),
        status => Err(Error::Remote(RemoteError {
            status,
            message: url.to_owned(),
        })),
    }
}

fn members(url: &str) -> Result<Vec<String>, Error> {
    let page = send(Method::Get, url, None)?;
    Ok(page["Members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["@odata.id"].as_str().map(str::to_owned))
        .collect())
}

fn power(system: &Value) -> PowerState {
    match system["PowerState"].as_str() {
        Some("On") => PowerState::On,
        Some("Off") => PowerState::Off,
        _ => PowerState::Unknown,
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    value[key]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

impl PluginGuest for Component {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "contract-0-1-0".to_owned(),
            version: "0.1.0".to_owned(),
            description: "A driver built against podium:plugin@0.1.0 as released".to_owned(),
        }
    }

    fn validate_config(config: String) -> Result<(), Error> {
        root(&config).map(drop)
    }
}

impl DriverGuest for Component {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::DISCOVER | CapabilitySet::POWER
    }

    fn probe() -> Result<ServiceInfo, Error> {
        let root = root(&podium::plugin::config::get())?;
        let service = send(Method::Get, &root, None)?;
        log::log(Level::Info, "probed");
        Ok(ServiceInfo {
            root_link: root,
            product: text(&service, "Product"),
            version: text(&service, "RedfishVersion"),
        })
    }

    fn discover() -> Result<Vec<System>, Error> {
        let root = root(&podium::plugin::config::get())?;
        members(&format!("{root}/Systems"))?
            .iter()
            .map(|path| Self::inspect(path.clone()))
            .collect()
    }

    fn inspect(system_id: String) -> Result<System, Error> {
        let system = send(Method::Get, &system_id, None)?;
        let mut nics = Vec::new();
        if let Some(link) = system["EthernetInterfaces"]["@odata.id"].as_str() {
            for path in members(link)? {
                let nic = send(Method::Get, &path, None)?;
                if let Some(mac) = text(&nic, "MACAddress") {
                    nics.push(Nic {
                        id: path,
                        name: text(&nic, "Name"),
                        mac,
                        speed_mbps: None,
                    });
                }
            }
        }
        Ok(System {
            id: system_id.clone(),
            kind: SystemKind::System,
            name: text(&system, "Name").unwrap_or(system_id),
            uuid: text(&system, "UUID").map(|u| u.to_lowercase()),
            manufacturer: text(&system, "Manufacturer"),
            model: text(&system, "Model"),
            serial: None,
            cpu_count: 0,
            memory_mib: 0,
            nics,
            power: power(&system),
            boot: None,
            media_slots: Vec::new(),
        })
    }

    fn get_power(system_id: String) -> Result<PowerState, Error> {
        Ok(power(&send(Method::Get, &system_id, None)?))
    }

    fn set_power(system_id: String, action: PowerAction) -> Result<(), Error> {
        let reset = match action {
            PowerAction::On => "On",
            PowerAction::Off | PowerAction::ForceOff => "ForceOff",
            PowerAction::GracefulShutdown => "GracefulShutdown",
            PowerAction::GracefulRestart => "GracefulRestart",
            PowerAction::ForceRestart => "ForceRestart",
        };
        let target = format!("{system_id}/Actions/ComputerSystem.Reset");
        send(Method::Post, &target, Some(json!({ "ResetType": reset }))).map(drop)
    }

    fn set_boot_override(_: String, _: BootSettings) -> Result<(), Error> {
        Err(Error::Unsupported("boot override".to_owned()))
    }

    fn insert_media(_: String, _: MediaRequest) -> Result<(), Error> {
        Err(Error::Unsupported("virtual media".to_owned()))
    }

    fn eject_media(_: String, _: MediaType) -> Result<(), Error> {
        Err(Error::Unsupported("virtual media".to_owned()))
    }
}

/// The exports' C-ABI shims are `unsafe`: allowed for this expansion alone, in wasm builds only.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod export_glue {
    use super::Component;
    super::export!(Component with_types_in super);
}
