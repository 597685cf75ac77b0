//! What a Redfish client reads of a system beyond its summary: its BIOS and the attribute
//! registry that types it, its secure boot, its processors, memory and storage. Each is read live
//! through the host's driver, for the hosts the caller may drive (`redfish_host`), as the JSON
//! API reads them for an admin; an inventory read serves the reads of the seconds after it.

use std::sync::Arc;

use podium_types::{Bios, HardwareInventory, HostId, SecureBoot};

use crate::app::Podium;
use crate::auth::Caller;
use crate::error::Error;

impl Podium {
    /// A system the caller may drive, by its id (to check before answering what names it,
    /// without asking its BMC anything).
    pub async fn redfish_visible(&self, caller: &Caller, id: &HostId) -> Result<HostId, Error> {
        let (host, _) = self.redfish_host(caller, id).await?;
        Ok(host.id)
    }

    /// The system's BIOS: its attributes, registry and what is staged.
    pub async fn redfish_bios(&self, caller: &Caller, id: &HostId) -> Result<Bios, Error> {
        let (host, _) = self.redfish_host(caller, id).await?;
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        self.bios_read(&pm, &host).await
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
