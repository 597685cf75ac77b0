//! The cost of one driver call: a fresh instance of the bundled Redfish component, one export
//! call (`get-power`) and one `http` import round trip, answered by an in-process stub; beside
//! it, the same driver logic compiled natively and called directly, for the ratio.
//!
//! Two guests: `faulty` in its well-behaved mode (its `get-power` is one GET and a substring
//! check: the platform's own cost) and the bundled Redfish driver (its `get-power` parses the
//! configuration and the ComputerSystem JSON: a realistic call).
//!
//! `cargo bench -p podium-tests --bench plugin_call`; figures go into BENCHMARKS.md.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use podium::runtime::{
    CallContext, Credentials, Endpoint, HttpStub, PowerState, Runtime, RuntimeConfig, TlsPolicy,
};
use podium::secret::Secret;

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

    let mut group = c.benchmark_group("driver_call");
    group.bench_function(
        "minimal guest get-power (instance + call + http import)",
        |b| {
            b.iter(|| {
                rt.block_on(runtime.driver(&faulty, faulty_call()).get_power(SYSTEM))
                    .unwrap()
            })
        },
    );
    let minimal_native = |get: &dyn Fn(&str) -> (u16, Vec<u8>)| {
        let (_, body) = get(SYSTEM);
        String::from_utf8_lossy(&body).contains("\"On\"")
    };
    group.bench_function("redfish get-power (instance + call + http import)", |b| {
        b.iter(|| {
            rt.block_on(runtime.driver(&plugin, call()).get_power(SYSTEM))
                .unwrap()
        })
    });
    let get = |url: &str| {
        assert_eq!(url, SYSTEM);
        (200u16, SYSTEM_JSON.as_bytes().to_vec())
    };
    assert_eq!(
        plugin_redfish::native::get_power("{}", &get, SYSTEM).unwrap(),
        "PowerState::On"
    );
    group.bench_function("minimal native get-power (same logic, no component)", |b| {
        b.iter(|| assert!(minimal_native(&get)))
    });
    group.bench_function("redfish native get-power (same logic, no component)", |b| {
        b.iter(|| plugin_redfish::native::get_power("{}", &get, SYSTEM).unwrap())
    });
    group.finish();
}

criterion_group!(benches, driver_call);
criterion_main!(benches);
