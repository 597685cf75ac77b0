//! {{name}}: a hardware driver for a Redfish service, built on the podium-plugin SDK.
//!
//! Every call is a fresh instance: the host hands the configuration to `from_config`, then calls
//! one method. URLs are paths on the pod manager's endpoint; the host adds the credentials.
//!
//! The methods are `async`: the host sends what they await between the steps of the call
//! (`podium:plugin@0.3.0`), and what they await together (`try_join_all`) is sent together. A
//! method must send the same requests when given the same answers (no clock, no randomness):
//! each step replays it from the start, and the tests fail one that does not.

use podium_plugin::exchange::try_join_all;
use podium_plugin::driver::{
    CapabilitySet, Nic, PowerAction, PowerState, ServiceInfo, System, SystemKind,
};
use podium_plugin::http::{self, Method};
use podium_plugin::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

/// The configuration the admin sets on the pod manager: `{"root": "/redfish/v1"}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Driver {
    #[serde(default = "default_root")]
    root: String,
}

fn default_root() -> String {
    "/redfish/v1".to_owned()
}

impl Plugin for Driver {
    fn info() -> PluginInfo {
        podium_plugin::info!("{{name}}", "A Redfish hardware driver")
    }

    fn from_config(config: &str) -> Result<Self> {
        let driver: Driver = podium_plugin::config::parse(config)?;
        if !driver.root.starts_with('/') {
            return Err(Error::InvalidConfig(format!(
                "root: must be a path such as /redfish/v1, found {:?}",
                driver.root
            )));
        }
        Ok(driver)
    }
}

impl HardwareDriver for Driver {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::DISCOVER | CapabilitySet::POWER
    }

    async fn probe(&self) -> Result<ServiceInfo> {
        let root: Value = http::get_json(&self.root).await?;
        Ok(ServiceInfo {
            root_link: self.root.clone(),
            product: text(&root, "Product"),
            version: text(&root, "RedfishVersion"),
        })
    }

    async fn discover(&self) -> Result<Vec<System>> {
        let systems = format!("{}/Systems", self.root);
        let members = http::collection_members(&systems).await?;
        // Every system in the same steps.
        try_join_all(members.iter().map(|path| self.inspect(path))).await
    }

    async fn inspect(&self, system_id: &str) -> Result<System> {
        let system: Value = http::get_json(system_id).await?;
        let mut nics = Vec::new();
        if let Some(link) = system["EthernetInterfaces"]["@odata.id"].as_str() {
            let paths = http::collection_members(link).await?;
            let read = try_join_all(paths.iter().map(|path| http::get_json::<Value>(path))).await?;
            for (path, nic) in paths.into_iter().zip(read) {
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
            id: system_id.to_owned(),
            kind: SystemKind::System,
            name: text(&system, "Name").unwrap_or_else(|| system_id.to_owned()),
            uuid: text(&system, "UUID").map(|u| u.to_lowercase()),
            manufacturer: text(&system, "Manufacturer"),
            model: text(&system, "Model"),
            serial: text(&system, "SerialNumber"),
            cpu_count: system["ProcessorSummary"]["Count"].as_u64().unwrap_or(0) as u32,
            memory_mib: (system["MemorySummary"]["TotalSystemMemoryGiB"]
                .as_f64()
                .unwrap_or(0.0)
                * 1024.0) as u64,
            nics,
            power: power_state(&system),
            boot: None,
            media_slots: Vec::new(),
        })
    }

    async fn get_power(&self, system_id: &str) -> Result<PowerState> {
        let system: Value = http::get_json(system_id).await?;
        Ok(power_state(&system))
    }

    async fn set_power(&self, system_id: &str, action: PowerAction) -> Result<()> {
        let reset_type = match action {
            PowerAction::On => "On",
            PowerAction::Off | PowerAction::ForceOff => "ForceOff",
            PowerAction::GracefulShutdown => "GracefulShutdown",
            PowerAction::GracefulRestart => "GracefulRestart",
            PowerAction::ForceRestart => "ForceRestart",
        };
        let target = format!("{system_id}/Actions/ComputerSystem.Reset");
        http::send_json(Method::Post, &target, &json!({ "ResetType": reset_type })).await?;
        Ok(())
    }
}

fn power_state(system: &Value) -> PowerState {
    match system["PowerState"].as_str() {
        Some("On") => PowerState::On,
        Some("Off") => PowerState::Off,
        Some("PoweringOn") => PowerState::PoweringOn,
        Some("PoweringOff") => PowerState::PoweringOff,
        _ => PowerState::Unknown,
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    value[key]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

podium_plugin::export!(Driver: HardwareDriver);
