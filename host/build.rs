//! Builds the bundled plugins (`plugins/*`, on the SDK in `sdk/`) as components, so `podium serve` has them with no
//! manual step; `src/bundled.rs` includes the results.

const BUNDLED: &[(&str, &str)] = &[
    ("plugin-redfish", "PODIUM_PLUGIN_REDFISH"),
    ("plugin-ipam-static", "PODIUM_PLUGIN_IPAM_STATIC"),
    ("plugin-ipam-dhcpless", "PODIUM_PLUGIN_IPAM_DHCPLESS"),
    ("plugin-render-openstack", "PODIUM_PLUGIN_RENDER_OPENSTACK"),
];

fn main() {
    // The plugins are built on the SDK (`sdk/`): an edit there rebuilds them too.
    wasm_build::build_for_crate(&["plugins", "sdk", "wit"], BUNDLED);
}
