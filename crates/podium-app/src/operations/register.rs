//! Operation `register`: the host's BMC answers for its system and takes the credentials (its
//! power state is read); then the host is `inspecting`, with `inspect` queued.

use crate::app::Podium;
use crate::data::{OperationRow, operation_host, pod_manager_load};
use crate::error::Error;
use podium_types::{Observed, OperationResult};

impl Podium {
    /// Operation `register`: the host's BMC answers for its system and takes the credentials
    /// (its power state is read); then the host is `inspecting`, with `inspect` queued.
    pub(super) async fn register_execute(
        &self,
        op: &OperationRow,
    ) -> Result<Option<OperationResult>, Error> {
        let host = operation_host(self.datastore(), op).await?;
        let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
        let power = self
            .drivers()
            .host(&pm, &host)
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
