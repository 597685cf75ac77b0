//! Operation `deprovision`: a released claim's host powered off, its media ejected, its boot
//! override cleared and its addresses released; then the host is free and the claim gone.

use crate::app::Podium;
use crate::error::Error;
use podium_store::HostRow;
use podium_types::{BootPersistence, BootSettings, BootTarget, HostState, PowerAction};
use podium_types::{ClaimId, TenantScope};

impl Podium {
    /// Carries out a `deprovision` operation: deprovisions the host, then frees it and the
    /// claim (and the tenant, if it is being deleted), and binds whoever waits.
    pub(super) async fn deprovision_execute(
        &self,
        op: &podium_store::OperationRow,
    ) -> Result<Option<serde_json::Value>, Error> {
        let (Some(id), Some(host_id)) = (&op.claim_id, &op.host_id) else {
            return Ok(None);
        };
        let Some(claim) = self.datastore().claim_get(TenantScope::Every, id).await? else {
            return Ok(None);
        };
        let host = self.host_load(host_id).await?;
        if host.state == HostState::Missing {
            // Nothing to power off or eject: only the addresses go.
            self.deprovision_addresses(id, &host).await?;
        } else {
            self.deprovision(id, &host).await?;
        }
        self.datastore()
            .claim_finish_release(id, crate::lifecycle::DEPROVISIONED.to)
            .await?;
        if let Err(e) = self.tenant_finish_deletion(&claim.tenant_id).await {
            tracing::error!(tenant = %claim.tenant_id, error = %e, "cannot finish deleting the tenant");
        }
        self.inner.background.run_now(crate::background::Job::Bind);
        Ok(None)
    }

    /// Releases the claim's addresses and the host's preprovisioning address (unless its pool
    /// keeps it).
    async fn deprovision_addresses(&self, claim_id: &ClaimId, host: &HostRow) -> Result<(), Error> {
        self.ip_release_owner(&crate::ipam::Owner::claim(claim_id), |_| false)
            .await?;
        self.ip_release_owner(&crate::ipam::Owner::host(&host.id), |pool| {
            pool.keeps_host_addresses()
        })
        .await?;
        Ok(())
    }

    /// Power off, eject media, clear the boot override, release the claim's addresses and the
    /// host's preprovisioning address (unless its pool keeps it).
    async fn deprovision(&self, claim_id: &ClaimId, host: &HostRow) -> Result<(), Error> {
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        self.host_driver(&pm, host)
            .await?
            .set_power(&host.system_id, PowerAction::ForceOff)
            .await
            .map_err(Error::Plugin)?;
        self.eject_all_media(&pm, host).await?;
        self.host_driver(&pm, host)
            .await?
            .set_boot_override(
                &host.system_id,
                BootSettings {
                    target: BootTarget::None,
                    persistence: BootPersistence::Disabled,
                    mode: None,
                },
            )
            .await
            .map_err(Error::Plugin)?;
        self.deprovision_addresses(claim_id, host).await?;
        self.host_observe(&pm, host).await;
        Ok(())
    }
}
