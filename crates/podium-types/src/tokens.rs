//! What a token lets its bearer be.

use crate::names::names;

names! {
    /// A token's role.
    pub enum Role ("a role") {
        /// Everything: sites, hosts, tenants, pools, plugins.
        Admin => "admin",
        /// Its tenant's claims, on the pod managers it was granted.
        Tenant => "tenant",
    }
}
