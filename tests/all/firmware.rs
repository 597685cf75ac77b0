//! A host's firmware through the admin API (`GET /v1/hosts/{id}/firmware`, `POST
//! .../firmware/update`): sushy-tools' libvirt driver on `test:///default`, whose
//! `SimpleUpdate` raises the domain's BIOS version and answers a task; DMTF's
//! `public-rackmount1` served by `sushy-static` for a `FirmwareInventory`; DMTF's blades, whose
//! service has no `UpdateService`.

use podium_tests::TestServer;
use podium_tests::sushy::SushyStatic;
use podium_types::views::HostView;
use podium_types::{Firmware, FirmwareKind};
use reqwest::StatusCode;
use serde_json::json;

use crate::bios::{TEST_DOMAIN, bmc_view, libvirt_bmc};
use crate::pod_managers::wait_succeeded;

/// An admin reads a host's firmware (the BIOS version the system reports, the BMC's its manager
/// reports), is refused an update that names no component of the host or an image that is not
/// a plain http(s) URL (nothing reaches the BMC), and updates the BIOS: an operation that
/// follows the BMC's task, shows its progress, and says the version before and after; the
/// BMC's own view shows the new version.
#[tokio::test]
async fn an_admin_updates_a_hosts_bios_and_the_operation_follows_the_bmcs_task() {
    let bmc = libvirt_bmc().await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    // The inspection read the versions; the host shows them.
    assert_eq!(host.bios_version.as_deref(), Some("1.0.0"), "{host:?}");
    assert_eq!(host.bmc_version.as_deref(), Some("1.00"), "{host:?}");
    let path = format!("/v1/hosts/{}/firmware", host.id);

    let read = admin.get(&path).await;
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
    let bmc_fw = firmware
        .components
        .iter()
        .find(|c| c.kind == FirmwareKind::Bmc)
        .unwrap_or_else(|| panic!("a BMC component in {}", read.text));
    assert_eq!(bmc_fw.version.as_deref(), Some("1.00"));

    let update = format!("{path}/update");
    let image = "http://127.0.0.1:9/bios-1.1.0.bin";
    for (body, field, says) in [
        (
            json!({"image_url": "ftp://127.0.0.1/bios.bin", "targets": [bios.id]}),
            "image_url",
            "http or https",
        ),
        (
            json!({"image_url": "http://admin:hunter2-secret@127.0.0.1/b.bin", "targets": [bios.id]}),
            "image_url",
            "credentials",
        ),
        (
            json!({"image_url": image, "targets": []}),
            "targets",
            "at least one",
        ),
        (
            json!({"image_url": image, "targets": ["/redfish/v1/Systems/nope"]}),
            "targets[0]",
            "no firmware component",
        ),
        (
            json!({"image_url": image, "targets": [bios.id, bios.id]}),
            "targets[1]",
            "named before",
        ),
        (
            json!({"image_url": image, "targets": [bios.id], "force": true}),
            "force",
            "unknown field",
        ),
        // Text the URL parser would quietly change before it was sent: refused, not cleaned up.
        (
            json!({"image_url": format!("{image}\r\nX-Injected: 1"), "targets": [bios.id]}),
            "image_url",
            "line break",
        ),
        (
            json!({"image_url": "http:///bios-1.1.0.bin", "targets": [bios.id]}),
            "image_url",
            "names no host",
        ),
    ] {
        let refused = admin.post(&update, body).await;
        refused.assert_invalid(field, says);
        assert!(!refused.text.contains("hunter2-secret"), "{}", refused.text);
    }
    assert_eq!(
        bmc_view(&bmc, "").await["BiosVersion"],
        "1.0.0",
        "a refused update reaches nothing"
    );

    // Sent as typed, kept and forwarded as parsed (the form the check saw).
    let typed = "HTTP://127.0.0.1:9/firmware/../bios-1.1.0.bin";
    let started = admin
        .post(&update, json!({"image_url": typed, "targets": [bios.id]}))
        .await;
    assert_eq!(started.status, StatusCode::ACCEPTED, "{}", started.text);
    assert_eq!(started.body["kind"], "firmware_update", "{}", started.text);
    let op = wait_succeeded(&admin, started.body["id"].as_str().unwrap()).await;
    assert_eq!(
        op["request"],
        json!({"image_url": image, "targets": [bios.id]}),
        "{op}"
    );
    // sushy-tools answers its one static task, which says it completed.
    assert_eq!(
        op["progress"]["task"], "/redfish/v1/TaskService/Tasks/42",
        "{op}"
    );
    assert_eq!(op["progress"]["state"], "completed", "{op}");
    assert_eq!(op["progress"]["percent"], 100, "{op}");
    assert_eq!(
        op["result"]["components"],
        json!([{
            "id": bios.id,
            "name": "BIOS",
            "version_before": "1.0.0",
            "version": "1.1.0",
        }]),
        "{op}"
    );
    assert_eq!(bmc_view(&bmc, "").await["BiosVersion"], "1.1.0");
    let shown: HostView = admin.get(&format!("/v1/hosts/{}", host.id)).await.view();
    assert_eq!(shown.bios_version.as_deref(), Some("1.1.0"), "{shown:?}");
    let again: Firmware = admin.get(&path).await.view();
    assert!(
        again
            .components
            .iter()
            .any(|c| c.kind == FirmwareKind::Bios && c.version.as_deref() == Some("1.1.0")),
        "{again:?}"
    );

    let audit = admin.get("/v1/audit").await;
    assert!(
        audit
            .text
            .contains(&format!("/v1/hosts/{}/firmware/update", host.id)),
        "{}",
        audit.text
    );
}

