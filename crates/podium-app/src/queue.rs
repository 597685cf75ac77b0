//! The durable operations as records: queueing one (`operation_enqueue`), waking the leasing
//! where something other than a new operation made one due, and showing them
//! (`GET /v1/operations`). Every feature that acts through a BMC queues here; what leases and
//! runs them is `operations/`, above the features it calls, which hands the work an operation
//! as it holds it (`Held`: what the work records of it is fenced by the lease).

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{Datastore, OperationRow};
use crate::error::Error;
use podium_types::views::{List, OperationView};
use podium_types::{OperationFilter, OperationId, OperationProgress, Page};

/// An operation as the work that runs it holds it: under this process's lease, for this try.
/// What the work records of it (how far it is) is fenced by the lease, so a try that lost it
/// (taken over, or ended) records nothing and learns so.
pub(crate) struct Held<'a> {
    store: &'a Datastore,
    owner: &'a str,
    pub(crate) op: &'a OperationRow,
}

impl<'a> Held<'a> {
    /// `op`, leased by `owner` (this process's worker).
    pub(crate) fn new(store: &'a Datastore, owner: &'a str, op: &'a OperationRow) -> Held<'a> {
        Held { store, owner, op }
    }

    /// Records how far the operation is (`None`: nothing yet); with `first`, only where no try
    /// recorded any. Whether it was recorded (this try still holds the lease).
    pub(crate) async fn progress(
        &self,
        progress: Option<&OperationProgress>,
        first: bool,
    ) -> Result<bool, Error> {
        Ok(self
            .store
            .operation_progress(&self.op.id, self.owner, self.op.attempts, progress, first)
            .await?)
    }
}

impl Podium {
    /// `GET /v1/operations/{id}`.
    pub async fn operation_view(
        &self,
        caller: &Caller,
        id: &OperationId,
    ) -> Result<OperationView, Error> {
        caller.require_admin_read()?;
        self.datastore()
            .operation_get(id)
            .await?
            .map(crate::views::operation)
            .ok_or_else(|| Error::not_found("operation", id))
    }

    /// `GET /v1/operations`: newest first, filtered.
    pub async fn operation_list(
        &self,
        caller: &Caller,
        filter: OperationFilter,
        page: Page,
    ) -> Result<List<OperationView>, Error> {
        caller.require_admin_read()?;
        let paged = self.datastore().operation_list(&filter, &page).await?;
        Ok(List::of(paged, crate::views::operation))
    }

    /// Stores an operation; the datastore wakes the leasing (as it does for every operation
    /// stored, whichever feature queued it).
    pub(crate) async fn operation_enqueue(&self, op: &OperationRow) -> Result<(), Error> {
        self.datastore().operation_create(op).await?;
        Ok(())
    }

    /// Wakes the leasing where something other than a new operation made one due: a slot of
    /// this process freed, a host's maintenance ended.
    pub(crate) fn operations_wake(&self) {
        self.inner.background.run_now(crate::tasks::Job::Leasing);
    }
}
