//! `/v1/hosts` and `/v1/operations` against a real BMC (sushy-tools): what a sync finds, power,
//! boot override and virtual media reaching the emulator, hosts that vanish, and labels.

use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig};
use podium_tests::{Client, ImageServer, Reply, TestServer};
use podium_types::views::{HostView, List, OperationView};
use podium_types::{OperationResult, PowerState, Timestamp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::pod_managers::{
    PASSWORD, USER, bmc, create, delete, eventually, fast_server, items, minimal, patch, q, string,
    wait_succeeded,
};

/// A server, one emulator and its pod manager, whose systems are all synced as hosts.
struct Pod {
    _server: TestServer,
    bmc: Sushy,
    admin: Client,
    uuid: String,
}

async fn pod(systems: u32) -> Pod {
    let server = fast_server().await;
    let bmc = bmc(systems).await;
    let admin = server.admin();
    let uuid = string(&create(&admin, minimal("pm-hosts", &bmc)).await, "uuid");
    wait_systems(&admin, &uuid, systems as usize).await;
    Pod {
        _server: server,
        bmc,
        admin,
        uuid,
    }
}

/// The hosts listed by `GET /v1/hosts{query}`.
async fn listed(admin: &Client, query: &str) -> Vec<Value> {
    items(&admin.get(&format!("/v1/hosts{query}")).await)
}

/// The hosts of kind `system` of a pod manager.
async fn systems(admin: &Client, pod_manager: &str) -> Vec<Value> {
    listed(admin, &format!("?pod_manager={pod_manager}"))
        .await
        .into_iter()
        .filter(|h| h["kind"] == "system")
        .collect()
}

/// Waits until the pod manager has `n` hosts of kind `system`, registered and inspected
/// (`available`); returns them.
async fn wait_systems(admin: &Client, pod_manager: &str, n: usize) -> Vec<Value> {
    eventually(
        &format!("{n} systems synced and inspected for {pod_manager}"),
        async || {
            let found = systems(admin, pod_manager).await;
            if found.len() == n && found.iter().all(|h| h["state"] == "available") {
                Ok(found)
            } else {
                Err(format!("{} systems: {found:?}", found.len()))
            }
        },
    )
    .await
}

/// The host whose `uuid` is the system's.
fn by_uuid<'a>(hosts: &'a [Value], uuid: &str) -> &'a Value {
    hosts
        .iter()
        .find(|h| h["uuid"] == uuid)
        .unwrap_or_else(|| panic!("no host with uuid {uuid} in {hosts:?}"))
}

fn ids(hosts: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = hosts.iter().map(|h| string(h, "id")).collect();
    ids.sort();
    ids
}

fn macs(host: &Value) -> Vec<String> {
    host["nics"]
        .as_array()
        .unwrap_or_else(|| panic!("no nics in {host}"))
        .iter()
        .map(|nic| string(nic, "mac"))
        .collect()
}

/// Waits until `GET /v1/hosts/{id}` satisfies `ok`; returns the host.
pub(crate) async fn wait_host(
    admin: &Client,
    id: &str,
    what: &str,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    let path = format!("/v1/hosts/{id}");
    eventually(&format!("host {id}: {what}"), async || {
        let reply = admin.get(&path).await;
        if reply.status == StatusCode::OK && ok(&reply.body) {
            Ok(reply.body)
        } else {
            Err(format!("{}: {}", reply.status, reply.text))
        }
    })
    .await
}

/// Checks a `202` action answer; returns the operation's id.
fn accepted(reply: &Reply) -> String {
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    assert!(
        matches!(
            reply.body["status"].as_str(),
            Some("queued" | "running" | "succeeded")
        ),
        "{}",
        reply.text
    );
    string(&reply.body, "id")
}

/// POSTs a sync of the pod manager and waits until it succeeded.
async fn sync(admin: &Client, pod_manager: &str) -> Value {
    let reply = admin
        .post(&format!("/v1/pod_managers/{pod_manager}/sync"), json!({}))
        .await;
    let id = accepted(&reply);
    assert_eq!(reply.body["kind"], "sync", "{}", reply.text);
    let operation = wait_succeeded(admin, &id).await;
    assert_eq!(operation["kind"], "sync", "{operation}");
    assert_eq!(operation["pod_manager"], pod_manager, "{operation}");
    operation
}

