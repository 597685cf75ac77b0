//! Operation `deprovision`: a released claim's host cleaned where its disks may hold the
//! tenant's data (its provisioning began, or its tenant booted media: `install.rs`), powered
//! off, its media ejected, its boot override cleared (where the BMC lets it) and its addresses
//! released; then the host is free and the claim gone.

use crate::app::Podium;
use crate::data::{Host, host_load, pod_manager_load};
use crate::error::Error;
use podium_types::{BootPersistence, BootSettings, BootTarget, HostState};
use podium_types::{ClaimId, TenantScope};
use podium_types::{Deprovisioned, OperationResult};

impl Podium {
    /// Carries out a `deprovision` operation: deprovisions the host, then frees it and the
    /// claim (and the tenant, if it is being deleted), and binds whoever waits.
    pub(super) async fn deprovision_execute(
        &self,
        op: &crate::data::OperationRow,
    ) -> Result<Option<OperationResult>, Error> {
        let (Some(id), Some(host_id)) = (&op.claim_id, &op.host_id) else {
            return Ok(None);
        };
        let Some(claim) = self.datastore().claim_get(TenantScope::Every, id).await? else {
            return Ok(None);
        };
        let host = host_load(self.datastore(), host_id).await?;
        let mut result = Deprovisioned::default();
        if host.state == HostState::Missing {
            // Nothing to clean, power off or eject: only the addresses go.
            self.agent_forget(&host.id).await?;
            self.deprovision_addresses(id, &host).await?;
        } else {
            let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
            // A disk image was (or may have been) written: the disks are cleaned before
            // anything else, by the deploy agent; a cleaning that fails leaves the host in
            // `error`.
            let written = self.datastore().host_disks_written_for(&host.id).await?;
            if written.is_some() {
                (result.cleaned, result.not_cleaned) = self.clean(&pm, &host).await?.into_parts();
            }
            self.agent_forget(&host.id).await?;
            if let Some(kept) = self.deprovision(&pm, id, &host).await? {
                result.boot_override_kept = Some(kept);
            }
        }
        let result =
            (result != Deprovisioned::default()).then_some(OperationResult::Deprovision(result));
        self.lifecycle().released(id, &claim.tenant_id).await?;
        self.inner.background.run_now(crate::tasks::Job::Bind);
        Ok(result)
    }

    /// Releases the claim's addresses and the host's preprovisioning address (unless its pool
    /// keeps it).
    async fn deprovision_addresses(&self, claim_id: &ClaimId, host: &Host) -> Result<(), Error> {
        self.ip_release_owner(&crate::ipam::Owner::claim(claim_id), |_| false)
            .await?;
        self.ip_release_owner(&crate::ipam::Owner::host(&host.id), |pool| {
            pool.keeps_host_addresses()
        })
        .await?;
        Ok(())
    }

    /// Power off, eject media, clear the boot override, release the claim's addresses and the
    /// host's preprovisioning address (unless its pool keeps it). A BMC that refuses to clear
    /// the override (sushy-tools' libvirt driver has no device `None`; some BMCs answer the
    /// same) does not hold the release: with the media out and the host off, the override
    /// points at an empty slot and the next boot falls through it. Why the override was kept,
    /// where it was.
    async fn deprovision(
        &self,
        pm: &crate::data::PodManager,
        claim_id: &ClaimId,
        host: &Host,
    ) -> Result<Option<String>, Error> {
        let driver = self.drivers().host(pm, host).await?;
        super::provision::power_off_and_eject(&driver, host).await?;
        let kept = match driver
            .call()
            .set_boot_override(
                &host.system_id,
                BootSettings {
                    target: BootTarget::None,
                    persistence: BootPersistence::Disabled,
                    mode: None,
                },
            )
            .await
        {
            Ok(()) => None,
            Err(e) => {
                tracing::warn!(host = %host.id, error = %e,
                    "the BMC kept the boot override; the media are out and the host is off");
                Some(e.to_string())
            }
        };
        self.deprovision_addresses(claim_id, host).await?;
        self.host_observe(pm, host).await;
        Ok(kept)
    }
}
