//! What the API answers: one view per resource, shared by the server (which serializes them and
//! documents them in `/openapi.json`) and the client (which reads them). A view is built by the
//! application from what it decided; no view has a field for a secret (a BMC password, a
//! token's hash), and the only answer carrying a token is [`TokenCreatedView`], once.
//!
//! Each view serializes to exactly the JSON the API has always answered: a renamed field here is
//! an API change.

mod audit;
mod chassis;
mod claims;
mod composition;
mod events;
mod hosts;
mod ipam;
mod operations;
mod plugins;
mod pod_managers;
mod redfish;
mod rendering;
mod tasks;
mod tenants;

pub use audit::AuditEventView;
pub use chassis::{ChassisRef, ChassisView, GrantedChassisView};
pub use claims::{AddressView, ClaimView, ClaimedHostView, ClaimedNicView};
pub use composition::{
    BlockLimitView, ComposedNodeView, CompositionView, ResourceBlockView, ResourceZoneView,
};
pub use events::{
    ClaimEventView, EventView, HostEventView, OperationEventView, ReadyData, ResetData,
};
pub use hosts::{
    AgentState, AgentView, BmcView, DisksView, HostErrorView, HostView, MaintenanceView,
};
pub use ipam::{IpClaimView, IpPoolView, UsageView};
pub use operations::OperationView;
pub use plugins::{PluginList, PluginView};
pub use pod_managers::{
    GrantedPodManagerView, PodManagerView, StatusChangeView, TenantGrantView, TlsView,
};
pub use redfish::{
    RedfishAccountView, RedfishRole, SessionView, SubscriptionCreate, SubscriptionView, SystemView,
};
pub use rendering::{ConfigDriveView, PreviewView, RenderedView, UnallocatedView};
pub use tasks::{TaskList, TaskStatus};
pub use tenants::{GrantView, MeView, TenantDeletionView, TenantView, TokenCreatedView, TokenView};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A page of a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct List<T> {
    pub items: Vec<T>,
    /// The cursor of the next page; `null` on the last.
    pub next: Option<String>,
}

impl<T> List<T> {
    /// The page `paged`, each item made a view by `view`.
    pub fn of<R>(paged: crate::Paged<R>, view: impl FnMut(R) -> T) -> List<T> {
        List {
            items: paged.items.into_iter().map(view).collect(),
            next: paged.next,
        }
    }

    /// A whole list, on one page.
    pub fn all(items: Vec<T>) -> List<T> {
        List { items, next: None }
    }
}