#[tokio::test]
async fn a_sync_finds_every_system_as_a_host_of_its_pod_manager() {
    let server = fast_server().await;
    let admin = server.admin();
    let three = bmc(3).await;
    let other_system = FakeSystem::numbered(7);
    let other = Sushy::start(SushyConfig {
        systems: vec![other_system.clone()],
        basic_auth: Some((USER.into(), PASSWORD.into())),
        ..SushyConfig::default()
    })
    .await
    .expect("a second emulator");
    let pm = string(&create(&admin, minimal("pm-three", &three)).await, "uuid");
    let pm_other = string(&create(&admin, minimal("pm-other", &other)).await, "uuid");

    let hosts = wait_systems(&admin, &pm, 3).await;
    for n in 1..=3 {
        let expected = FakeSystem::numbered(n);
        let host = by_uuid(&hosts, &expected.uuid);
        assert_eq!(host["pod_manager"], pm.as_str(), "{host}");
        assert_eq!(host["name"], expected.name.as_str(), "{host}");
        assert_eq!(host["kind"], "system", "{host}");
        assert_eq!(host["power_state"], "off", "{host}");
        assert_eq!(host["state"], "available", "{host}");
        assert_eq!(macs(host), expected.nics, "{host}");
        assert!(string(host, "system_id").contains(&expected.uuid), "{host}");

        let id = string(host, "id");
        let shown = admin.get(&format!("/v1/hosts/{id}")).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
        for key in [
            "id",
            "pod_manager",
            "system_id",
            "kind",
            "name",
            "uuid",
            "state",
            "nics",
            "created_at",
        ] {
            assert_eq!(shown.body[key], host[key], "{key}: {}", shown.text);
        }
        assert_eq!(shown.body["power_state"], "off", "{}", shown.text);
    }

    // Each pod manager's filter shows its own hosts only; no filter shows both.
    let pm_hosts = listed(&admin, &format!("?pod_manager={pm}")).await;
    assert!(
        pm_hosts.iter().all(|h| h["pod_manager"] == pm.as_str()),
        "{pm_hosts:?}"
    );
    assert!(
        pm_hosts
            .iter()
            .all(|h| h["uuid"] != other_system.uuid.as_str()),
        "{pm_hosts:?}"
    );
    let other_hosts = wait_systems(&admin, &pm_other, 1).await;
    assert_eq!(other_hosts[0]["uuid"], other_system.uuid.as_str());
    assert_eq!(macs(&other_hosts[0]), other_system.nics);
    assert!(
        listed(&admin, &format!("?pod_manager={pm_other}"))
            .await
            .iter()
            .all(|h| h["pod_manager"] == pm_other.as_str()),
    );
    let all = listed(&admin, "").await;
    for uuid in [
        FakeSystem::numbered(1).uuid,
        FakeSystem::numbered(3).uuid,
        other_system.uuid,
    ] {
        by_uuid(&all, &uuid);
    }
}

#[tokio::test]
async fn syncing_again_keeps_the_same_hosts() {
    let pod = pod(2).await;
    let admin = &pod.admin;
    let before = listed(admin, &format!("?pod_manager={}", pod.uuid)).await;

    let operation = sync(admin, &pod.uuid).await;
    let after = listed(admin, &format!("?pod_manager={}", pod.uuid)).await;
    assert_eq!(ids(&after), ids(&before), "{after:?}\nwas {before:?}");
    assert_eq!(after.len(), before.len());
    sync(admin, &pod.uuid).await;
    let again = listed(admin, &format!("?pod_manager={}", pod.uuid)).await;
    assert_eq!(ids(&again), ids(&before), "{again:?}\nwas {before:?}");
    for host in &again {
        assert_eq!(host["state"], "available", "{host}");
    }

    let operations = items(
        &admin
            .get(&format!("/v1/operations?pod_manager={}", pod.uuid))
            .await,
    );
    assert!(
        operations.iter().any(|o| o["id"] == operation["id"]),
        "{operations:?}"
    );
}