/// DMTF's rack server lists its firmware in the update service's `FirmwareInventory`: the
/// host's components are those related to its system, its manager and its parts, each typed.
#[tokio::test]
async fn a_rack_servers_firmware_inventory_is_read_from_its_update_service() {
    let bmc = SushyStatic::start(&podium_tests::composition::mockup("public-rackmount1"))
        .await
        .expect("sushy-static starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    let read = admin.get(&format!("/v1/hosts/{}/firmware", host.id)).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let firmware: Firmware = read.view();
    let mut seen: Vec<(&str, FirmwareKind, Option<&str>, bool)> = firmware
        .components
        .iter()
        .map(|c| (c.id.as_str(), c.kind, c.version.as_deref(), c.updateable))
        .collect();
    seen.sort_unstable_by_key(|c| c.0);
    assert_eq!(
        seen,
        [
            (
                "/redfish/v1/UpdateService/FirmwareInventory/BIOS",
                FirmwareKind::Bios,
                Some("P79 v1.45"),
                true
            ),
            (
                "/redfish/v1/UpdateService/FirmwareInventory/BMC",
                FirmwareKind::Bmc,
                Some("1.45.455b66-rev4"),
                true
            ),
            (
                "/redfish/v1/UpdateService/FirmwareInventory/SS",
                FirmwareKind::Other,
                Some("2.50"),
                true
            ),
        ],
        "{}",
        read.text
    );
}

/// DMTF's blades report their BIOS and BMC versions but their service has no `UpdateService`:
/// the components show as not updateable, and an update of one is a 422 naming it, with
/// nothing queued.
#[tokio::test]
async fn a_bmc_without_an_update_service_takes_no_update() {
    let bmc = SushyStatic::start(&podium_tests::composition::mockup("public-bladed"))
        .await
        .expect("sushy-static starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 4).await;
    let path = format!("/v1/hosts/{}/firmware", host.id);
    let read = admin.get(&path).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let firmware: Firmware = read.view();
    let bios = firmware
        .components
        .iter()
        .find(|c| c.kind == FirmwareKind::Bios)
        .unwrap_or_else(|| panic!("a BIOS component in {}", read.text));
    assert!(
        bios.version
            .as_deref()
            .is_some_and(|v| v.starts_with("P86")),
        "{}",
        read.text
    );
    assert!(
        firmware.components.iter().all(|c| !c.updateable),
        "{}",
        read.text
    );
    assert!(
        firmware
            .components
            .iter()
            .any(|c| c.kind == FirmwareKind::Bmc),
        "{}",
        read.text
    );

    let refused = admin
        .post(
            &format!("{path}/update"),
            json!({"image_url": "http://127.0.0.1:9/b.bin", "targets": [bios.id]}),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.text
    );
    assert_eq!(refused.field(), "targets[0]", "{}", refused.text);
    assert!(
        refused.message().contains("cannot be updated"),
        "{}",
        refused.text
    );
    let ops = admin
        .get(&format!(
            "/v1/operations?host={}&kind=firmware_update",
            host.id
        ))
        .await;
    assert_eq!(ops.body["items"], json!([]), "{}", ops.text);
}

/// An update is the one action that must not run twice. Its task's reads fail (a 500 from
/// the BMC, as one restarting answers): the operation keeps following, showing the failure in
/// its progress, and a second update of the host is refused. Podium is killed (`kill -9`)
/// meanwhile and started again: the operation,
/// taken over, follows the task it recorded and never starts the update again. The emulator's
/// BIOS version rises once.
#[tokio::test]
async fn an_update_taken_over_after_kill_9_follows_its_task_and_flashes_once() {
    const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");
    let emulator = libvirt_bmc().await;
    let bmc = podium_tests::FaultProxy::start(&emulator.url()).await;
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    // A lease of 1 s: a dead process's operation is taken over soon.
    let options = ["--operation-lease", "1"];
    let server =
        podium_tests::ProcessServer::start_logging(BIN, data.path(), url, "info", &options).await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    let task = "/redfish/v1/TaskService/Tasks/42";
    *bmc.failing_path.lock().unwrap() = Some(task.to_owned());

    let system = format!("/redfish/v1/Systems/{TEST_DOMAIN}");
    let started = admin
        .post(
            &format!("/v1/hosts/{}/firmware/update", host.id),
            json!({"image_url": "http://127.0.0.1:9/bios.bin", "targets": [system]}),
        )
        .await;
    assert_eq!(started.status, StatusCode::ACCEPTED, "{}", started.text);
    let id = started.body["id"].as_str().unwrap().to_owned();
    let following = podium_tests::eventually(
        std::time::Duration::from_secs(60),
        "the task's reads failing",
        || async {
            let op = admin.get(&format!("/v1/operations/{id}")).await.body;
            op["progress"]["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("wedged"))
                .then_some(op)
        },
    )
    .await;
    assert_eq!(following["status"], "running", "{following}");
    assert_eq!(following["progress"]["task"], task, "{following}");
    // A second update of the host while this one runs (a request sent twice) is refused.
    let again = admin
        .post(
            &format!("/v1/hosts/{}/firmware/update", host.id),
            json!({"image_url": "http://127.0.0.1:9/bios.bin", "targets": [system]}),
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);
    assert_eq!(again.code(), "firmware_update_pending", "{}", again.text);
    assert_eq!(bmc_view(&emulator, "").await["BiosVersion"], "1.1.0");

    server.kill9().await;
    *bmc.failing_path.lock().unwrap() = None;
    let restarted =
        podium_tests::ProcessServer::start_logging(BIN, data.path(), url, "info", &options).await;
    let admin = restarted.admin();
    let op = wait_succeeded(&admin, &id).await;
    assert!(op["attempts"].as_i64() >= Some(2), "taken over: {op}");
    assert_eq!(op["progress"]["state"], "completed", "{op}");
    assert_eq!(
        op["result"]["components"][0]["version_before"], "1.0.0",
        "{op}"
    );
    assert_eq!(op["result"]["components"][0]["version"], "1.1.0", "{op}");
    assert_eq!(
        bmc_view(&emulator, "").await["BiosVersion"],
        "1.1.0",
        "the update reached the BMC once"
    );
}
