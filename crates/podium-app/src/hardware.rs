//! A host's hardware, whoever asks: one path for its BIOS, secure boot, firmware and full
//! inventory. Three faces name a host: an admin by its id (`/v1/hosts/{id}/bios`), a tenant by
//! the claim that holds it (`/v1/claims/{id}/bios`) and a Redfish client by the system's id (an
//! admin's, or a tenant's through its claim). Each face resolves its caller once to a
//! [`Target`]: the host, its pod manager and who asks (`Asker`); then one function per action
//! serves all three, checking the request on its own first and building the host's driver only
//! to ask its BMC (`bios.rs` and `firmware.rs` take it). What differs by who asks is decided
//! there, once: a tenant sees the BIOS attributes its site does not let tenants change as
//! read-only, and changes only what the site's `tenant_firmware` allows (`bios.rs`,
//! `firmware.rs`).

use podium_types::views::OperationView;
use podium_types::{
    Bios, BiosChange, ClaimId, ClaimState, ErrorCode, Firmware, FirmwareUpdate, HardwareInventory,
    HostId, OperationRequest, SecureBoot, SecureBootChange, TenantScope,
};

use crate::app::Podium;
use crate::auth::Caller;
use crate::bios::{self, Asker, unsupported};
use crate::data::{Host, PodManager, claim_bound, host_find, host_load, pod_manager_load};
use crate::drivers::Driver;
use crate::error::Error;
use crate::firmware;
use crate::lifecycle::{HostAction, action_allowed};

/// Whose hardware: the host as one of the three faces names it.
#[derive(Clone, Copy, Debug)]
pub enum HardwareOf<'a> {
    /// An admin's, by the host's id.
    Host(&'a HostId),
    /// A tenant's, by the claim that holds the host.
    Claim(&'a ClaimId),
    /// A Redfish client's, by the system's id: an admin's, or a tenant's through its claim.
    System(&'a HostId),
}

/// A host resolved for one caller: the host, its pod manager, and who asks.
pub(crate) struct Target {
    pub(crate) host: Host,
    pub(crate) pm: PodManager,
    pub(crate) asker: Asker,
}

impl Target {
    /// The driver that reaches the host's BMC: built where the BMC is to be asked, after the
    /// checks of the request alone.
    pub(crate) async fn driver<'a>(&self, podium: &'a Podium) -> Result<Driver<'a>, Error> {
        podium.drivers().host(&self.pm, &self.host).await
    }
}

impl Podium {
    /// The host `of` names, for `caller` to read: a 404 where it is not the caller's to see (a
    /// tenant naming a host by its id is a 403, as every admin route is to it).
    pub(crate) async fn hardware_to_read(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
    ) -> Result<Target, Error> {
        let (host, asker) = match of {
            HardwareOf::Host(id) => (self.host_get(caller, id).await?, Asker::Admin),
            HardwareOf::Claim(id) => {
                let (_, host) = claim_bound(self.datastore(), caller.scope(), id).await?;
                (host, Asker::Tenant(id.clone()))
            }
            HardwareOf::System(id) => {
                let (host, claim) = self.redfish_host(caller, id).await?;
                (host, claim.map_or(Asker::Admin, Asker::Tenant))
            }
        };
        self.target(host, asker).await
    }

    /// The host `of` names, for `caller` to change: a token that may write, and a host in a
    /// state that takes a firmware change (an admin's, or a tenant's on its claimed host). The
    /// checks come in the order each face always made them: who may write, the host, its state,
    /// then its pod manager.
    pub(crate) async fn hardware_to_change(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
    ) -> Result<Target, Error> {
        let (host, asker) = match of {
            HardwareOf::Host(id) => {
                caller.require_admin()?;
                (host_load(self.datastore(), id).await?, Asker::Admin)
            }
            HardwareOf::Claim(_) => {
                caller.require_writable()?;
                // As a read (the claim's host, then its pod manager), then the state.
                let t = self.hardware_to_read(caller, of).await?;
                action_allowed(&t.host, HostAction::TenantFirmware)?;
                return Ok(t);
            }
            HardwareOf::System(id) => {
                caller.require_writable()?;
                let (host, claim) = self.redfish_host(caller, id).await?;
                (host, claim.map_or(Asker::Admin, Asker::Tenant))
            }
        };
        let action = match asker {
            Asker::Admin => HostAction::Firmware,
            Asker::Tenant(_) => HostAction::TenantFirmware,
        };
        action_allowed(&host, action)?;
        self.target(host, asker).await
    }

    /// The host with its pod manager, for `asker`.
    async fn target(&self, host: Host, asker: Asker) -> Result<Target, Error> {
        let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
        Ok(Target { host, pm, asker })
    }

    /// Queues a firmware change in the host's queue; a tenant's is run at its claim's request
    /// (listed with the claim's operations, and a task of its Redfish service).
    pub(crate) async fn firmware_queue(
        &self,
        host: &Host,
        request: OperationRequest,
        asker: &Asker,
    ) -> Result<OperationView, Error> {
        let claim = match asker {
            Asker::Admin => None,
            Asker::Tenant(claim) => Some(claim),
        };
        self.operation_start(host, request, claim)
            .await
            .map(crate::views::operation)
    }

