//! The released contract `podium:plugin@0.2.0` (the sans-IO driver world) does not change: its
//! WIT is pinned by digest, and a driver built against it (`tests/guests/contract-0.2.0`, from
//! its own copy of the WIT, with wit-bindgen alone) loads and answers every call of `call`
//! through Podium's API after every change to the host. What comes after it goes to a new
//! version beside it (0.3.0), and the host keeps serving 0.1.0 and 0.2.0.

use podium_tests::released::assert_frozen;
use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig};
use podium_tests::{Client, ImageServer, TestServer, guests};
use podium_types::views::{ChassisView, CompositionView, HostView, List};
use podium_types::{Bios, Firmware, FirmwareKind, HardwareInventory, SecureBoot};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bios::{TEST_DOMAIN, bmc_attributes, bmc_view, json_value, libvirt_bmc};
use crate::hosts::{emulated_cd, wait_host};
use crate::pod_managers::{wait_status, wait_succeeded};

/// The digest of the released WIT (`podium_tests::released::wit_digest`). A test that fails
/// here means a released contract was edited: put the change in a new version.
const RELEASED: &str = "426222597b895e06e0500ad19b1864bbfcfc6d91779069c5e1a0cb544c69b273";

/// The fixture's name, as its `info` says it.
const DRIVER: &str = "contract-0-2-0";

#[test]
fn the_released_wit_is_unchanged() {
    assert_frozen("0.2.0", RELEASED);
}

/// Uploads the fixture and registers a pod manager at `url` driven by it; answers the pod
/// manager's uuid once its probe found it online, with the service root the driver answered.
async fn bound_to_the_fixture(admin: &Client, url: &str) -> String {
    let plugin = admin.upload_plugin(guests::CONTRACT_0_2_0).await;
    assert_eq!(plugin["name"], DRIVER, "{plugin}");
    assert_eq!(plugin["version"], "0.2.0", "{plugin}");
    assert_eq!(plugin["world"], "hardware-driver", "{plugin}");
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "released-0-2-0", "url": url,
                   "driver": {"name": DRIVER, "config": {"root": "/redfish/v1"}}}),
        )
        .await;
    let uuid = pm.body["uuid"].as_str().unwrap().to_owned();
    let online = wait_status(admin, &uuid, "online").await;
    assert_eq!(
        online["redfish_link"],
        format!("{url}/redfish/v1"),
        "{online}"
    );
    uuid
}

/// Sends an action on a host; answers its operation once it succeeded.
async fn acted(admin: &Client, path: &str, body: Value) -> Value {
    let reply = admin.post(path, body).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    wait_succeeded(admin, reply.body["id"].as_str().unwrap()).await
}