#[tokio::test]
async fn power_on_reaches_the_bmc_and_shows_on_the_host() {
    let pod = pod(2).await;
    let admin = &pod.admin;
    let hosts = systems(admin, &pod.uuid).await;
    let one = FakeSystem::numbered(1);
    let two = FakeSystem::numbered(2);
    let id = string(by_uuid(&hosts, &one.uuid), "id");
    let other_id = string(by_uuid(&hosts, &two.uuid), "id");

    let reply = admin
        .post(&format!("/v1/hosts/{id}/power"), json!({"action": "on"}))
        .await;
    let operation_id = accepted(&reply);
    let operation = wait_succeeded(admin, &operation_id).await;
    assert_eq!(operation["kind"], "power", "{operation}");
    assert_eq!(operation["host"], id.as_str(), "{operation}");
    assert_eq!(operation["pod_manager"], pod.uuid.as_str(), "{operation}");
    assert_eq!(operation["request"]["action"], "on", "{operation}");

    let system = pod
        .bmc
        .get_json(&format!("/redfish/v1/Systems/{}", one.uuid))
        .await
        .unwrap();
    assert_eq!(system["PowerState"], "On", "the emulator's own view");
    let untouched = pod
        .bmc
        .get_json(&format!("/redfish/v1/Systems/{}", two.uuid))
        .await
        .unwrap();
    assert_eq!(untouched["PowerState"], "Off");

    wait_host(admin, &id, "power_state on", |h| h["power_state"] == "on").await;
    let on = listed(admin, "?power_state=on").await;
    assert!(on.iter().any(|h| h["id"] == id.as_str()), "{on:?}");
    assert!(on.iter().all(|h| h["id"] != other_id.as_str()), "{on:?}");
    let off = listed(admin, "?power_state=off").await;
    assert!(off.iter().all(|h| h["id"] != id.as_str()), "{off:?}");
    assert!(off.iter().any(|h| h["id"] == other_id.as_str()), "{off:?}");
    let operations = items(&admin.get(&format!("/v1/operations?host={id}")).await);
    assert!(
        operations.iter().any(|o| o["id"] == operation_id.as_str()),
        "{operations:?}"
    );

    let reply = admin
        .post(
            &format!("/v1/hosts/{id}/power"),
            json!({"action": "force_off"}),
        )
        .await;
    wait_succeeded(admin, &accepted(&reply)).await;
    let system = pod
        .bmc
        .get_json(&format!("/redfish/v1/Systems/{}", one.uuid))
        .await
        .unwrap();
    assert_eq!(system["PowerState"], "Off", "the emulator's own view");
    wait_host(admin, &id, "power_state off", |h| h["power_state"] == "off").await;
}

#[tokio::test]
async fn a_boot_override_is_written_to_the_bmc() {
    let pod = pod(1).await;
    let admin = &pod.admin;
    let one = FakeSystem::numbered(1);
    let id = string(by_uuid(&systems(admin, &pod.uuid).await, &one.uuid), "id");
    let path = format!("/redfish/v1/Systems/{}", one.uuid);
    let before = pod.bmc.get_json(&path).await.unwrap();
    assert_ne!(
        before["Boot"]["BootSourceOverrideTarget"], "Cd",
        "the emulator starts elsewhere"
    );

    let reply = admin
        .post(
            &format!("/v1/hosts/{id}/boot"),
            json!({"target": "cd", "persistence": "continuous"}),
        )
        .await;
    let operation = wait_succeeded(admin, &accepted(&reply)).await;
    assert_eq!(operation["kind"], "boot", "{operation}");
    assert_eq!(operation["host"], id.as_str(), "{operation}");
    assert_eq!(operation["request"]["target"], "cd", "{operation}");

    let system = pod.bmc.get_json(&path).await.unwrap();
    assert_eq!(system["Boot"]["BootSourceOverrideTarget"], "Cd", "{system}");
    assert_eq!(
        system["Boot"]["BootSourceOverrideEnabled"], "Continuous",
        "{system}"
    );

    sync(admin, &pod.uuid).await;
    let host = wait_host(admin, &id, "boot cd, continuous", |h| {
        h["boot"]["target"] == "cd" && h["boot"]["persistence"] == "continuous"
    })
    .await;
    assert_eq!(host["boot"]["target"], "cd");
}

