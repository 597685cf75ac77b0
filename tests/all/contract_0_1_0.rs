//! The released contract, `podium:plugin@0.1.0`, does not change: its WIT is pinned by digest,
//! and a driver built against it (`tests/guests/contract-0.1.0`, from its own copy of the WIT,
//! with wit-bindgen alone) loads and does its work after every change to the host. A breaking
//! change goes to a new version beside it (`wit/podium-plugin@0.2.0/`, the sans-IO driver
//! world, is the first), and the host serves both.

use podium_tests::released::assert_frozen;
use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig};
use podium_tests::{TestServer, guests};
use reqwest::StatusCode;
use serde_json::json;

use crate::pod_managers::wait_succeeded;

/// The digest of the released WIT (each file's name, a NUL, its bytes, in name order). A test
/// that fails here means a released contract was edited: put the change in a new version.
const RELEASED: &str = "0bb7dbc5362742d21a54fc1945a5565983e8bc771ac3b59a8ad71b805d34e4a2";

#[test]
fn the_released_wit_is_unchanged() {
    assert_frozen("0.1.0", RELEASED);
}

#[tokio::test]
async fn a_driver_built_for_0_1_0_loads_discovers_and_powers_on() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let plugin = admin.upload_plugin(guests::CONTRACT_0_1_0).await;
    assert_eq!(plugin["name"], "contract-0-1-0", "{plugin}");
    assert_eq!(plugin["world"], "hardware-driver", "{plugin}");

    let bmc = Sushy::start(SushyConfig::with_systems(2)).await.unwrap();
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "released", "url": bmc.url(),
                   "driver": {"name": "contract-0-1-0", "config": {"root": "/redfish/v1"}}}),
        )
        .await;
    let uuid = pm.body["uuid"].as_str().unwrap().to_owned();
    // Registered, then inspected by the driver: available.
    let hosts = admin.systems_in_state(&uuid, 2, "available").await;
    let one = FakeSystem::numbered(1);
    let host = hosts
        .iter()
        .find(|h| h.uuid.as_deref() == Some(one.uuid.as_str()))
        .unwrap_or_else(|| panic!("{} not registered: {hosts:?}", one.uuid));
    let id = host.id.as_str();

    let reply = admin
        .post(&format!("/v1/hosts/{id}/power"), json!({"action": "on"}))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    wait_succeeded(&admin, reply.body["id"].as_str().unwrap()).await;
    let system = bmc
        .get_json(&format!("/redfish/v1/Systems/{}", one.uuid))
        .await
        .unwrap();
    assert_eq!(system["PowerState"], "On", "the emulator's own view");

    // Its configuration is checked by its own validate-config.
    let refused = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "bad", "url": bmc.url(),
                   "driver": {"name": "contract-0-1-0", "config": {"root": 7}}}),
        )
        .await;
    assert_eq!(refused.status.as_u16(), 422, "{}", refused.body);

    // It knows no chassis: `unsupported`, as a 0.2.0 driver without them answers.
    let reference = podium_app::plugins::PluginRef {
        name: "contract-0-1-0".into(),
        ..Default::default()
    };
    let resolved = server
        .podium
        .plugins()
        .resolve(&reference, podium_runtime::World::HardwareDriver, "driver")
        .await
        .expect("the uploaded driver");
    let context = podium_runtime::CallContext {
        config: "{}".into(),
        ..Default::default()
    };
    let refused = server
        .podium
        .runtime()
        .driver(&resolved, context)
        .discover_chassis()
        .await
        .expect_err("no chassis from 0.1.0");
    assert!(
        matches!(
            &refused,
            podium_runtime::CallError::Plugin {
                error: podium_runtime::PluginError::Unsupported(_),
                ..
            }
        ),
        "{refused}"
    );
}
