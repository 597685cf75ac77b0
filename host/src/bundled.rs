//! The plugins built with Podium (by `host/build.rs`) and included in the binary, so a fresh
//! `podium serve` has a driver and IPAM strategies with no manual step.

/// `(cargo package, component bytes)`.
pub static PLUGINS: &[(&str, &[u8])] = &[
    (
        "plugin-redfish",
        include_bytes!(env!("PODIUM_PLUGIN_REDFISH")),
    ),
    (
        "plugin-ipam-static",
        include_bytes!(env!("PODIUM_PLUGIN_IPAM_STATIC")),
    ),
    (
        "plugin-ipam-dhcpless",
        include_bytes!(env!("PODIUM_PLUGIN_IPAM_DHCPLESS")),
    ),
    (
        "plugin-render-openstack",
        include_bytes!(env!("PODIUM_PLUGIN_RENDER_OPENSTACK")),
    ),
];
