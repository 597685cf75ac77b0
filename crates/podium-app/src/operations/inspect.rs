//! Operation `inspect`: the DHCP-less preprovisioning prepared where the site has such pools
//! (and the site's ramdisk booted with it, where it has one), then the inventory read out of
//! band, and the pod manager's firmware profile given (`bios.rs`); the host is `available`.

use crate::app::Podium;
use crate::data::{Host, OperationRow, operation_host, pod_manager_load};
use crate::error::Error;
use podium_types::{
    ConfigDriveRef, Inspected, InventoryRead, OperationResult, Preprovisioning,
    PreprovisioningAddress,
};

/// How long the preprovisioning config drive an inspection prepares works.
const PREPROVISIONING_DRIVE_TTL: u64 = crate::rendering::DRIVE_TTL_MAX;

impl Podium {
    /// Operation `inspect`: where the pod manager has DHCP-less pools, the host's
    /// preprovisioning address is held and its preprovisioning config drive built first, and
    /// where it has a preprovisioning image too, the host boots that ramdisk from the CD with
    /// the drive beside it (as Metal3 boots its ramdisk to inspect); then the driver reads the
    /// system's inventory out of band and the host is `available`.
    pub(super) async fn inspect_execute(
        &self,
        op: &OperationRow,
    ) -> Result<Option<OperationResult>, Error> {
        let host = operation_host(self.datastore(), op).await?;
        let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
        let mut preprovisioning = None;
        // Boxed: the preprovisioning (IPAM and rendering calls, only where the site has DHCP-less
        // pools) would otherwise make every inspection's future as large as its own.
        if let Some((mut prepared, drive_path)) =
            Box::pin(self.preprovisioning_prepare(&pm, &host)).await?
        {
            if let Some(ramdisk) = &pm.preprovisioning_image {
                // Its agent is expected from now on, at the first address the ramdisk is given.
                if let Some(first) = prepared.addresses.first() {
                    self.agent_expect(&host.id, &first.address).await?;
                }
                let action = self
                    .boot_from_media(&pm, &host, ramdisk, &drive_path)
                    .await?;
                tracing::info!(host = %host.id, ?action, "booting the preprovisioning image");
                prepared.booted = Some(ramdisk.clone());
            }
            preprovisioning = Some(prepared);
        }
        let driver = self.drivers().host(&pm, &host).await?;
        let system = driver
            .call()
            .inspect(&host.system_id)
            .await
            .map_err(Error::from)?;
        // The site's firmware profile, before the host is available to anyone (a chassis has
        // no BIOS of its own).
        let profile = if pm.firmware_profile.is_empty() || !host.kind.is_machine() {
            None
        } else {
            Some(crate::bios::profile_apply(&driver, &host, &pm.firmware_profile).await?)
        };
        // The firmware versions the Redfish face shows; a BMC that cannot say shows none, and
        // the inspection goes on.
        if host.kind.is_machine()
            && let Err(e) = crate::firmware::read(self.datastore(), &driver, &host).await
        {
            tracing::info!(host = %host.id, error = %e, "the firmware versions were not read");
        }
        let inventory = crate::data::host_from_system(&system);
        if self.lifecycle().inspected(&host.id, &inventory).await? {
            self.inner.background.run_now(crate::tasks::Job::Bind);
        }
        tracing::info!(host = %host.id, nics = system.nics.len(), "inspected");
        Ok(Some(OperationResult::Inspect(Inspected {
            inventory: InventoryRead {
                cpu_count: system.cpu_count,
                memory_mib: system.memory_mib,
                nics: system.nics.iter().map(|n| n.mac.clone()).collect(),
                media_slots: system.media_slots.iter().map(|s| s.id.clone()).collect(),
                power_state: system.power,
            },
            preprovisioning,
            firmware_profile: profile,
        })))
    }

    /// Where the pod manager has DHCP-less pools: holds the host's preprovisioning address in
    /// each (the same one on every inspection) and builds its preprovisioning config drive.
    /// What was prepared and the drive's download path, or `None` where there is nothing to
    /// prepare.
    pub(super) async fn preprovisioning_prepare(
        &self,
        pm: &crate::data::PodManager,
        host: &Host,
    ) -> Result<Option<(Preprovisioning, String)>, Error> {
        // A chassis is not a machine that boots: it has no boot NIC to address.
        if !host.kind.is_machine() {
            return Ok(None);
        }
        let mut pools = Vec::new();
        for pool in self.ip_pools_serving(&pm.uuid).await? {
            if pool.row.pod_manager.as_ref() == Some(&pm.uuid)
                && self.ip_pool_preprovisions(&pool, host).await?
            {
                pools.push(pool);
            }
        }
        if pools.is_empty() {
            return Ok(None);
        }
        let documents = self
            .render(
                host,
                None,
                podium_types::Phase::Preprovisioning,
                crate::rendering::Hold::Take,
            )
            .await?;
        let drive = self
            .config_drive_store(documents, PREPROVISIONING_DRIVE_TTL)
            .await?;
        let owner = crate::ipam::Owner::host(&host.id);
        let mut addresses = Vec::new();
        for pool in &pools {
            if let Some(held) = self.ip_held(pool, &owner, host, false).await? {
                addresses.push(PreprovisioningAddress {
                    pool: pool.row.name.clone(),
                    address: held.row.address,
                    prefix: held.prefix,
                    gateway: held.gateway,
                });
            }
        }
        let prepared = Preprovisioning {
            addresses,
            config_drive: ConfigDriveRef {
                id: drive.row.id,
                sha256: drive.row.sha256,
                size: drive.row.size,
                expires_at: Some(drive.row.expires_at),
            },
            booted: None,
        };
        Ok(Some((prepared, drive.path)))
    }
}