/// The emulator's CD slot of a system, found from the system's `VirtualMedia` link.
pub(crate) async fn emulated_cd(bmc: &Sushy, uuid: &str) -> Value {
    let system = bmc
        .get_json(&format!("/redfish/v1/Systems/{uuid}"))
        .await
        .unwrap();
    let collection = system["VirtualMedia"]["@odata.id"]
        .as_str()
        .unwrap_or_else(|| panic!("no VirtualMedia link in {system}"));
    let media = bmc.get_json(collection).await.unwrap();
    for member in media["Members"].as_array().expect("Members") {
        let slot = bmc
            .get_json(member["@odata.id"].as_str().expect("@odata.id"))
            .await
            .unwrap();
        let takes_cd = slot["MediaTypes"]
            .as_array()
            .is_some_and(|types| types.iter().any(|t| t == "CD"));
        if takes_cd {
            return slot;
        }
    }
    panic!("no CD slot in {media}");
}

#[tokio::test]
async fn virtual_media_is_inserted_into_and_ejected_from_the_bmc() {
    let pod = pod(1).await;
    let admin = &pod.admin;
    let one = FakeSystem::numbered(1);
    let id = string(by_uuid(&systems(admin, &pod.uuid).await, &one.uuid), "id");
    let images = ImageServer::start(vec![0x42; 4096]).await;
    let image_url = images.url("/boot.iso");
    let before = emulated_cd(&pod.bmc, &one.uuid).await;
    assert_eq!(before["Inserted"], false, "{before}");

    let reply = admin
        .post(
            &format!("/v1/hosts/{id}/media"),
            json!({"action": "insert", "image_url": image_url}),
        )
        .await;
    let operation = wait_succeeded(admin, &accepted(&reply)).await;
    assert_eq!(operation["kind"], "media", "{operation}");
    assert_eq!(operation["host"], id.as_str(), "{operation}");
    let cd = emulated_cd(&pod.bmc, &one.uuid).await;
    assert_eq!(cd["Inserted"], true, "{cd}");
    assert_eq!(cd["Image"], image_url.as_str(), "{cd}");
    assert_eq!(
        cd["WriteProtected"], true,
        "write-protected by default: {cd}"
    );

    sync(admin, &pod.uuid).await;
    wait_host(admin, &id, "a slot with the image inserted", |h| {
        h["media_slots"].as_array().is_some_and(|slots| {
            slots
                .iter()
                .any(|s| s["inserted"] == true && s["image"] == image_url.as_str())
        })
    })
    .await;

    let reply = admin
        .post(&format!("/v1/hosts/{id}/media"), json!({"action": "eject"}))
        .await;
    wait_succeeded(admin, &accepted(&reply)).await;
    let cd = emulated_cd(&pod.bmc, &one.uuid).await;
    assert_eq!(cd["Inserted"], false, "{cd}");
}

