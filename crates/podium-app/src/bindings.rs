//! The plugins a site gets when the admin names none.

pub(crate) use podium_types::PluginBinding;

pub(crate) const DEFAULT_DRIVER: &str = "redfish";
pub(crate) const DEFAULT_IPAM: &str = "ipam-static";
