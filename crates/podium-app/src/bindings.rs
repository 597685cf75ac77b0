//! The plugins a site gets when the admin names none.

pub(crate) const DEFAULT_DRIVER: &str = "redfish";
pub(crate) const DEFAULT_IPAM: &str = "ipam-static";
/// What renders a site's documents where the admin bound no renderer (the newest installed).
pub(crate) const DEFAULT_RENDERER: &str = "render-openstack";
