//! The documents Podium writes for a booting host (metaData, networkData, userData), and which
//! boot they are for.

use crate::names::names;

names! {
    /// Which boot a document is for.
    pub enum Phase ("a phase") {
        /// The ramdisk, before the host is provisioned.
        Preprovisioning => "preprovisioning",
        /// The claimed host's own operating system.
        Provisioning => "provisioning",
    }
}
