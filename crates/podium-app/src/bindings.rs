//! A pod manager as the application reads it (the store's record, its plugin bindings and
//! network config owner decoded), and the plugins a site gets when the admin names none.

pub(crate) use podium_store::PodManagerRow as PodManager;
pub(crate) use podium_types::PluginBinding;

pub(crate) const DEFAULT_DRIVER: &str = "redfish";
pub(crate) const DEFAULT_IPAM: &str = "ipam-static";