#[tokio::test]
async fn actions_on_an_unknown_host_are_404_and_bad_actions_are_422() {
    let pod = pod(1).await;
    let admin = &pod.admin;
    let id = string(&systems(admin, &pod.uuid).await[0], "id");

    for (action, body, field) in [
        ("power", json!({"action": "explode"}), "action"),
        ("power", json!({}), "action"),
        (
            "boot",
            json!({"target": "tape", "persistence": "once"}),
            "target",
        ),
        ("media", json!({"action": "insert"}), "image_url"),
    ] {
        let reply = admin
            .post(&format!("/v1/hosts/{id}/{action}"), body.clone())
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{action} {body}: {}",
            reply.text
        );
        assert_eq!(reply.field(), field, "{action} {body}: {}", reply.text);
    }
    let operations: Vec<Value> = items(&admin.get(&format!("/v1/operations?host={id}")).await)
        .into_iter()
        .filter(|o| o["kind"] != "register" && o["kind"] != "inspect")
        .collect();
    assert!(operations.is_empty(), "refused actions ran: {operations:?}");
    let system = pod
        .bmc
        .get_json(&format!(
            "/redfish/v1/Systems/{}",
            FakeSystem::numbered(1).uuid
        ))
        .await
        .unwrap();
    assert_eq!(system["PowerState"], "Off");

    // A host id of the right shape that no longer exists.
    let reply = delete(admin, &format!("/v1/pod_managers/{}", pod.uuid)).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT, "{}", reply.text);
    let reply = admin
        .post(&format!("/v1/hosts/{id}/power"), json!({"action": "on"}))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
    let reply = admin
        .post(
            &format!("/v1/hosts/{id}/boot"),
            json!({"target": "pxe", "persistence": "once"}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
    let reply = admin.get(&format!("/v1/hosts/{id}")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
}

#[tokio::test]
async fn a_system_that_vanishes_is_missing_and_comes_back_when_it_reappears() {
    let pod = pod(2).await;
    let admin = &pod.admin;
    let one = FakeSystem::numbered(1);
    let two = FakeSystem::numbered(2);
    let hosts = systems(admin, &pod.uuid).await;
    let id_one = string(by_uuid(&hosts, &one.uuid), "id");
    let id_two = string(by_uuid(&hosts, &two.uuid), "id");
    let path = format!("/v1/pod_managers/{}", pod.uuid);

    // The emulator cannot drop a system live: restrict discovery to system 1 instead.
    let reply = patch(
        admin,
        &path,
        json!({"driver": {"name": "redfish", "config": {"system_ids": [one.uuid]}}}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(
        reply.body["driver"]["config"],
        json!({"system_ids": [one.uuid]}),
        "{}",
        reply.text
    );
    sync(admin, &pod.uuid).await;

    let gone = wait_host(admin, &id_two, "state missing", |h| h["state"] == "missing").await;
    assert_eq!(gone["uuid"], two.uuid.as_str(), "kept, not deleted: {gone}");
    let kept = admin.get(&format!("/v1/hosts/{id_one}")).await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.text);
    assert_eq!(kept.body["state"], "available", "{}", kept.text);
    let missing = listed(admin, "?state=missing").await;
    assert!(
        missing.iter().any(|h| h["id"] == id_two.as_str()),
        "{missing:?}"
    );
    assert!(
        missing.iter().all(|h| h["id"] != id_one.as_str()),
        "{missing:?}"
    );
    let available = listed(admin, "?state=available").await;
    assert!(
        available.iter().any(|h| h["id"] == id_one.as_str()),
        "{available:?}"
    );
    assert!(
        available.iter().all(|h| h["id"] != id_two.as_str()),
        "{available:?}"
    );

    // Discovery of every system again: the same host is available again.
    let reply = patch(admin, &path, json!({"driver": {"name": "redfish"}})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    sync(admin, &pod.uuid).await;
    wait_host(admin, &id_two, "available again", |h| {
        h["state"] == "available"
    })
    .await;
    let hosts = systems(admin, &pod.uuid).await;
    assert_eq!(ids(&hosts), {
        let mut both = vec![id_one, id_two];
        both.sort();
        both
    });
}

#[tokio::test]
async fn labels_are_replaced_shown_and_filtered_on() {
    let pod = pod(2).await;
    let admin = &pod.admin;
    let hosts = systems(admin, &pod.uuid).await;
    let id = string(by_uuid(&hosts, &FakeSystem::numbered(1).uuid), "id");
    let other = string(by_uuid(&hosts, &FakeSystem::numbered(2).uuid), "id");
    let path = format!("/v1/hosts/{id}");
    let found = async |query: &str| -> Vec<String> { ids(&listed(admin, query).await) };

    let reply = patch(admin, &path, json!({"labels": {"rack": "r1", "row": "a"}})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["labels"], json!({"rack": "r1", "row": "a"}));
    let shown = admin.get(&path).await;
    assert_eq!(
        shown.body["labels"],
        json!({"rack": "r1", "row": "a"}),
        "{}",
        shown.text
    );
    let unlabelled = admin.get(&format!("/v1/hosts/{other}")).await;
    assert_eq!(unlabelled.body["labels"], json!({}), "{}", unlabelled.text);

    let rack_r1 = format!("?label={}", q("rack=r1"));
    assert_eq!(found(&rack_r1).await, std::slice::from_ref(&id));
    // By name, exactly (what the CLI resolves a host's name with).
    let name = string(&admin.get(&path).await.body, "name");
    assert_eq!(
        found(&format!("?name={}", q(&name))).await,
        std::slice::from_ref(&id)
    );
    assert!(
        found(&format!("?name={}", q(&name[..name.len() - 1])))
            .await
            .is_empty()
    );
    assert!(found(&format!("?label={}", q("rack=r2"))).await.is_empty());
    assert_eq!(
        found(&format!("?label={}&label={}", q("rack=r1"), q("row=a"))).await,
        std::slice::from_ref(&id)
    );
    assert!(
        found(&format!("?label={}&label={}", q("rack=r1"), q("row=b")))
            .await
            .is_empty(),
        "every label must match"
    );

    // PATCH replaces the labels.
    let reply = patch(admin, &path, json!({"labels": {"row": "a"}})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["labels"], json!({"row": "a"}));
    assert!(found(&rack_r1).await.is_empty());

    for labels in [
        json!({"bad key!": "x"}),
        json!({"": "x"}),
        json!({"k".repeat(64): "x"}),
        json!({"rack": "v".repeat(64)}),
    ] {
        let reply = patch(admin, &path, json!({ "labels": labels })).await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{labels}: {}",
            reply.text
        );
        assert!(
            reply.field().starts_with("labels"),
            "{labels}: {}",
            reply.text
        );
    }
    let shown = admin.get(&path).await;
    assert_eq!(
        shown.body["labels"],
        json!({"row": "a"}),
        "unchanged: {}",
        shown.text
    );
}

/// A host with its own BMC (the Metal3 model) under a pod manager acting as a site: discovered
/// at that BMC, driven there, left alone by the site's own sync.
#[tokio::test]
async fn a_host_with_its_own_bmc_is_driven_at_that_bmc() {
    let server = fast_server().await;
    let admin = server.admin();
    let site = bmc(1).await;
    let pm = create(&admin, minimal("site", &site)).await;
    let uuid = pm["uuid"].as_str().unwrap().to_owned();
    let mut own = SushyConfig::with_systems(0);
    own.systems = vec![FakeSystem::numbered(42)];
    own.basic_auth = Some(("ipmi".into(), "own-bmc-secret".into()));
    let own = Sushy::start(own).await.unwrap();

    let body = serde_json::json!({
        "pod_manager": uuid,
        "bmc": {"url": own.url(), "auth": {"username": "ipmi", "password": "own-bmc-secret"}},
        "labels": {"rack": "r42"},
    });
    let created = admin.post("/v1/hosts", body).await;
    assert_eq!(
        created.status,
        reqwest::StatusCode::CREATED,
        "{}",
        created.text
    );
    assert!(!created.text.contains("own-bmc-secret"));
    let expected = FakeSystem::numbered(42);
    let host: HostView = created.view();
    assert_eq!(host.uuid.as_deref(), Some(expected.uuid.as_str()));
    assert_eq!(host.nics[0].mac, expected.nics[0]);
    let bmc = host.bmc.as_ref().expect("its own BMC");
    assert_eq!(bmc.url, own.url().trim_end_matches('/'));
    assert!(bmc.has_auth);
    assert_eq!(host.labels["rack"], "r42");
    assert!(
        matches!(
            host.state.as_str(),
            "registering" | "inspecting" | "available"
        ),
        "{}",
        created.text
    );
    let id = host.id.to_string();
    // Registered, then inspected, at its own BMC.
    wait_host(&admin, &id, "inspected", |h| h["state"] == "available").await;
    let history: List<OperationView> = admin.get(&format!("/v1/operations?host={id}")).await.view();
    let kinds: Vec<(&str, &str)> = history
        .items
        .iter()
        .map(|o| (o.kind.as_str(), o.status.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [("inspect", "succeeded"), ("register", "succeeded")],
        "{history:?}"
    );
    let Some(OperationResult::Inspect(inspected)) = &history.items[0].result else {
        panic!("an inspection's result: {:?}", history.items[0]);
    };
    assert_eq!(inspected.inventory.nics[0], expected.nics[0]);

    // Power goes to the host's own BMC.
    let op = admin
        .post(
            &format!("/v1/hosts/{id}/power"),
            serde_json::json!({"action": "on"}),
        )
        .await;
    assert_eq!(op.status, reqwest::StatusCode::ACCEPTED, "{}", op.text);
    podium_tests::eventually(
        std::time::Duration::from_secs(20),
        "power on at the own BMC",
        || async {
            let system = own
                .get_json(&format!("/redfish/v1/Systems/{}", expected.uuid))
                .await
                .ok()?;
            (system["PowerState"] == "On").then_some(())
        },
    )
    .await;

    // The site's sync neither marks it missing nor duplicates it.
    let synced = admin
        .post(
            &format!("/v1/pod_managers/{uuid}/sync"),
            serde_json::json!({}),
        )
        .await;
    assert_eq!(synced.status, reqwest::StatusCode::ACCEPTED);
    let op_id = synced.body["id"].as_str().unwrap().to_owned();
    podium_tests::eventually(std::time::Duration::from_secs(20), "the sync", || async {
        let op = admin.get(&format!("/v1/operations/{op_id}")).await;
        (op.body["status"] == "succeeded").then_some(())
    })
    .await;
    let host = admin.get(&format!("/v1/hosts/{id}")).await;
    assert_eq!(host.body["state"], "available", "{}", host.text);
    assert_eq!(host.body["power_state"], "on", "{}", host.text);

    // Registering the same system again is a conflict; an unknown system id names the field.
    let again = admin
        .post(
            "/v1/hosts",
            serde_json::json!({"pod_manager": uuid, "bmc": {"url": own.url(), "auth": {"username": "ipmi", "password": "own-bmc-secret"}}}),
        )
        .await;
    assert_eq!(
        again.status,
        reqwest::StatusCode::CONFLICT,
        "{}",
        again.text
    );
    let unknown = admin
        .post(
            "/v1/hosts",
            serde_json::json!({"pod_manager": uuid, "bmc": {"url": own.url(), "system_id": "nope", "auth": {"username": "ipmi", "password": "own-bmc-secret"}}}),
        )
        .await;
    assert_eq!(
        unknown.status,
        reqwest::StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        unknown.text
    );
    assert_eq!(unknown.field(), "bmc.system_id");
    let wrong = admin
        .post(
            "/v1/hosts",
            serde_json::json!({"pod_manager": uuid, "bmc": {"url": own.url(), "auth": {"username": "ipmi", "password": "wrong-one"}}}),
        )
        .await;
    // Wrong or missing credentials are the caller's mistake: a 422 naming them, not a 502.
    assert_eq!(
        wrong.status,
        reqwest::StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        wrong.text
    );
    assert_eq!(wrong.field(), "bmc.auth", "{}", wrong.text);
    assert!(
        wrong.message().contains("refused these credentials"),
        "{}",
        wrong.text
    );
    assert!(!wrong.text.contains("wrong-one"));
    let missing = admin
        .post(
            "/v1/hosts",
            serde_json::json!({"pod_manager": uuid, "bmc": {"url": own.url()}}),
        )
        .await;
    assert_eq!(
        missing.status,
        reqwest::StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        missing.text
    );
    assert_eq!(missing.field(), "bmc.auth", "{}", missing.text);
    assert!(
        missing.message().contains("none were given"),
        "{}",
        missing.text
    );

    // Another BMC reporting the same MAC (another system): refused, naming the host that has it.
    let mut clone = SushyConfig::with_systems(0);
    clone.systems = vec![FakeSystem {
        uuid: "27946b59-9e44-4fa7-8e91-0000000c10e5".into(),
        name: "clone".into(),
        ..FakeSystem::numbered(42)
    }];
    let clone = Sushy::start(clone).await.unwrap();
    let twin = admin
        .post(
            "/v1/hosts",
            serde_json::json!({"pod_manager": uuid, "bmc": {"url": clone.url()}}),
        )
        .await;
    assert_eq!(twin.status, reqwest::StatusCode::CONFLICT, "{}", twin.text);
    assert_eq!(twin.code(), "mac_in_use", "{}", twin.text);
    assert_eq!(twin.field(), "bmc.url", "{}", twin.text);
    let host_id = created.body["id"].as_str().unwrap();
    assert!(twin.message().contains(host_id), "{}", twin.text);
}

/// Hosts with their own BMC are read by the `refresh` task in turn, a share of them per run
/// (here one of three per second, for a sync interval of six seconds), not all at once by the
/// site's periodic sync; a read that finds nothing changed writes nothing but the time the BMC
/// answered, and a change made at the BMC behind Podium's back shows up at the host's turn.
#[tokio::test]
async fn hosts_with_their_own_bmc_are_read_in_turn_and_written_only_when_they_change() {
    let server = TestServer::start_with(|config| {
        config.probe_interval = std::time::Duration::from_millis(300);
        config.sync_interval = std::time::Duration::from_secs(6);
    })
    .await;
    let admin = server.admin();
    let site = bmc(1).await;
    let pm = create(&admin, minimal("site", &site)).await;
    let uuid = string(&pm, "uuid");
    let systems: Vec<FakeSystem> = (51..=53).map(FakeSystem::numbered).collect();
    let mut own = SushyConfig::with_systems(0);
    own.systems = systems.clone();
    let own = Sushy::start(own).await.unwrap();
    let mut ids = Vec::new();
    for system in &systems {
        let body =
            json!({"pod_manager": uuid, "bmc": {"url": own.url(), "system_id": system.uuid}});
        let created = admin.post("/v1/hosts", body).await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
        ids.push(string(&created.body, "id"));
    }
    for id in &ids {
        wait_host(&admin, id, "available", |h| h["state"] == "available").await;
    }
    // Every host read once after its inspection, then once more: the second reads found
    // nothing changed.
    let view = |h: Value| -> HostView { serde_json::from_value(h).expect("a HostView") };
    let read_after = async |before: &[HostView]| -> Vec<HostView> {
        let mut after = Vec::new();
        for (id, before) in ids.iter().zip(before) {
            let seen = before.last_seen_at;
            let read = wait_host(&admin, id, "read again by the refresh", |h| {
                view(h.clone()).last_seen_at > seen
            })
            .await;
            after.push(view(read));
        }
        after
    };
    let mut hosts = Vec::new();
    for id in &ids {
        hosts.push(
            admin
                .get(&format!("/v1/hosts/{id}"))
                .await
                .view::<HostView>(),
        );
    }
    let hosts = read_after(&hosts).await;
    // A change behind Podium's back: the first host powered on at its BMC.
    let reset = own
        .request(
            reqwest::Method::POST,
            &format!(
                "/redfish/v1/Systems/{}/Actions/ComputerSystem.Reset",
                systems[0].uuid
            ),
        )
        .json(&json!({"ResetType": "On"}))
        .send()
        .await
        .unwrap();
    assert!(reset.status().is_success(), "{}", reset.status());
    let again = read_after(&hosts).await;
    let first = view(
        wait_host(&admin, &ids[0], "read as powered on", |h| {
            h["power_state"] == "on"
        })
        .await,
    );
    assert!(first.updated_at > hosts[0].updated_at, "{first:?}");
    for (before, after) in hosts.iter().zip(&again).skip(1) {
        assert_eq!(after.power_state, PowerState::Off, "{after:?}");
        assert_eq!(
            after.updated_at, before.updated_at,
            "an unchanged host was written: {before:?} then {after:?}"
        );
    }
    // The turns are spread: no two hosts read in the same run.
    let at: Vec<Timestamp> = again.iter().map(|h| h.last_seen_at).collect();
    for (i, a) in at.iter().enumerate() {
        for b in &at[i + 1..] {
            let apart = (a.get() - b.get()).abs().as_seconds_f64();
            assert!(apart > 0.5, "two hosts read together: {again:?}");
        }
    }
    // No operation was queued for any of it: the refresh reads, it does not act.
    for id in &ids {
        let ops: List<OperationView> = admin.get(&format!("/v1/operations?host={id}")).await.view();
        let kinds: Vec<&str> = ops.items.iter().map(|o| o.kind.as_str()).collect();
        assert_eq!(kinds, ["inspect", "register"], "{ops:?}");
    }
    let tasks = admin.get("/v1/admin/tasks").await;
    let refresh = tasks.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "refresh")
        .cloned()
        .unwrap();
    assert_eq!(refresh["interval_seconds"], 1.0, "{refresh}");
    // A run reads its share (one) when a turn came, none between turns.
    assert!(
        [
            "1 hosts with their own BMC read, 0 did not answer",
            "0 hosts with their own BMC read, 0 did not answer"
        ]
        .contains(&refresh["last_result"].as_str().unwrap()),
        "{refresh}"
    );
    server.stop().await;
}
