//! A BIOS read and a full inventory read through Podium beside the same reads straight at the
//! BMC: `GET /v1/hosts/{id}/bios` (the Redfish driver's `read-bios` through the plugin runtime:
//! the system, its `Bios`, the service root, `Registries` and each registry file, the attribute
//! registry, each step's requests sent together) and `GET /v1/hosts/{id}/hardware` (the system,
//! its `Processors`, `Memory`, `Storage`, `SimpleStorage` and `EthernetInterfaces` and their
//! members) against a client sending those same GETs to sushy-tools' libvirt driver in front
//! of libvirt's `test:///default` domain, one after another as a script would.
//!
//! `cargo bench -p podium-tests --bench bios [-- RUNS]`; default 50.

use std::time::{Duration, Instant};

use podium_tests::sushy::{LibvirtBackend, Sushy, SushyConfig};
use podium_tests::{TestServer, bench_args, site};
use reqwest::StatusCode;
use serde_json::{Value, json};

const DOMAIN: &str = "6695eb01-f6a4-8304-79aa-97f2502e193f";

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A GET whose answer may be an error (sushy-tools links a `Memory` it answers with a 404).
async fn try_get(bmc: &Sushy, path: &str) -> Option<Value> {
    let reply = bmc
        .request(reqwest::Method::GET, path)
        .send()
        .await
        .expect("the emulator answers");
    if reply.status() != StatusCode::OK {
        return None;
    }
    reply.json().await.ok()
}

async fn get(bmc: &Sushy, path: &str) -> Value {
    let reply = bmc
        .request(reqwest::Method::GET, path)
        .send()
        .await
        .expect("the emulator answers");
    assert_eq!(reply.status(), StatusCode::OK, "{path}");
    reply.json().await.expect("JSON")
}

fn members(collection: &Value) -> Vec<String> {
    collection["Members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["@odata.id"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::main]
async fn main() {
    let [runs] = bench_args([50]);
    let bmc = Sushy::start(SushyConfig {
        libvirt: Some(LibvirtBackend {
            uri: "test:///default".into(),
            domains: vec![DOMAIN.into()],
            storage_pool: "default-pool".into(),
        }),
        ..SushyConfig::default()
    })
    .await
    .expect("sushy-tools starts");
    let server = TestServer::start_with(site::quick).await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    let path = format!("/v1/hosts/{}/bios", host.id);

    let mut podium = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let read = admin.get(&path).await;
        podium.push(started.elapsed());
        assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    }

    // The same requests, one after another.
    let system_path = format!("/redfish/v1/Systems/{DOMAIN}");
    let mut sequential = Vec::new();
    let mut requests = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let system = get(&bmc, &system_path).await;
        let bios = get(&bmc, system["Bios"]["@odata.id"].as_str().unwrap()).await;
        let root = get(&bmc, "/redfish/v1").await;
        let files = members(&get(&bmc, root["Registries"]["@odata.id"].as_str().unwrap()).await);
        let mut locations = Vec::new();
        for file in &files {
            let file = get(&bmc, file).await;
            if file["Id"]
                .as_str()
                .unwrap_or("")
                .contains("AttributeRegistry")
            {
                locations.extend(
                    file["Location"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|l| l["Uri"].as_str().map(str::to_owned)),
                );
            }
        }
        for uri in &locations {
            let registry = get(&bmc, uri).await;
            assert_eq!(registry["Id"], bios["AttributeRegistry"]);
        }
        let settings = bios["@Redfish.Settings"]["SettingsObject"]["@odata.id"]
            .as_str()
            .unwrap();
        get(&bmc, settings).await;
        sequential.push(started.elapsed());
        requests = 5 + files.len() + locations.len();
    }

    let hardware = format!("/v1/hosts/{}/hardware", host.id);
    let mut podium_hw = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let read = admin.get(&hardware).await;
        podium_hw.push(started.elapsed());
        assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    }
    let mut sequential_hw = Vec::new();
    let mut hw_requests = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let system = get(&bmc, &system_path).await;
        let mut sent = 1;
        for part in [
            "Processors",
            "Memory",
            "Storage",
            "SimpleStorage",
            "EthernetInterfaces",
        ] {
            let Some(link) = system[part]["@odata.id"].as_str() else {
                continue;
            };
            sent += 1;
            if let Some(collection) = try_get(&bmc, link).await {
                for member in members(&collection) {
                    try_get(&bmc, &member).await;
                    sent += 1;
                }
            }
        }
        sequential_hw.push(started.elapsed());
        hw_requests = sent;
    }

    let report = json!({
        "runs": runs,
        "requests_per_read": requests,
        "podium_get_bios_ms": ms(median(podium)),
        "direct_sequential_ms": ms(median(sequential)),
        "requests_per_inventory": hw_requests,
        "podium_get_hardware_ms": ms(median(podium_hw)),
        "direct_inventory_sequential_ms": ms(median(sequential_hw)),
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
