//! A host's full inventory (processors, memory modules, storage, NICs with their link), read
//! live through its driver.

use podium_types::{ErrorCode, HardwareInventory, HostId};

use crate::app::Podium;
use crate::auth::Caller;
use crate::bios::unsupported;
use crate::data::{Host, PodManager};
use crate::error::Error;

impl Podium {
    /// `GET /v1/hosts/{id}/hardware`: the host's full inventory as its BMC reports it now; a
    /// 409 `hardware_unsupported` where the driver reads none of it.
    pub async fn host_hardware(
        &self,
        caller: &Caller,
        id: &HostId,
    ) -> Result<HardwareInventory, Error> {
        let host = self.host_get(caller, id).await?;
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        self.hardware_read(&pm, &host).await
    }

    pub(crate) async fn hardware_read(
        &self,
        pm: &PodManager,
        host: &Host,
    ) -> Result<HardwareInventory, Error> {
        let driver = self.host_driver(pm, host).await?;
        driver
            .call()
            .read_hardware(&host.system_id)
            .await
            .map_err(|e| unsupported(host, ErrorCode::HardwareUnsupported, "full inventory", e))
    }
}
