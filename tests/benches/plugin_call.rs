//! The cost of one driver call: a fresh instance of the bundled Redfish component, one export
//! call (`get-power`) and one `http` import round trip, answered by an in-process stub; beside
//! it, the same driver logic compiled natively and called directly, for the ratio.
//!
//! Three guests: `faulty` in its well-behaved mode (a 0.1.0 driver: its `get-power` is one GET
//! and a substring check, the platform's own cost), `faulty-exchange` in its (a 0.2.0 driver:
//! the same GET as two steps, `start` and `resume`, each a fresh instance: what a step costs),
//! and the bundled Redfish driver (0.2.0 on the SDK, its `get-power` parses the configuration
//! and the ComputerSystem JSON, and replays the first step in the second: a realistic call).
//!
//! And one rendering: `render-network-data` of the example template of
//! `docs/network-config.md` (a bond, a VLAN, static IPv4 and IPv6, DHCP, DNS) through the bundled
//! `render-openstack` component, beside the same function called natively.
//!
//! `cargo bench -p podium-tests --bench plugin_call`; figures go into BENCHMARKS.md.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use podium_runtime::{
    CallContext, Credentials, Endpoint, HttpStub, PowerState, Runtime, RuntimeConfig, TlsPolicy,
};
use podium_types::Secret;

const SYSTEM: &str = "/redfish/v1/Systems/1";

/// A ComputerSystem as sushy-tools serves it, trimmed to what a BMC always sends.
const SYSTEM_JSON: &str = r##"{
  "@odata.type": "#ComputerSystem.v1_10_0.ComputerSystem",
  "Id": "1", "Name": "node-1", "UUID": "27946b59-9e44-4fa7-8e91-000000000001",
  "PowerState": "On",
  "Boot": {"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideTarget": "None"},
  "ProcessorSummary": {"Count": 2}, "MemorySummary": {"TotalSystemMemoryGiB": 8},
  "@odata.id": "/redfish/v1/Systems/1"
}"##;

