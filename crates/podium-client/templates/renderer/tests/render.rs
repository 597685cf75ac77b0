//! The renderer's calls run natively, as the host makes them.

use podium_plugin::render::{HostFacts, Nic};
use podium_plugin::testing::Host;

use {{crate_name}}::Render;

#[test]
fn dhcp_on_every_nic() {
    let host = HostFacts {
        id: "h1".into(),
        name: "node-1".into(),
        uuid: None,
        boot_mac: None,
        nics: vec![Nic { name: None, mac: "52:54:00:aa:00:01".into() }],
    };
    let document = Host::new()
        .renderer::<Render>()
        .render_preprovisioning_network_data(host, vec![])
        .unwrap();
    let document: serde_json::Value = serde_json::from_str(&document).unwrap();
    assert_eq!(document["networks"][0]["type"], "ipv4_dhcp");
    assert_eq!(document["links"][0]["ethernet_mac_address"], "52:54:00:aa:00:01");
}
