//! Podium's Redfish hardware driver, built on the plugin SDK (`sdk/podium-plugin`) as a
//! WebAssembly component of the `hardware-driver` world.
//!
//! This file is the driver as the SDK sees it: [`Redfish`], built from its configuration for
//! each call, and its [`HardwareDriver`] methods. The Redfish logic is in [`redfish`], plain
//! Rust on the SDK's `http` and `log`, which the native tests run through the SDK's harness
//! against payloads captured from a real Redfish service.
//!
//! Configuration (see [`config`]): `{"root": "/redfish/v1", "system_ids": [..]}`, all optional.

mod config;
mod error;
mod model;
mod redfish;

#[cfg(test)]
mod tests;

use podium_plugin::driver::{
    Bios, BiosChange, BootSettings, CapabilitySet, Chassis, ComposeRequest, CompositionService,
    FirmwareComponent, FirmwareUpdate, HardwareInventory, MediaRequest, MediaType, PowerAction,
    PowerState, SecureBoot, ServiceInfo, System, TaskStatus,
};
use podium_plugin::{HardwareDriver, Plugin, PluginInfo, Result};

use crate::config::Config;
use crate::redfish::Client;

/// The driver, for one call.
#[derive(Debug)]
pub struct Redfish(Client);

impl Plugin for Redfish {
    fn info() -> PluginInfo {
        podium_plugin::info!(
            "redfish",
            "Inventory, power, boot override and virtual media through a Redfish service (a BMC \
             or a pod manager)"
        )
    }

    fn from_config(config: &str) -> Result<Self> {
        Config::parse(config).map(|c| Redfish(Client::new(c)))
    }
}

impl HardwareDriver for Redfish {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::DISCOVER
            | CapabilitySet::POWER
            | CapabilitySet::BOOT_OVERRIDE
            | CapabilitySet::VIRTUAL_MEDIA
    }

    /// `root-link` is the service root's path (`/redfish/v1/` as the service names it, else the
    /// configured root): the plugin only knows paths, the host makes it absolute against the
    /// endpoint's base URL.
    async fn probe(&self) -> Result<ServiceInfo> {
        self.0.probe().await
    }

    async fn discover(&self) -> Result<Vec<System>> {
        self.0.discover().await
    }

    async fn inspect(&self, system_id: &str) -> Result<System> {
        self.0.inspect(system_id).await
    }

    async fn get_power(&self, system_id: &str) -> Result<PowerState> {
        self.0.get_power(system_id).await
    }

    async fn set_power(&self, system_id: &str, action: PowerAction) -> Result<()> {
        self.0.set_power(system_id, action).await
    }

    async fn set_boot_override(&self, system_id: &str, settings: BootSettings) -> Result<()> {
        self.0.set_boot_override(system_id, &settings).await
    }

    async fn insert_media(&self, system_id: &str, request: MediaRequest) -> Result<()> {
        self.0.insert_media(system_id, &request).await
    }

    async fn eject_media(&self, system_id: &str, media_type: MediaType) -> Result<()> {
        self.0.eject_media(system_id, media_type).await
    }

    async fn discover_chassis(&self) -> Result<Vec<Chassis>> {
        self.0.discover_chassis().await
    }

    async fn get_chassis_power(&self, chassis_id: &str) -> Result<PowerState> {
        self.0.get_chassis_power(chassis_id).await
    }

    async fn set_chassis_power(&self, chassis_id: &str, action: PowerAction) -> Result<()> {
        self.0.set_chassis_power(chassis_id, action).await
    }

    async fn read_composition(&self) -> Result<CompositionService> {
        self.0.read_composition().await
    }

    async fn compose(&self, request: ComposeRequest) -> Result<String> {
        self.0.compose(&request).await
    }

    async fn decompose(&self, system_id: &str) -> Result<()> {
        self.0.decompose(system_id).await
    }

    async fn read_bios(&self, system_id: &str) -> Result<Bios> {
        self.0.read_bios(system_id).await
    }

    async fn set_bios(&self, system_id: &str, change: BiosChange) -> Result<()> {
        self.0.set_bios(system_id, &change).await
    }

    async fn reset_bios(&self, system_id: &str) -> Result<()> {
        self.0.reset_bios(system_id).await
    }

    async fn read_hardware(&self, system_id: &str) -> Result<HardwareInventory> {
        self.0.read_hardware(system_id).await
    }

    async fn read_secure_boot(&self, system_id: &str) -> Result<SecureBoot> {
        self.0.read_secure_boot(system_id).await
    }

    async fn set_secure_boot(&self, system_id: &str, enabled: bool) -> Result<()> {
        self.0.set_secure_boot(system_id, enabled).await
    }

    async fn read_firmware(&self, system_id: &str) -> Result<Vec<FirmwareComponent>> {
        self.0.read_firmware(system_id).await
    }

    async fn update_firmware(
        &self,
        system_id: &str,
        update: FirmwareUpdate,
    ) -> Result<Option<String>> {
        self.0.update_firmware(system_id, &update).await
    }

    async fn read_task(&self, system_id: &str, task: &str) -> Result<TaskStatus> {
        self.0.read_task(system_id, task).await
    }
}

podium_plugin::export!(Redfish: HardwareDriver);
