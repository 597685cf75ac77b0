//! Operation `register`: the host's BMC answers for its system and takes the credentials (its
//! power state is read); then the host is `inspecting`, with `inspect` queued.

use crate::app::Podium;
use crate::data::OperationRow;
use crate::error::Error;
use podium_types::{Observed, OperationResult};

impl Podium {
    /// Operation `register`: the host's BMC answers for its system and takes the credentials
    /// (its power state is read); then the host is `inspecting`, with `inspect` queued.
    pub(super) async fn register_execute(
        &self,
        op: &OperationRow,
    ) -> Result<Option<OperationResult>, Error> {
        let host = self.operation_host(op).await?;
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        let power = self
            .host_driver(&pm, &host)
            .await?
            .call()
            .get_power(&host.system_id)
            .await
            .map_err(Error::from)?;
        self.lifecycle().registered(&host, power).await?;
        Ok(Some(OperationResult::Observed(Observed {
            power_state: Some(power),
        })))
    }
}
