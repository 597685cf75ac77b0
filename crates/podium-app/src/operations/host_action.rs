//! Operations `power`, `boot` and `media`: an admin's (or, for power, a tenant's) action on a
//! host, carried out through its driver, then what the BMC reports read back.

use crate::app::Podium;
use crate::data::Host;
use crate::error::Error;
use podium_types::{MediaAction, OperationRequest};

impl Podium {
    pub(super) async fn host_action_execute(
        &self,
        host: &Host,
        action: &OperationRequest,
    ) -> Result<Option<serde_json::Value>, Error> {
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        let driver = self.host_driver(&pm, host).await?;
        match action {
            OperationRequest::Power(a) => {
                driver
                    .call()
                    .set_power(&host.system_id, *a)
                    .await
                    .map_err(Error::from)?;
                let now = podium_types::Timestamp::now();
                // The BMC obeys again: a power management error is over.
                self.datastore().host_recover_power(&host.id, now).await?;
                // Read back what the BMC reports now.
                if let Ok(state) = driver.call().get_power(&host.system_id).await {
                    self.datastore()
                        .host_set_power(&host.id, state, now)
                        .await?;
                    return Ok(Some(serde_json::json!({ "power_state": state })));
                }
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
        Ok(self.host_observe(&pm, host).await)
    }
}