/// sushy-tools' fake driver behind the fixture: probe, discovery and inspection make its systems
/// available hosts with their NICs; power, boot override and virtual media reach the emulator
/// and are read back; its chassis holds the hosts; the composition service is the fixture's
/// fixed empty one, and composing is `unsupported`. The driver's own `validate-config` checks
/// its configuration.
#[tokio::test]
async fn a_driver_built_for_0_2_0_discovers_and_drives_power_boot_media_and_chassis() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let bmc = Sushy::start(SushyConfig::with_systems(2)).await.unwrap();
    let pm = bound_to_the_fixture(&admin, &bmc.url()).await;

    // Discovered, then inspected by the driver: available, with the emulator's NICs.
    let hosts = admin.systems_in_state(&pm, 2, "available").await;
    let one = FakeSystem::numbered(1);
    let host = hosts
        .iter()
        .find(|h| h.uuid.as_deref() == Some(one.uuid.as_str()))
        .unwrap_or_else(|| panic!("{} not registered: {hosts:?}", one.uuid));
    let id = host.id.to_string();
    let macs: Vec<&str> = host.nics.iter().map(|n| n.mac.as_str()).collect();
    assert_eq!(macs, [one.nics[0].as_str()], "{host:?}");
    let system_path = format!("/redfish/v1/Systems/{}", one.uuid);

    acted(
        &admin,
        &format!("/v1/hosts/{id}/power"),
        json!({"action": "on"}),
    )
    .await;
    let system = bmc.get_json(&system_path).await.unwrap();
    assert_eq!(system["PowerState"], "On", "the emulator's own view");
    wait_host(&admin, &id, "power_state on", |h| h["power_state"] == "on").await;

    let boot = acted(
        &admin,
        &format!("/v1/hosts/{id}/boot"),
        json!({"target": "cd", "persistence": "continuous"}),
    )
    .await;
    assert_eq!(boot["kind"], "boot", "{boot}");
    let system = bmc.get_json(&system_path).await.unwrap();
    assert_eq!(system["Boot"]["BootSourceOverrideTarget"], "Cd", "{system}");
    assert_eq!(
        system["Boot"]["BootSourceOverrideEnabled"], "Continuous",
        "{system}"
    );
    admin.sync_all(std::slice::from_ref(&pm)).await;
    wait_host(&admin, &id, "boot cd, continuous", |h| {
        h["boot"]["target"] == "cd" && h["boot"]["persistence"] == "continuous"
    })
    .await;

    let images = ImageServer::start(vec![0x42; 4096]).await;
    let image_url = images.url("/boot.iso");
    assert_eq!(emulated_cd(&bmc, &one.uuid).await["Inserted"], false);
    let media = format!("/v1/hosts/{id}/media");
    acted(
        &admin,
        &media,
        json!({"action": "insert", "image_url": image_url}),
    )
    .await;
    let cd = emulated_cd(&bmc, &one.uuid).await;
    assert_eq!(cd["Inserted"], true, "{cd}");
    assert_eq!(cd["Image"], image_url.as_str(), "{cd}");
    acted(&admin, &media, json!({"action": "eject"})).await;
    let cd = emulated_cd(&bmc, &one.uuid).await;
    assert_eq!(cd["Inserted"], false, "{cd}");

    // sushy-tools' one chassis, holding both systems' hosts.
    let reply = admin.get(&format!("/v1/pod_managers/{pm}/chassis")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let chassis = reply.view::<List<ChassisView>>().items;
    assert_eq!(chassis.len(), 1, "{chassis:#?}");
    let mut held: Vec<String> = chassis[0].hosts.iter().map(|h| h.to_string()).collect();
    held.sort();
    let mut ids: Vec<String> = hosts.iter().map(|h| h.id.to_string()).collect();
    ids.sort();
    assert_eq!(held, ids, "{chassis:#?}");
    // Chassis power came in 0.3.0: the host answers for a 0.2.0 driver without running it.
    let reply = admin
        .post(
            &format!("/v1/chassis/{}/power", chassis[0].id),
            json!({"action": "on"}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.text);
    assert_eq!(reply.code(), "chassis_power_unsupported", "{}", reply.text);
    assert!(
        reply
            .message()
            .contains("chassis power: a podium:plugin@0.2.0 driver has none"),
        "{}",
        reply.text
    );

    // The fixture's fixed composition service: read as one (not a 409), with nothing in it.
    let reply = admin
        .get(&format!("/v1/pod_managers/{pm}/composition"))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let composition: CompositionView = reply.view();
    assert!(composition.blocks.is_empty(), "{composition:?}");
    assert!(composition.zones.is_empty(), "{composition:?}");

    // Composing needs blocks the service lists, so the API never reaches `compose` or
    // `decompose` here: they are called directly, and answer `unsupported`.
    let reference = podium_app::plugins::PluginRef {
        name: DRIVER.into(),
        ..Default::default()
    };
    let resolved = server
        .podium
        .plugins()
        .resolve(&reference, podium_runtime::World::HardwareDriver, "driver")
        .await
        .expect("the uploaded driver");
    let driver = || {
        let context = podium_runtime::CallContext {
            config: "{}".into(),
            ..Default::default()
        };
        server.podium.runtime().driver(&resolved, context)
    };
    for refused in [
        driver()
            .compose(
                "node",
                &["/redfish/v1/CompositionService/ResourceBlocks/1".into()],
            )
            .await
            .map(drop),
        driver().decompose(&system_path).await,
    ] {
        let refused = refused.expect_err("the emulator composes nothing");
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

    let refused = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "bad", "url": bmc.url(),
                   "driver": {"name": DRIVER, "config": {"root": 7}}}),
        )
        .await;
    assert_eq!(refused.status.as_u16(), 422, "{}", refused.body);
}

