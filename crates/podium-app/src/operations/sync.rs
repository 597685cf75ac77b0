//! Operation `sync`: every system of a pod manager discovered and its hosts made to match.

use crate::app::Podium;
use crate::data::OperationRow;
use crate::error::Error;

impl Podium {
    pub(super) async fn sync_execute(
        &self,
        op: &OperationRow,
    ) -> Result<Option<podium_types::OperationResult>, Error> {
        let summary = self
            .pod_manager_sync_now(&op.pod_manager, crate::pod_managers::OwnBmcs::Read)
            .await?;
        Ok(Some(podium_types::OperationResult::Sync(summary)))
    }
}
