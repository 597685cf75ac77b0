//! What a Redfish client reads of a system beyond its summary: its BIOS and the attribute
//! registry that types it, its secure boot, its processors, memory and storage. Each is read live
//! through the host's driver, for the hosts the caller may drive (`redfish_host`), as the JSON
//! API reads them for an admin; an inventory read serves the reads of the seconds after it.

use std::sync::Arc;

use podium_types::views::OperationView;
use podium_types::{
    Bios, BiosChange, FirmwareKind, FirmwareUpdate, HardwareInventory, HostId, SecureBoot,
    SecureBootChange,
};

use crate::app::Podium;
use crate::auth::Caller;
use crate::bios::Asker;
use crate::data::{Host, PodManager};
use crate::error::Error;
use crate::lifecycle::{HostAction, action_allowed};

impl Podium {
    /// A system the caller may drive, by its id (to check before answering what names it,
    /// without asking its BMC anything).
    pub async fn redfish_visible(&self, caller: &Caller, id: &HostId) -> Result<HostId, Error> {
        let (host, _) = self.redfish_host(caller, id).await?;
        Ok(host.id)
    }

    /// The system's BIOS: its attributes, registry and what is staged; to a tenant, every
    /// attribute its site does not let tenants change is read-only.
    pub async fn redfish_bios(&self, caller: &Caller, id: &HostId) -> Result<Bios, Error> {
        let (host, claim) = self.redfish_host(caller, id).await?;
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        let bios = self.bios_read(&pm, &host).await?;
        Ok(match claim {
            Some(_) => bios.restricted_to(&pm.tenant_firmware.bios_attributes),
            None => bios,
        })
    }

    /// A PATCH of the system's `Bios/Settings`: a change of BIOS attributes, within what a
    /// tenant's site lets it change.
    pub async fn redfish_bios_change(
        &self,
        caller: &Caller,
        id: &HostId,
        change: BiosChange,
    ) -> Result<OperationView, Error> {
        let (host, pm, asker) = self.redfish_firmware_target(caller, id).await?;
        self.bios_change(&host, &pm, change, &asker).await
    }

    /// `Bios.ResetBios`: the admin's only.
    pub async fn redfish_bios_reset(
        &self,
        caller: &Caller,
        id: &HostId,
    ) -> Result<OperationView, Error> {
        let (host, pm, asker) = self.redfish_firmware_target(caller, id).await?;
        self.bios_reset(&host, &pm, &asker).await
    }

    /// A PATCH of the system's `SecureBoot`.
    pub async fn redfish_secure_boot_change(
        &self,
        caller: &Caller,
        id: &HostId,
        change: SecureBootChange,
    ) -> Result<OperationView, Error> {
        let (host, pm, asker) = self.redfish_firmware_target(caller, id).await?;
        self.secure_boot_change(&host, &pm, change, &asker).await
    }

    /// `UpdateService.SimpleUpdate`: the BIOS of the one system `targets` names (the caller's
    /// only system where it names none) updated from `image_url`, as the JSON API's update is;
    /// a tenant's where its site lets tenants update firmware.
    pub async fn redfish_simple_update(
        &self,
        caller: &Caller,
        image_url: String,
        targets: Vec<HostId>,
    ) -> Result<OperationView, Error> {
        let id = match targets.as_slice() {
            [one] => one.clone(),
            [] => {
                let systems = self.redfish_systems(caller).await?;
                match systems.as_slice() {
                    [one] => one.id.clone(),
                    _ => {
                        return Err(Error::invalid(
                            "Targets",
                            "name the system to update: the caller drives more than one, or none",
                        ));
                    }
                }
            }
            _ => {
                return Err(Error::invalid(
                    "Targets",
                    "name one system: each system's update is an operation of its own",
                ));
            }
        };
        let (host, pm, asker) = self.redfish_firmware_target(caller, &id).await?;
        crate::firmware::may_update(&pm, &asker)?;
        let image_url = crate::firmware::image_check("ImageURI", &image_url)?;
        let components = self.firmware_read(&pm, &host).await?;
        let bios = components
            .iter()
            .find(|c| c.kind == FirmwareKind::Bios && c.updateable)
            .ok_or_else(|| {
                Error::invalid(
                    "Targets",
                    format!("system `{id}` has no BIOS firmware its BMC can update"),
                )
            })?;
        let update = FirmwareUpdate {
            image_url,
            targets: vec![bios.id.clone()],
        };
        self.firmware_update_of(&host, update, &asker, &components)
            .await
    }

    /// A system the caller may change the firmware of (in a state that allows it), its pod
    /// manager, and who asks.
    async fn redfish_firmware_target(
        &self,
        caller: &Caller,
        id: &HostId,
    ) -> Result<(Host, PodManager, Asker), Error> {
        caller.require_writable()?;
        let (host, claim) = self.redfish_host(caller, id).await?;
        let (action, asker) = match claim {
            Some(claim) => (HostAction::TenantFirmware, Asker::Tenant(claim)),
            None => (HostAction::Firmware, Asker::Admin),
        };
        action_allowed(&host, action)?;
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        Ok((host, pm, asker))
    }

    /// The system's secure boot.
    pub async fn redfish_secure_boot(
        &self,
        caller: &Caller,
        id: &HostId,
    ) -> Result<SecureBoot, Error> {
        let (host, _) = self.redfish_host(caller, id).await?;
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        self.secure_boot_read(&pm, &host).await
    }

    /// The system's processors, memory, storage and NICs: one read of the BMC serves the
    /// reads of the next seconds (`inventory.rs`), as a client walks them one resource at a
    /// time.
    pub async fn redfish_hardware(
        &self,
        caller: &Caller,
        id: &HostId,
    ) -> Result<Arc<HardwareInventory>, Error> {
        let (host, _) = self.redfish_host(caller, id).await?;
        self.inner
            .redfish_inventories
            .get_or_read(&host.id, || async {
                let pm = self.pod_manager_load(&host.pod_manager).await?;
                self.hardware_read(&pm, &host).await
            })
            .await
    }
}