    /// The host's BIOS as its BMC reports it now: its attributes, registry and what is staged;
    /// to a tenant, every attribute its site does not let tenants change is read-only.
    pub async fn hardware_bios(&self, caller: &Caller, of: HardwareOf<'_>) -> Result<Bios, Error> {
        let t = self.hardware_to_read(caller, of).await?;
        let bios = bios::read(&t.driver(self).await?, &t.host).await?;
        Ok(match t.asker {
            Asker::Tenant(_) => bios.restricted_to(&t.pm.tenant_firmware.bios_attributes),
            Asker::Admin => bios,
        })
    }

    /// Checks a change of BIOS attributes against the BIOS as read now (a 422 naming the
    /// attribute; a tenant's within what its site allows), then queues it.
    pub async fn hardware_bios_change(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
        change: BiosChange,
    ) -> Result<OperationView, Error> {
        let t = self.hardware_to_change(caller, of).await?;
        bios::change_allowed(&change, &t.pm.tenant_firmware, &t.asker)?;
        let request = bios::change_request(&t.driver(self).await?, &t.host, change).await?;
        self.firmware_queue(&t.host, request, &t.asker).await
    }

    /// Queues a reset of the BIOS attributes to their defaults: the admin's only (a reset sets
    /// every attribute, so a tenant is refused).
    pub async fn hardware_bios_reset(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
    ) -> Result<OperationView, Error> {
        let t = self.hardware_to_change(caller, of).await?;
        bios::reset_allowed(&t.asker)?;
        let request = bios::reset_request(&t.driver(self).await?, &t.host).await?;
        self.firmware_queue(&t.host, request, &t.asker).await
    }

    /// The host's secure boot as its BMC reports it now.
    pub async fn hardware_secure_boot(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
    ) -> Result<SecureBoot, Error> {
        let t = self.hardware_to_read(caller, of).await?;
        bios::secure_boot_read(&t.driver(self).await?, &t.host).await
    }

    /// Queues turning secure boot on or off, where the BMC has it for the host (a tenant's where
    /// its site lets tenants).
    pub async fn hardware_secure_boot_set(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
        change: SecureBootChange,
    ) -> Result<OperationView, Error> {
        let t = self.hardware_to_change(caller, of).await?;
        bios::secure_boot_allowed(&t.pm.tenant_firmware, &t.asker)?;
        let request = bios::secure_boot_request(&t.driver(self).await?, &t.host, change).await?;
        self.firmware_queue(&t.host, request, &t.asker).await
    }

    /// The host's firmware components as its BMC reports them now.
    pub async fn hardware_firmware(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
    ) -> Result<Firmware, Error> {
        let t = self.hardware_to_read(caller, of).await?;
        let driver = t.driver(self).await?;
        let components = firmware::read(self.datastore(), &driver, &t.host).await?;
        Ok(Firmware { components })
    }

    /// Checks an update against the components as read now (a 422 naming the field), then
    /// queues it (a tenant's where its site lets tenants update firmware).
    pub async fn hardware_firmware_update(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
        update: FirmwareUpdate,
    ) -> Result<OperationView, Error> {
        let t = self.hardware_to_change(caller, of).await?;
        let update = firmware::update_checked(&t.pm, &t.asker, update)?;
        let driver = t.driver(self).await?;
        let request = firmware::update_request(self.datastore(), &driver, &t.host, update).await?;
        self.firmware_queue(&t.host, request, &t.asker).await
    }

    /// The host's full inventory as its BMC reports it now; a 409 `hardware_unsupported` where
    /// the driver reads none of it. (The Redfish face reads it through `redfish_hardware`, which
    /// serves the reads of the next seconds from one.)
    pub async fn hardware_inventory(
        &self,
        caller: &Caller,
        of: HardwareOf<'_>,
    ) -> Result<HardwareInventory, Error> {
        let t = self.hardware_to_read(caller, of).await?;
        self.hardware_read(&t.pm, &t.host).await
    }

    pub(crate) async fn hardware_read(
        &self,
        pm: &PodManager,
        host: &Host,
    ) -> Result<HardwareInventory, Error> {
        let driver = self.drivers().host(pm, host).await?;
        driver
            .call()
            .read_hardware(&host.system_id)
            .await
            .map_err(|e| unsupported(host, ErrorCode::HardwareUnsupported, "full inventory", e))
    }

    /// A host the caller may drive, and the claim it holds it through (a tenant's). Any other
    /// host is not found, whether it exists or not.
    pub(crate) async fn redfish_host(
        &self,
        caller: &Caller,
        id: &HostId,
    ) -> Result<(Host, Option<ClaimId>), Error> {
        let not_found = || Error::not_found("system", id);
        let host = host_find(self.datastore(), id)
            .await?
            .filter(is_system)
            .ok_or_else(not_found)?;
        match caller.scope() {
            TenantScope::Every => Ok((host, None)),
            scope @ TenantScope::Tenant(_) => {
                let claim_id = host.claim_id.clone().ok_or_else(not_found)?;
                let claim = self
                    .datastore()
                    .claim_get(scope, &claim_id)
                    .await?
                    .ok_or_else(not_found)?;
                if !holds(claim.state) || claim.host_id.as_ref() != Some(id) {
                    return Err(not_found());
                }
                Ok((host, Some(claim_id)))
            }
        }
    }
}

/// Whether a host is a computer system (a chassis a driver reports is not one of the service's
/// systems).
pub(crate) fn is_system(host: &Host) -> bool {
    host.kind.is_machine()
}

/// Whether a claim in `state` holds its host for its tenant (a claim being released no
/// longer does: its system disappears at once).
pub(crate) fn holds(state: ClaimState) -> bool {
    state == ClaimState::Bound
}
