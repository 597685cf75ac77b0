//! Builds the bundled plugins (`plugins/*`) as components, so `podium serve` has them with no
//! manual step; `src/bundled.rs` includes the results.

use std::path::Path;

const BUNDLED: &[(&str, &str)] = &[
    ("plugin-redfish", "PODIUM_PLUGIN_REDFISH"),
    ("plugin-ipam-static", "PODIUM_PLUGIN_IPAM_STATIC"),
    ("plugin-ipam-dhcpless", "PODIUM_PLUGIN_IPAM_DHCPLESS"),
    ("plugin-render-openstack", "PODIUM_PLUGIN_RENDER_OPENSTACK"),
];

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest_dir)
        .parent()
        .expect("host/ has a parent");
    wasm_build::rerun_if_changed(root, &["plugins"]);
    let packages: Vec<&str> = BUNDLED.iter().map(|(p, _)| *p).collect();
    for (built, (_, var)) in wasm_build::build(root, &packages).iter().zip(BUNDLED) {
        println!("cargo:rustc-env={var}={}", built.path.display());
    }
}