/// sushy-tools' libvirt driver behind the fixture: the BIOS read (as the driver types it, with
/// no registry), changed and reset; secure boot read and turned on; processors and NIC; the
/// firmware versions read at inspection and listed, and a BIOS update that follows the BMC's
/// task. Each change shows in the emulator's own view.
#[tokio::test]
async fn a_driver_built_for_0_2_0_reads_and_changes_bios_secure_boot_and_firmware() {
    let bmc = libvirt_bmc().await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = bound_to_the_fixture(&admin, &bmc.url()).await;
    let host = admin.systems_in_state(&pm, 1, "available").await.remove(0);
    let id = host.id.to_string();
    assert_eq!(host.bios_version.as_deref(), Some("1.0.0"), "{host:?}");
    assert_eq!(host.bmc_version.as_deref(), Some("1.00"), "{host:?}");

    let bios_path = format!("/v1/hosts/{id}/bios");
    let read = admin.get(&bios_path).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let bios: Bios = read.view();
    assert_eq!(
        bios.attributes["ProcTurboMode"],
        Some(json_value("Enabled"))
    );
    // No registry: sushy-tools' strings are text.
    assert_eq!(bios.attributes["NumCores"], Some(json_value("10")));
    assert!(bios.registry.is_empty(), "{bios:?}");
    assert!(bios.pending.is_empty(), "{bios:?}");
    let reply = admin
        .patch(
            &bios_path,
            json!({"attributes": {"ProcTurboMode": "Disabled", "L2Cache": "20x256 KB"}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    let op = wait_succeeded(&admin, reply.body["id"].as_str().unwrap()).await;
    let mut applied: Vec<&str> = op["result"]["applied"]
        .as_array()
        .unwrap_or_else(|| panic!("applied in {op}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    applied.sort_unstable();
    assert_eq!(applied, ["L2Cache", "ProcTurboMode"], "{op}");
    let seen = bmc_attributes(&bmc).await;
    assert_eq!(seen["ProcTurboMode"], "Disabled", "{seen}");
    assert_eq!(seen["L2Cache"], "20x256 KB", "{seen}");
    acted(&admin, &format!("{bios_path}/reset"), json!({})).await;
    let seen = bmc_attributes(&bmc).await;
    assert_eq!(seen["ProcTurboMode"], "Enabled", "{seen}");
    assert_eq!(seen["L2Cache"], "10x256 KB", "{seen}");

    let secure_boot = format!("/v1/hosts/{id}/secure_boot");
    let state: SecureBoot = admin.get(&secure_boot).await.view();
    assert!(!state.enabled, "{state:?}");
    assert_eq!(state.mode.as_deref(), Some("DeployedMode"));
    let reply = admin.put(&secure_boot, json!({"enabled": true})).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    let op = wait_succeeded(&admin, reply.body["id"].as_str().unwrap()).await;
    assert_eq!(op["result"]["enabled"], true, "{op}");
    assert_eq!(bmc_view(&bmc, "SecureBoot").await["SecureBootEnable"], true);
    let state: SecureBoot = admin.get(&secure_boot).await.view();
    assert!(state.enabled, "{state:?}");

    let read = admin.get(&format!("/v1/hosts/{id}/hardware")).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let hardware: HardwareInventory = read.view();
    assert_eq!(hardware.processors.len(), 2, "{hardware:#?}");
    assert!(
        hardware
            .processors
            .iter()
            .all(|p| p.cores == Some(1) && p.instruction_set.as_deref() == Some("x86-64")),
        "{hardware:#?}"
    );
    assert!(hardware.memory.is_empty() && hardware.storage.is_empty());
    let macs: Vec<_> = hardware
        .nics
        .iter()
        .filter_map(|n| n.mac.as_deref())
        .collect();
    assert_eq!(macs, ["aa:bb:cc:dd:ee:ff"], "{hardware:#?}");

    let firmware_path = format!("/v1/hosts/{id}/firmware");
    let read = admin.get(&firmware_path).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let firmware: Firmware = read.view();
    let bios = firmware
        .components
        .iter()
        .find(|c| c.kind == FirmwareKind::Bios)
        .unwrap_or_else(|| panic!("a BIOS component in {}", read.text));
    assert_eq!(bios.id, format!("/redfish/v1/Systems/{TEST_DOMAIN}"));
    assert_eq!(bios.version.as_deref(), Some("1.0.0"));
    assert!(bios.updateable, "{}", read.text);
    assert!(
        firmware
            .components
            .iter()
            .any(|c| c.kind == FirmwareKind::Bmc && c.version.as_deref() == Some("1.00")),
        "{}",
        read.text
    );
    let image = "http://127.0.0.1:9/bios-1.1.0.bin";
    let op = acted(
        &admin,
        &format!("{firmware_path}/update"),
        json!({"image_url": image, "targets": [bios.id]}),
    )
    .await;
    assert_eq!(op["kind"], "firmware_update", "{op}");
    // sushy-tools answers its one static task, which says it completed.
    assert_eq!(
        op["progress"]["task"], "/redfish/v1/TaskService/Tasks/42",
        "{op}"
    );
    assert_eq!(op["progress"]["state"], "completed", "{op}");
    assert_eq!(op["progress"]["percent"], 100, "{op}");
    assert_eq!(
        op["result"]["components"],
        json!([{"id": bios.id, "name": "BIOS", "version_before": "1.0.0", "version": "1.1.0"}]),
        "{op}"
    );
    assert_eq!(bmc_view(&bmc, "").await["BiosVersion"], "1.1.0");
    let shown: HostView = admin.get(&format!("/v1/hosts/{id}")).await.view();
    assert_eq!(shown.bios_version.as_deref(), Some("1.1.0"), "{shown:?}");
}
