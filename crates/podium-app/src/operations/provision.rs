//! Provisioning a claimed host the DHCP-less way, as the `provision` operation: the claim's
//! documents and config drive rendered; a live ISO and the config drive (USB stick, else
//! floppy) inserted as virtual media, a one-time boot from CD, power on; a disk image
//! (`raw`, `qcow2`) written with the config drive by the deploy agent (`install.rs`) and booted
//! from disk. The host is then `provisioned`. Deprovisioning (`deprovision.rs`) undoes it before
//! the host is free again.

use crate::app::Podium;
use crate::data::{host_load, pod_manager_load};
use crate::error::Error;
use crate::rendering::{DRIVE_TTL_MAX, Hold};
use podium_runtime::{
    BootPersistence, BootSettings, BootTarget, CallError, MediaRequest, MediaType, PluginError,
    PowerAction, PowerState,
};
use podium_types::TenantScope;
use podium_types::{ConfigDriveRef, ErrorCode, OperationResult, Provisioned, ProvisionedBy};
use podium_types::{ImageFormat, Phase};

/// How long the config drive of a provisioning works: the whole boot, however slow.
const PROVISIONING_DRIVE_TTL: u64 = DRIVE_TTL_MAX;

impl Podium {
    /// Boots a host from virtual media: ejects whatever is in, inserts `image_url` in the CD and
    /// the config drive at `drive_path` (under [`Podium::download_base`]) in the USB slot, else
    /// the floppy, sets a one-time boot from CD and powers on. A host already on is force
    /// restarted: a power cycle, so that the BMC boots it from the new media. What it did to
    /// the power. Every step is idempotent.
    pub(crate) async fn boot_from_media(
        &self,
        pm: &crate::data::PodManager,
        host: &crate::data::Host,
        image_url: &str,
        drive_path: &str,
    ) -> Result<PowerAction, Error> {
        let drive_url = format!("{}{drive_path}", self.download_base()?);
        let unsupported = |e: &CallError| {
            matches!(
                e,
                CallError::Plugin {
                    error: PluginError::Unsupported(_),
                    ..
                }
            )
        };
        let driver = self.drivers().host(pm, host).await?;
        eject_all(&driver, host).await?;
        driver
            .call()
            .insert_media(
                &host.system_id,
                MediaRequest {
                    image_url: image_url.to_owned(),
                    media_type: MediaType::Cd,
                    write_protected: true,
                },
            )
            .await
            .map_err(Error::from)?;
        let mut inserted = false;
        let mut refusals = Vec::new();
        for media in [MediaType::Usb, MediaType::Floppy] {
            if !offers(host, media) {
                let kind = if media == MediaType::Usb {
                    "USB"
                } else {
                    "floppy"
                };
                refusals.push(format!("its inventory shows no {kind} slot"));
                continue;
            }
            match driver
                .call()
                .insert_media(
                    &host.system_id,
                    MediaRequest {
                        image_url: drive_url.clone(),
                        media_type: media,
                        write_protected: true,
                    },
                )
                .await
            {
                Ok(()) => {
                    inserted = true;
                    break;
                }
                Err(e) if unsupported(&e) => refusals.push(e.to_string()),
                Err(e) => return Err(Error::from(e)),
            }
        }
        if !inserted {
            return Err(Error::Conflict {
                code: ErrorCode::Unsupported,
                message: format!(
                    "the BMC of host `{}` has no second virtual media slot (USB or floppy) for the \
                     config drive beside the CD with the image: {}",
                    host.id,
                    refusals.join("; ")
                ),
            });
        }
        driver
            .call()
            .set_boot_override(
                &host.system_id,
                BootSettings {
                    target: BootTarget::Cd,
                    persistence: BootPersistence::Once,
                    mode: None,
                },
            )
            .await
            .map_err(Error::from)?;
        let action = match driver.call().get_power(&host.system_id).await {
            Ok(PowerState::On) => PowerAction::ForceRestart,
            _ => PowerAction::On,
        };
        driver
            .call()
            .set_power(&host.system_id, action)
            .await
            .map_err(Error::from)?;
        Ok(action)
    }

