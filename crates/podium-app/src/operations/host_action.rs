//! Operations `power`, `boot` and `media`: an admin's (or, for power, a tenant's) action on a
//! host, carried out through its driver, then what the BMC reports read back. A power `off`
//! asks the OS to shut down first, and forces the power off only after the site's timeout.

use std::time::Duration;

use crate::app::Podium;
use crate::data::{Host, pod_manager_load};
use crate::drivers::Driver;
use crate::error::Error;
use podium_runtime::{CallError, PluginError};
use podium_types::{
    ClaimId, MediaAction, OperationRequest, OperationResult, PowerAction, PowerSent, PowerSettings,
    PowerState,
};

/// How often a power off reads the power state while the OS shuts down.
const SHUTDOWN_POLL: Duration = Duration::from_secs(2);

impl Podium {
    pub(super) async fn host_action_execute(
        &self,
        host: &Host,
        action: &OperationRequest,
        claim: Option<&ClaimId>,
    ) -> Result<Option<OperationResult>, Error> {
        let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
        let driver = self.drivers().host(&pm, host).await?;
        // A claim's media or boot override (its tenant's Redfish service) may boot anything on
        // the machine: from here its disks may hold the claim's data, and are cleaned before
        // the host is free again. Marked as the operation runs, so a release queued after it
        // finds the mark, and only while the claim still holds the host.
        if let Some(claim) = claim
            && matches!(
                action,
                OperationRequest::Media(MediaAction::Insert(_)) | OperationRequest::Boot(_)
            )
        {
            self.datastore().host_disks_written(&host.id, claim).await?;
        }
        match action {
            OperationRequest::Power(a) => {
                let sent = power_set(&driver, host, *a, pm.power).await?;
                let now = podium_types::Timestamp::now();
                // The BMC obeys again: a power management error is over.
                self.lifecycle().power_recovered(&host.id, now).await?;
                // Read back what the BMC reports now.
                let mut result = PowerSent {
                    sent,
                    power_state: None,
                };
                if let Ok(state) = driver.call().get_power(&host.system_id).await {
                    self.datastore()
                        .host_set_power(&host.id, state, now)
                        .await?;
                    result.power_state = Some(state);
                }
                return Ok(Some(OperationResult::Power(result)));
            }
            OperationRequest::Boot(b) => driver
                .call()
                .set_boot_override(&host.system_id, *b)
                .await
                .map_err(Error::from)?,
            OperationRequest::Media(MediaAction::Insert(m)) => driver
                .call()
                .insert_media(&host.system_id, m.clone())
                .await
                .map_err(Error::from)?,
            OperationRequest::Media(MediaAction::Eject { media_type }) => driver
                .call()
                .eject_media(&host.system_id, *media_type)
                .await
                .map_err(Error::from)?,
            other => {
                return Err(Error::Internal(anyhow::anyhow!(
                    "{} is not a host action",
                    other.kind()
                )));
            }
        }
        Ok(self
            .host_observe(&pm, host)
            .await
            .map(OperationResult::Observed))
    }
}

/// Sends the host's BMC `action`, and answers what it sent. `off` is what a user expects of a
/// power off: the OS is asked to shut down (`graceful_shutdown`), and the power forced off
/// (`force_off`) only where it is still on after the site's `shutdown_timeout` (0: forced at
/// once), or where the BMC refuses to ask the OS.
async fn power_set(
    driver: &Driver<'_>,
    host: &Host,
    action: PowerAction,
    power: PowerSettings,
) -> Result<Vec<PowerAction>, Error> {
    let system = &host.system_id;
    if action != PowerAction::Off {
        driver
            .call()
            .set_power(system, action)
            .await
            .map_err(Error::from)?;
        return Ok(vec![action]);
    }
    let force = async |mut sent: Vec<PowerAction>| {
        driver
            .call()
            .set_power(system, PowerAction::ForceOff)
            .await
            .map_err(Error::from)?;
        sent.push(PowerAction::ForceOff);
        Ok(sent)
    };
    if power.shutdown_timeout == 0 {
        return force(Vec::new()).await;
    }
    match driver
        .call()
        .set_power(system, PowerAction::GracefulShutdown)
        .await
    {
        Ok(()) => {}
        // A BMC that cannot ask the OS (or refuses to for a host already off, as some do) is
        // forced; one that did not answer is asked again when the operation is retried.
        Err(e) if refused(&e) => {
            tracing::info!(host = %host.id, error = %e, "the BMC did not take GracefulShutdown; forcing the power off");
            return force(Vec::new()).await;
        }
        Err(e) => return Err(Error::from(e)),
    }
    let sent = vec![PowerAction::GracefulShutdown];
    let deadline =
        tokio::time::Instant::now() + Duration::from_secs(u64::from(power.shutdown_timeout));
    loop {
        // A failed read is read again at the next poll: the BMC may be busy with the shutdown.
        if let Ok(PowerState::Off) = driver.call().get_power(system).await {
            return Ok(sent);
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::info!(host = %host.id, timeout = power.shutdown_timeout,
                "the OS did not shut down in time; forcing the power off");
            return force(sent).await;
        }
        tokio::time::sleep(SHUTDOWN_POLL).await;
    }
}

/// Whether the BMC answered that it will not take the action (it cannot, or not now), as
/// opposed to not answering.
fn refused(e: &CallError) -> bool {
    matches!(
        e,
        CallError::Plugin {
            error: PluginError::Unsupported(_)
                | PluginError::InvalidInput(_)
                | PluginError::Conflict(_)
                | PluginError::NotFound(_)
                | PluginError::Remote {
                    status: 400..=499,
                    ..
                },
            ..
        }
    )
}