fn driver_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let stub = HttpStub(Arc::new(|request: reqwest::Request| {
        assert_eq!(request.url().path(), SYSTEM);
        assert!(request.headers().contains_key("authorization"));
        http::Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(SYSTEM_JSON.as_bytes().to_vec())
            .unwrap()
    }));
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.path().to_path_buf()),
        http_stub: Some(stub),
        ..RuntimeConfig::default()
    })
    .unwrap();
    let (_, wasm) = podium::bundled::PLUGINS
        .iter()
        .find(|(name, _)| *name == "plugin-redfish")
        .unwrap();
    let plugin = rt.block_on(runtime.load((*wasm).into())).unwrap();
    let endpoint = Endpoint {
        base: "http://bmc.invalid:8000".parse().unwrap(),
        credentials: Some(Credentials {
            username: "admin".into(),
            password: Secret::new("password"),
        }),
        pod_manager: None,
        parallel_requests: None,
        tls: TlsPolicy::System,
    };
    let call = || CallContext {
        config: "{}".into(),
        endpoint: Some(endpoint.clone()),
        allocations: None,
    };
    assert_eq!(
        rt.block_on(runtime.driver(&plugin, call()).get_power(SYSTEM))
            .unwrap(),
        PowerState::On
    );

    let faulty = rt
        .block_on(runtime.load(podium_tests::guests::FAULTY.into()))
        .unwrap();
    let faulty_call = || CallContext {
        config: r#"{"fault": "ok"}"#.into(),
        endpoint: Some(endpoint.clone()),
        allocations: None,
    };
    assert_eq!(
        rt.block_on(runtime.driver(&faulty, faulty_call()).get_power(SYSTEM))
            .unwrap(),
        PowerState::On
    );

    let exchange = rt
        .block_on(runtime.load(podium_tests::guests::FAULTY_EXCHANGE.into()))
        .unwrap();
    let exchange_call = || CallContext {
        config: format!(r#"{{"target": "{SYSTEM}"}}"#),
        endpoint: Some(endpoint.clone()),
        allocations: None,
    };
    assert_eq!(
        rt.block_on(runtime.driver(&exchange, exchange_call()).get_power(SYSTEM))
            .unwrap(),
        PowerState::On
    );

    let mut group = c.benchmark_group("driver_call");
    // The runtime's own floor: a fresh instance and one export call that imports nothing.
    group.bench_function(
        "minimal guest validate-config (instance + call, no import)",
        |b| b.iter(|| rt.block_on(runtime.validate_config(&faulty, "{}")).unwrap()),
    );
    group.bench_function(
        "minimal native validate-config (same logic, no component)",
        |b| {
            b.iter(|| {
                assert!(
                    serde_json::from_str::<serde_json::Value>(std::hint::black_box("{}"))
                        .unwrap()
                        .is_object()
                )
            })
        },
    );
    group.bench_function(
        "minimal guest get-power (instance + call + http import)",
        |b| {
            b.iter(|| {
                rt.block_on(runtime.driver(&faulty, faulty_call()).get_power(SYSTEM))
                    .unwrap()
            })
        },
    );
    group.bench_function(
        "minimal 0.2.0 guest get-power (two steps, an instance each, one request)",
        |b| {
            b.iter(|| {
                rt.block_on(runtime.driver(&exchange, exchange_call()).get_power(SYSTEM))
                    .unwrap()
            })
        },
    );
    let minimal_native = |get: &dyn Fn(&str) -> (u16, Vec<u8>)| {
        let (_, body) = get(SYSTEM);
        String::from_utf8_lossy(&body).contains("\"On\"")
    };
    group.bench_function("redfish get-power (0.2.0: two steps, one request)", |b| {
        b.iter(|| {
            rt.block_on(runtime.driver(&plugin, call()).get_power(SYSTEM))
                .unwrap()
        })
    });
    let get = |url: &str| {
        assert_eq!(url, SYSTEM);
        (200u16, SYSTEM_JSON.as_bytes().to_vec())
    };
    // The driver's own code, run natively by the SDK's test harness with an in-process
    // endpoint: the same `get-power` the component runs, configuration parsed and all.
    let host = podium_plugin::testing::Host::new().in_process(|request| {
        assert_eq!(request.url, SYSTEM);
        Ok(podium_plugin::http::Response {
            status: 200,
            headers: Vec::new(),
            body: SYSTEM_JSON.as_bytes().to_vec(),
        })
    });
    let native = host.driver::<plugin_redfish::Redfish>();
    assert_eq!(
        native.get_power(SYSTEM).unwrap(),
        podium_plugin::driver::PowerState::On
    );
    group.bench_function("minimal native get-power (same logic, no component)", |b| {
        b.iter(|| assert!(minimal_native(&get)))
    });
    group.bench_function(
        "redfish native get-power (SDK test harness, no component)",
        |b| b.iter(|| native.get_power(SYSTEM).unwrap()),
    );
    group.finish();
}

const TEMPLATE: &str = r#"{
  "links": [
    {"id": "nic1", "type": "phy", "nic": {"name": "eno1"}, "mtu": 9000},
    {"id": "nic2", "type": "phy", "nic": {"mac": "52:54:00:aa:00:02"}, "mtu": 9000},
    {"id": "boot", "type": "phy", "nic": "boot"},
    {"id": "bond0", "type": "bond", "links": ["nic1", "nic2"], "mode": "802.3ad",
     "hash_policy": "layer3+4", "miimon": 100, "mtu": 9000},
    {"id": "bond0.100", "type": "vlan", "link": "bond0", "vlan_id": 100}
  ],
  "networks": [
    {"id": "prod", "type": "ipv4", "link": "bond0.100", "pool": "prod-v4", "default_route": true,
     "routes": [{"network": "10.0.0.0/8", "gateway": "192.168.10.254"}]},
    {"id": "prod6", "type": "ipv6", "link": "bond0", "pool": "prod-v6", "default_route": true},
    {"id": "mgmt", "type": "ipv4_dhcp", "link": "boot"}
  ],
  "dns": {"servers": ["192.0.2.53"], "from_pools": true}
}"#;

