//! The app's data layer: the one module of the app that names `podium-store` (`tidy` holds
//! it to that). The store keeps rows and answers queries and single conditional updates; the
//! features work with what this module hands them:
//!
//! - the app's own types where a record's shape differs from its row: `Host` (its own BMC, its
//!   error and its maintenance are one value each, where the row has a column per part) and
//!   `PodManager` (its service is one `Bmc`, its limits the API's), each converted both ways
//!   (`host_find` and `pod_manager_find` read them);
//! - the store's records where they are the app's nouns as they are (a tenant, a grant, a
//!   claim, an operation, a pool, …), named here so that what the app takes from the store is
//!   one list;
//! - the store's errors in the app's words (`From<StoreError> for Error`).

mod claim;
pub(crate) mod host;
mod inventory;
mod pod_manager;

pub(crate) use claim::{claim_bound, claim_get};
pub(crate) use host::{Host, host_find, host_load, operation_host};
pub(crate) use inventory::{chassis_from_driver, host_from_system};
pub(crate) use pod_manager::{PodManager, pod_manager_find, pod_manager_load};

/// The store's records the app uses as they are.
pub(crate) use podium_store::{
    AgentRow, AuditRow, ChassisReport, ChassisRow, ClaimRow, Composed, ComposedNodeRow,
    ConfigDriveRow, EventRow, GrantRow, HostRow, IpAllocationRow, IpPoolRow, OperationRow,
    PluginRow, SessionRow, StatusChange, SubscriptionRow, TenantRow, TokenRow,
};
/// The store's questions and their answers.
pub(crate) use podium_store::{
    Backend, Bind, BindOutcome, Datastore, EventHorizon, Heartbeat, HostCriteria, LOOKUP_MACS_MAX,
    Missed, PodManagerConflict, Spread, Transition, new_id,
};

use crate::error::Error;
use podium_store::StoreError;

/// Whether a store error is a unique constraint that another request won.
pub(crate) fn is_conflict(e: &StoreError) -> bool {
    matches!(e, StoreError::Conflict(_))
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        match e {
            StoreError::Busy(e) => {
                tracing::warn!(error = %e, "the database is busy: a request is refused for now");
                Error::Unavailable(
                    "the database is busy: nothing was changed; try again shortly".to_owned(),
                )
            }
            e => Error::Internal(e.into()),
        }
    }
}
