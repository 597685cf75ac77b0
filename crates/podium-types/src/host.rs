//! Hosts: the machines behind a pod manager, and the states they go through
//! (`docs/host-lifecycle.md`).

use crate::names::names;

names! {
    /// Where a host is in its life. Maintenance is not a state: it lies over one.
    pub enum HostState ("a host state") {
        Registering => "registering",
        Inspecting => "inspecting",
        Available => "available",
        Provisioning => "provisioning",
        Provisioned => "provisioned",
        Deprovisioning => "deprovisioning",
        Error => "error",
        Missing => "missing",
    }
}

/// A new host's state: it is registered first.
impl Default for HostState {
    fn default() -> HostState {
        HostState::Registering
    }
}