fn render(c: &mut Criterion) {
    use podium_runtime::{ConsumerInput, NetworkPolicy, RenderAddress, RenderHost, RenderInput};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.path().to_path_buf()),
        ..RuntimeConfig::default()
    })
    .unwrap();
    let (_, wasm) = podium::bundled::PLUGINS
        .iter()
        .find(|(name, _)| *name == "plugin-render-openstack")
        .unwrap();
    let plugin = rt.block_on(runtime.load((*wasm).into())).unwrap();
    let nics = [
        (Some("eno1"), "52:54:00:aa:00:01"),
        (Some("eno2"), "52:54:00:aa:00:02"),
        (Some("eno3"), "52:54:00:aa:00:03"),
    ];
    let addresses = [
        (
            "prod-v4",
            "192.168.10.7",
            24,
            "192.168.10.1",
            "192.168.10.53",
        ),
        (
            "prod-v6",
            "2001:db8:10::7",
            64,
            "2001:db8:10::1",
            "2001:db8::53",
        ),
    ];
    let input = RenderInput {
        host: RenderHost {
            id: "h1".into(),
            name: "node-1".into(),
            uuid: None,
            boot_mac: Some("52:54:00:aa:00:03".into()),
            nics: nics
                .iter()
                .map(|(n, m)| (n.map(str::to_owned), (*m).to_owned()))
                .collect(),
        },
        policy: NetworkPolicy::Admin,
        template: TEMPLATE.into(),
        addresses: addresses
            .iter()
            .map(|(pool, a, p, g, d)| RenderAddress {
                pool: (*pool).into(),
                address: (*a).into(),
                prefix: *p,
                gateway: Some((*g).into()),
                dns_servers: vec![(*d).into()],
            })
            .collect(),
        context: Vec::new(),
        consumer: ConsumerInput::default(),
    };
    let native = plugin_render_openstack::RenderInput {
        host: plugin_render_openstack::Host {
            id: "h1".into(),
            name: "node-1".into(),
            uuid: None,
            boot_mac: Some("52:54:00:aa:00:03".into()),
            nics: nics
                .iter()
                .map(|(n, m)| plugin_render_openstack::Nic {
                    name: n.map(str::to_owned),
                    mac: (*m).to_owned(),
                })
                .collect(),
        },
        policy: plugin_render_openstack::Policy::Admin,
        template: TEMPLATE.into(),
        addresses: addresses
            .iter()
            .map(|(pool, a, p, g, d)| plugin_render_openstack::Address {
                pool: (*pool).into(),
                address: (*a).into(),
                prefix: *p,
                gateway: Some((*g).into()),
                dns_servers: vec![(*d).into()],
            })
            .collect(),
        context: Vec::new(),
        consumer: plugin_render_openstack::ConsumerInput::default(),
    };
    let call = || CallContext {
        config: "{}".into(),
        endpoint: None,
        allocations: None,
    };
    let through_plugin = rt
        .block_on(
            runtime
                .renderer(&plugin, call())
                .render_network_data(&input),
        )
        .unwrap();
    let natively: serde_json::Value =
        serde_json::from_str(&plugin_render_openstack::render_network_data(&native).unwrap())
            .unwrap();
    assert_eq!(
        through_plugin, natively,
        "the component and the native build agree"
    );

    let mut group = c.benchmark_group("render");
    group.bench_function("render-network-data (instance + call)", |b| {
        b.iter(|| {
            rt.block_on(
                runtime
                    .renderer(&plugin, call())
                    .render_network_data(&input),
            )
            .unwrap()
        })
    });
    group.bench_function(
        "render_network_data native (same logic, no component)",
        |b| b.iter(|| plugin_render_openstack::render_network_data(&native).unwrap()),
    );
    group.finish();
}

criterion_group!(benches, driver_call, render);
criterion_main!(benches);
