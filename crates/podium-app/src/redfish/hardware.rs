//! What only the Redfish face does with a system's hardware: `SimpleUpdate` (the BIOS firmware of
//! the one system it names), and the full inventory read once for the reads of the seconds
//! after it, as a client walks it one resource at a time. Its BIOS and secure boot are read and
//! changed on the one path every face takes (`crate::hardware`, `HardwareOf::System`).

use std::sync::Arc;

use podium_types::views::OperationView;
use podium_types::{FirmwareKind, FirmwareUpdate, HardwareInventory, HostId};

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::pod_manager_load;
use crate::error::Error;
use crate::hardware::{HardwareOf, Target};

impl Podium {
    /// A system the caller may drive, by its id (to check before answering what names it,
    /// without asking its BMC anything).
    pub async fn redfish_visible(&self, caller: &Caller, id: &HostId) -> Result<HostId, Error> {
        let (host, _) = self.redfish_host(caller, id).await?;
        Ok(host.id)
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
        let target = self
            .hardware_to_change(caller, HardwareOf::System(&id))
            .await?;
        crate::firmware::may_update(&target.pm, &target.asker)?;
        let image_url = crate::firmware::image_check("ImageURI", &image_url)?;
        let driver = target.driver(self).await?;
        let Target { host, asker, .. } = target;
        let components = crate::firmware::read(self.datastore(), &driver, &host).await?;
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
        let request =
            crate::firmware::update_of_request(self.datastore(), &host, update, &components)
                .await?;
        self.firmware_queue(&host, request, &asker).await
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
                let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
                self.hardware_read(&pm, &host).await
            })
            .await
    }
}