    /// Provisions a bound claim's host the DHCP-less way (operation `provision`): renders its
    /// documents and config drive, ejects whatever media is in, inserts the claim's image (CD)
    /// and the config drive (USB stick, else floppy), sets a one-time boot from CD and powers
    /// on. Every step is idempotent, so a retry (or a run after a crash) ends the same.
    pub(crate) async fn provision_execute(
        &self,
        op: &crate::data::OperationRow,
    ) -> Result<Option<OperationResult>, Error> {
        let (Some(claim_id), Some(host_id)) = (&op.claim_id, &op.host_id) else {
            return Err(Error::Conflict {
                code: ErrorCode::ClaimNotBound,
                message: "the operation names no claim and host".into(),
            });
        };
        let claim = self
            .datastore()
            .claim_get(TenantScope::Every, claim_id)
            .await?
            .filter(|c| c.state == podium_types::ClaimState::Bound && c.host_id == op.host_id)
            .ok_or_else(|| Error::Conflict {
                code: ErrorCode::ClaimNotBound,
                message: format!("claim `{claim_id}` is no longer bound to this host"),
            })?;
        let host = host_load(self.datastore(), host_id).await?;
        let image = claim.image.clone();
        let documents = self
            .render(&host, Some(&claim), Phase::Provisioning, Hold::Take)
            .await?;
        let drive = self
            .config_drive_store(documents, PROVISIONING_DRIVE_TTL)
            .await?;
        let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
        // Another claim's data still on the disks (its host was released while missing, with
        // no machine to clean): cleaned before this claim's system sees them.
        let cleaned = match self.datastore().host_disks_written_for(&host.id).await? {
            Some(other) if other != claim.id => Some(self.clean(&pm, &host).await?),
            _ => None,
        };
        let how = if matches!(image.format, Some(ImageFormat::Raw | ImageFormat::Qcow2)) {
            let bytes = self.config_drive_bytes(&drive.row)?;
            self.install(&pm, &host, &claim, &bytes).await?
        } else {
            // From here the disks may hold the claim's data, whatever becomes of the boot: a
            // live system has root on the machine. They are cleaned before the host is free
            // again (an install marks them before it writes).
            self.datastore()
                .host_disks_written(&host.id, &claim.id)
                .await?;
            // The ramdisk goes: whatever agent ran there no longer answers for the host.
            self.agent_forget(&host.id).await?;
            let action = self
                .boot_from_media(&pm, &host, &image.url, &drive.path)
                .await?;
            ProvisionedBy::Booted {
                image: image.url.clone(),
                power: action,
            }
        };
        // What the BMC reports now is what the claim and the host show.
        let observed = self.host_observe(&pm, &host).await;
        self.lifecycle().provisioned(&host.id).await?;
        tracing::info!(claim = %claim_id, host = %host.id, format = ?image.format, "provisioned");
        let (cleaned_first, not_cleaned_first) =
            cleaned.map(|c| c.into_parts()).unwrap_or_default();
        Ok(Some(OperationResult::Provision(Provisioned {
            how,
            cleaned_first,
            not_cleaned_first,
            config_drive: ConfigDriveRef {
                id: drive.row.id,
                sha256: drive.row.sha256,
                size: drive.row.size,
                expires_at: None,
            },
            power_state: observed.and_then(|o| o.power_state),
        })))
    }
}

/// Whether the host has a slot for `media`, as its inventory says; a host whose inventory lists
/// no slots may have any. (A call for a kind of slot the BMC lacks is a round trip that only
/// says so: BMC round trips are most of what a deploy's own steps take.)
fn offers(host: &crate::data::Host, media: MediaType) -> bool {
    host.media_slots.is_empty()
        || host
            .media_slots
            .iter()
            .any(|slot| slot.media_types.contains(&media))
}

/// Powers the host off hard and ejects every medium: what comes before pointing its next boot
/// elsewhere (the disk after an install, nothing after a release).
pub(super) async fn power_off_and_eject(
    driver: &crate::drivers::Driver<'_>,
    host: &crate::data::Host,
) -> Result<(), Error> {
    driver
        .call()
        .set_power(&host.system_id, PowerAction::ForceOff)
        .await
        .map_err(Error::from)?;
    eject_all(driver, host).await
}

/// Ejects whatever is in the host's CD, USB and floppy slots; a BMC without one kind of slot has
/// nothing to eject there.
async fn eject_all(
    driver: &crate::drivers::Driver<'_>,
    host: &crate::data::Host,
) -> Result<(), Error> {
    for media in [MediaType::Cd, MediaType::Usb, MediaType::Floppy] {
        if !offers(host, media) {
            continue;
        }
        match driver.call().eject_media(&host.system_id, media).await {
            Ok(())
            | Err(CallError::Plugin {
                error: PluginError::Unsupported(_),
                ..
            }) => {}
            Err(e) => return Err(Error::from(e)),
        }
    }
    Ok(())
}
