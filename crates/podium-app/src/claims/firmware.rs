//! What a tenant reads and changes of the hardware of a host it claims, through the JSON API
//! (`/v1/claims/{id}/bios` and beside it): the BIOS (every attribute outside what the site lets
//! tenants change shows read-only), secure boot, firmware and the full inventory; a change
//! within what the pod manager's `tenant_firmware` allows is the same operation an admin's is,
//! run at the claim's request.

use podium_types::views::OperationView;
use podium_types::{
    Bios, BiosChange, ClaimId, Firmware, FirmwareUpdate, HardwareInventory, SecureBoot,
    SecureBootChange,
};

use crate::app::Podium;
use crate::auth::Caller;
use crate::bios::Asker;
use crate::data::{Host, PodManager};
use crate::error::Error;
use crate::lifecycle::{HostAction, action_allowed};

impl Podium {
    /// `GET /v1/claims/{id}/bios`: the claimed host's BIOS, the attributes the tenant may not
    /// change read-only in its registry.
    pub async fn claim_bios(&self, caller: &Caller, id: &ClaimId) -> Result<Bios, Error> {
        let (host, pm) = self.claimed_host(caller, id).await?;
        let bios = self.bios_read(&pm, &host).await?;
        Ok(bios.restricted_to(&pm.tenant_firmware.bios_attributes))
    }

    /// `PATCH /v1/claims/{id}/bios`: a change of the attributes the site lets tenants change.
    pub async fn claim_bios_change(
        &self,
        caller: &Caller,
        id: &ClaimId,
        change: BiosChange,
    ) -> Result<OperationView, Error> {
        let (host, pm) = self.claimed_host_to_change(caller, id).await?;
        self.bios_change(&host, &pm, change, &Asker::Tenant(id.clone()))
            .await
    }

    /// `POST /v1/claims/{id}/bios/reset`: refused (403), since a reset sets every attribute;
    /// answered for a tenant that asks, rather than a 404 for a route it could guess.
    pub async fn claim_bios_reset(
        &self,
        caller: &Caller,
        id: &ClaimId,
    ) -> Result<OperationView, Error> {
        let (host, pm) = self.claimed_host_to_change(caller, id).await?;
        self.bios_reset(&host, &pm, &Asker::Tenant(id.clone()))
            .await
    }

    /// `GET /v1/claims/{id}/secure_boot`.
    pub async fn claim_secure_boot(
        &self,
        caller: &Caller,
        id: &ClaimId,
    ) -> Result<SecureBoot, Error> {
        let (host, pm) = self.claimed_host(caller, id).await?;
        self.secure_boot_read(&pm, &host).await
    }

    /// `PUT /v1/claims/{id}/secure_boot`, where the site lets tenants.
    pub async fn claim_secure_boot_set(
        &self,
        caller: &Caller,
        id: &ClaimId,
        change: SecureBootChange,
    ) -> Result<OperationView, Error> {
        let (host, pm) = self.claimed_host_to_change(caller, id).await?;
        self.secure_boot_change(&host, &pm, change, &Asker::Tenant(id.clone()))
            .await
    }

    /// `GET /v1/claims/{id}/firmware`.
    pub async fn claim_firmware(&self, caller: &Caller, id: &ClaimId) -> Result<Firmware, Error> {
        let (host, pm) = self.claimed_host(caller, id).await?;
        let components = self.firmware_read(&pm, &host).await?;
        Ok(Firmware { components })
    }

    /// `POST /v1/claims/{id}/firmware/update`, where the site lets tenants.
    pub async fn claim_firmware_update(
        &self,
        caller: &Caller,
        id: &ClaimId,
        update: FirmwareUpdate,
    ) -> Result<OperationView, Error> {
        let (host, pm) = self.claimed_host_to_change(caller, id).await?;
        self.firmware_update(&host, &pm, update, &Asker::Tenant(id.clone()))
            .await
    }

    /// `GET /v1/claims/{id}/hardware`: the claimed host's full inventory.
    pub async fn claim_hardware(
        &self,
        caller: &Caller,
        id: &ClaimId,
    ) -> Result<HardwareInventory, Error> {
        let (host, pm) = self.claimed_host(caller, id).await?;
        self.hardware_read(&pm, &host).await
    }

    /// The host a bound claim holds, and its pod manager.
    async fn claimed_host(
        &self,
        caller: &Caller,
        id: &ClaimId,
    ) -> Result<(Host, PodManager), Error> {
        let (_, host) = self.claim_bound(caller, id).await?;
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        Ok((host, pm))
    }

    /// The host a bound claim holds, in a state that allows a tenant's firmware change, for a
    /// caller who may write.
    async fn claimed_host_to_change(
        &self,
        caller: &Caller,
        id: &ClaimId,
    ) -> Result<(Host, PodManager), Error> {
        caller.require_writable()?;
        let (host, pm) = self.claimed_host(caller, id).await?;
        action_allowed(&host, HostAction::TenantFirmware)?;
        Ok((host, pm))
    }
}
