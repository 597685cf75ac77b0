//! The host lifecycle against the emulator (`docs/host-lifecycle.md`): new hosts register and
//! are inspected through the driver (DHCP-less preprovisioning prepared first), failures leave
//! the host in `error` with its type until it recovers, and maintenance holds off everything but
//! the admin.

use std::time::Duration;

use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig};
use podium_tests::{Client, FaultProxy, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::pod_managers::{PASSWORD, USER, bmc, eventually, items, string, wait_succeeded};

/// A server whose operations give up after two quick tries.
async fn server() -> TestServer {
    TestServer::start_with(|c| {
        c.probe_interval = Duration::from_millis(300);
        c.sync_interval = Duration::from_secs(1);
        c.operations.retry_base = Duration::from_millis(100);
        c.operations.max_attempts = 2;
    })
    .await
}

async fn host(admin: &Client, id: &str) -> Value {
    let reply = admin.get(&format!("/v1/hosts/{id}")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.body
}

/// Waits until the host `id` is in `state`; returns it.
async fn wait_state(admin: &Client, id: &str, state: &str) -> Value {
    eventually(&format!("host {id} {state}"), async || {
        let h = host(admin, id).await;
        if h["state"] == state {
            Ok(h)
        } else {
            Err(h.to_string())
        }
    })
    .await
}

/// Waits until the operation `id` ended; returns it, however it ended.
async fn wait_ended(admin: &Client, id: &str) -> Value {
    eventually(&format!("operation {id} ended"), async || {
        let op = admin.get(&format!("/v1/operations/{id}")).await.body;
        if op["status"] == "succeeded" || op["status"] == "failed" {
            Ok(op)
        } else {
            Err(op.to_string())
        }
    })
    .await
}

/// The host's operations, oldest first.
async fn history(admin: &Client, id: &str) -> Vec<Value> {
    let mut ops = items(&admin.get(&format!("/v1/operations?host={id}")).await);
    ops.reverse();
    ops
}

/// The systems of a pod manager once all are `available`.
async fn available(admin: &Client, pm: &str, n: usize) -> Vec<Value> {
    eventually(&format!("{n} hosts available"), async || {
        let hosts: Vec<Value> = items(&admin.get(&format!("/v1/hosts?pod_manager={pm}")).await)
            .into_iter()
            .filter(|h| h["kind"] == "system")
            .collect();
        if hosts.len() == n && hosts.iter().all(|h| h["state"] == "available") {
            Ok(hosts)
        } else {
            Err(format!("{hosts:?}"))
        }
    })
    .await
}

/// Asks for an inspection of host `id`; the operation's id.
pub(crate) async fn inspect(admin: &Client, id: &str) -> String {
    let reply = admin
        .post(&format!("/v1/hosts/{id}/inspect"), json!({}))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    assert_eq!(reply.body["kind"], "inspect", "{}", reply.text);
    string(&reply.body, "id")
}

#[tokio::test]
async fn new_hosts_register_then_are_inspected_with_their_dhcpless_address_prepared_first() {
    let server = server().await;
    let admin = server.admin();
    let emulator = bmc(2).await;
    // The site is unreachable until its DHCP-less pool exists: the first sync finds it.
    let proxy = FaultProxy::start(&emulator.url()).await;
    proxy
        .failing
        .store(true, std::sync::atomic::Ordering::Release);
    let pm = admin.created("/v1/pod_managers",
            json!({"name": "site", "url": proxy.url(), "auth": {"username": USER, "password": PASSWORD}})).await;
    let pm = string(&pm.body, "uuid");
    let pool = admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prov", "ranges": [{"start": "10.80.0.10", "end": "10.80.0.20"}],
                   "prefix": 24, "gateway": "10.80.0.1", "dns_servers": ["10.80.0.2"],
                   "pod_manager": pm, "plugin": {"name": "ipam-dhcpless"}}),
        )
        .await;
    let pool = string(&pool.body, "id");
    proxy
        .failing
        .store(false, std::sync::atomic::Ordering::Release);

    let hosts = available(&admin, &pm, 2).await;
    let mut addresses = Vec::new();
    for h in &hosts {
        let id = string(h, "id");
        assert!(h["error"].is_null() && h["maintenance"].is_null(), "{h}");
        let ops = history(&admin, &id).await;
        let kinds: Vec<_> = ops.iter().map(|o| (&o["kind"], &o["status"])).collect();
        assert_eq!(
            kinds,
            [
                (&json!("register"), &json!("succeeded")),
                (&json!("inspect"), &json!("succeeded"))
            ],
            "{ops:?}"
        );
        let (register, inspected) = (&ops[0], &ops[1]);
        // The registration queued the inspection when it had checked the BMC.
        assert!(
            string(register, "started_at") <= string(inspected, "created_at")
                && string(inspected, "created_at") <= string(register, "finished_at"),
            "registration queues the inspection: {ops:?}"
        );
        assert_eq!(register["result"]["power_state"], "off", "{register}");
        // The inventory, read out of band.
        let system = emulated(h);
        assert_eq!(
            inspected["result"]["inventory"]["nics"],
            json!(system.nics),
            "{inspected}"
        );
        // The preprovisioning address, held in the DHCP-less pool by the host.
        let prepared = &inspected["result"]["preprovisioning"];
        let address = string(&prepared["addresses"][0], "address");
        assert_eq!(prepared["addresses"][0]["pool"], "prov", "{prepared}");
        let held = items(&admin.get(&format!("/v1/ip_pools/{pool}/claims")).await);
        assert!(
            held.iter()
                .any(|c| c["owner"] == format!("host:{id}") && c["address"] == address.as_str()),
            "{address} held by host:{id}: {held:?}"
        );
        addresses.push(address);
        // Its config drive: the same bytes a drive made now for the same phase has.
        let drive = admin
            .created(
                &format!("/v1/hosts/{id}/config_drive"),
                json!({"phase": "preprovisioning"}),
            )
            .await;
        assert_eq!(
            drive.body["sha256"], prepared["config_drive"]["sha256"],
            "{prepared}"
        );
        let url = string(&drive.body, "url");
        let (status, _, image) = admin.get_bytes(&url[url.find("/v1/").unwrap()..]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            hex::encode(Sha256::digest(&image)),
            string(&prepared["config_drive"], "sha256")
        );
    }
    addresses.sort();
    addresses.dedup();
    assert_eq!(addresses.len(), 2, "one address per host: {addresses:?}");

    // Inspected again: the same address.
    let id = string(&hosts[0], "id");
    let before = string(
        &history(&admin, &id).await[1]["result"]["preprovisioning"]["addresses"][0],
        "address",
    );
    let again = wait_succeeded(&admin, &inspect(&admin, &id).await).await;
    assert_eq!(
        again["result"]["preprovisioning"]["addresses"][0]["address"],
        before.as_str(),
        "{again}"
    );
    assert_eq!(host(&admin, &id).await["state"], "available");
}

/// The emulated system a host stands for.
fn emulated(host: &Value) -> FakeSystem {
    let uuid = string(host, "uuid");
    (1..=8)
        .map(FakeSystem::numbered)
        .find(|s| s.uuid == uuid)
        .unwrap_or_else(|| panic!("no emulated system {uuid}"))
}

#[tokio::test]
async fn failures_leave_the_host_in_error_with_their_type_until_it_recovers() {
    let server = server().await;
    let admin = server.admin();
    let emulator = bmc(1).await;
    let proxy = FaultProxy::start(&emulator.url()).await;
    let pm = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "site", "url": proxy.url(), "auth": {"username": USER, "password": PASSWORD}}),
        )
        .await;
    let pm = string(&pm.body, "uuid");
    let id = string(&available(&admin, &pm, 1).await[0], "id");
    let wedged = |on: bool| {
        proxy
            .failing
            .store(on, std::sync::atomic::Ordering::Release)
    };

    // An inspection that cannot reach the BMC.
    wedged(true);
    let failed = wait_ended(&admin, &inspect(&admin, &id).await).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let h = wait_state(&admin, &id, "error").await;
    assert_eq!(h["error"]["type"], "inspection", "{h}");
    assert_eq!(h["error"]["state"], "inspecting", "{h}");
    assert!(
        string(&h["error"], "message").contains("gave up after 2 attempts"),
        "{h}"
    );
    // A power action on a host in error that fails too keeps the error it has.
    let op = wait_ended(&admin, admin.power(&id, "on").await.as_ref()).await;
    assert_eq!(op["status"], "failed", "{op}");
    assert_eq!(host(&admin, &id).await["error"]["type"], "inspection");
    // Claimed hosts only: a bound claim is not inspected (see the maintenance test); this one
    // recovers by inspecting again once the BMC answers.
    wedged(false);
    wait_succeeded(&admin, &inspect(&admin, &id).await).await;
    let h = wait_state(&admin, &id, "available").await;
    assert!(h["error"].is_null(), "{h}");

    // A power action that fails for good: a power management error.
    wedged(true);
    let op = wait_ended(&admin, admin.power(&id, "on").await.as_ref()).await;
    assert_eq!(op["status"], "failed", "{op}");
    let h = wait_state(&admin, &id, "error").await;
    assert_eq!(h["error"]["type"], "power_management", "{h}");
    assert_eq!(h["error"]["state"], "available", "{h}");
    // The BMC obeys again: the next power action ends the error.
    wedged(false);
    let op = wait_succeeded(&admin, admin.power(&id, "on").await.as_ref()).await;
    assert_eq!(op["result"]["power_state"], "on", "{op}");
    let h = host(&admin, &id).await;
    assert_eq!(h["state"], "available", "{h}");
    assert!(h["error"].is_null(), "{h}");
}

#[tokio::test]
async fn new_bmc_credentials_register_the_host_again_and_a_refusal_is_a_registration_error() {
    let server = server().await;
    let admin = server.admin();
    let site = bmc(1).await;
    let pm = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "site", "url": site.url(), "auth": {"username": USER, "password": PASSWORD}}),
        )
        .await;
    let pm = string(&pm.body, "uuid");
    let site_host = string(&available(&admin, &pm, 1).await[0], "id");
    let mut own = SushyConfig::with_systems(0);
    own.systems = vec![FakeSystem::numbered(5)];
    own.basic_auth = Some(("ipmi".into(), "right-bmc-secret".into()));
    let own = Sushy::start(own).await.unwrap();
    let created = admin.created("/v1/hosts",
            json!({"pod_manager": pm, "bmc": {"url": own.url(), "auth": {"username": "ipmi", "password": "right-bmc-secret"}}})).await;
    // Registering when created (the worker may have moved it on by the time it answers).
    assert!(
        ["registering", "inspecting", "available"]
            .contains(&created.body["state"].as_str().unwrap()),
        "{}",
        created.text
    );
    let id = string(&created.body, "id");
    wait_state(&admin, &id, "available").await;

    let wrong = admin
        .patch(
            &format!("/v1/hosts/{id}"),
            json!({"bmc": {"auth": {"username": "ipmi", "password": "wrong-bmc-secret"}}}),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::OK, "{}", wrong.text);
    assert!(
        ["registering", "error"].contains(&wrong.body["state"].as_str().unwrap()),
        "{}",
        wrong.text
    );
    let h = wait_state(&admin, &id, "error").await;
    assert_eq!(h["error"]["type"], "registration", "{h}");
    assert!(
        string(&h["error"], "message").contains("unauthorized"),
        "{h}"
    );
    let all = admin.get(&format!("/v1/operations?host={id}")).await.text;
    for text in [h.to_string(), all] {
        assert!(!text.contains("wrong-bmc-secret") && !text.contains("right-bmc-secret"));
    }
    let right = admin
        .patch(
            &format!("/v1/hosts/{id}"),
            json!({"bmc": {"auth": {"username": "ipmi", "password": "right-bmc-secret"}}}),
        )
        .await;
    assert_eq!(right.status, StatusCode::OK, "{}", right.text);
    let h = wait_state(&admin, &id, "available").await;
    assert!(h["error"].is_null(), "{h}");

    // A host reached through its pod manager's endpoint has no credentials of its own.
    let refused = admin
        .patch(
            &format!("/v1/hosts/{site_host}"),
            json!({"bmc": {"auth": {"username": "x", "password": "y"}}}),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.text
    );
    assert_eq!(refused.field(), "bmc");
}

#[tokio::test]
async fn maintenance_holds_claims_and_queued_work_but_not_the_admin() {
    let server = server().await;
    let admin = server.admin();
    let emulator = bmc(1).await;
    let pm = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "site", "url": emulator.url(), "auth": {"username": USER, "password": PASSWORD}}),
        )
        .await;
    let pm = string(&pm.body, "uuid");
    let id = string(&available(&admin, &pm, 1).await[0], "id");
    let tenant = admin.post("/v1/tenants", json!({"name": "t1"})).await;
    let tenant_id = string(&tenant.body, "id");
    admin
        .post(
            "/v1/grants",
            json!({"tenant": tenant_id, "pod_manager": pm}),
        )
        .await;
    let token = admin
        .post(&format!("/v1/tenants/{tenant_id}/tokens"), json!({}))
        .await;
    let tenant = server.client(Some(&string(&token.body, "token")));
    let maintenance = format!("/v1/hosts/{id}/maintenance");

    let long = admin
        .put(&maintenance, json!({"reason": "x".repeat(300)}))
        .await;
    assert_eq!(
        long.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        long.text
    );
    assert_eq!(long.field(), "reason");
    let on = admin
        .put(&maintenance, json!({"reason": "replacing a DIMM"}))
        .await;
    assert_eq!(on.status, StatusCode::OK, "{}", on.text);
    assert_eq!(on.body["state"], "maintenance", "{}", on.text);
    assert_eq!(on.body["maintenance"]["reason"], "replacing a DIMM");
    assert_eq!(on.body["maintenance"]["state"], "available");
    let listed = items(&admin.get("/v1/hosts?state=maintenance").await);
    assert_eq!(listed.len(), 1, "{listed:?}");

    // No claim binds to it.
    let claim = tenant.created("/v1/claims",
            json!({"pod_manager": pm, "image": {"url": "http://127.0.0.1:9/os.iso"}, "online": false})).await;
    assert_eq!(claim.body["state"], "pending", "{}", claim.text);
    let claim = string(&claim.body, "id");
    // The admin acts on it; an inspection is refused until the maintenance ends.
    wait_succeeded(&admin, admin.power(&id, "on").await.as_ref()).await;
    let busy = admin
        .post(&format!("/v1/hosts/{id}/inspect"), json!({}))
        .await;
    assert_eq!(busy.status, StatusCode::CONFLICT, "{}", busy.text);
    assert!(
        busy.message().contains("is maintenance") && busy.message().contains("available, error"),
        "{}",
        busy.text
    );

    // Its end: the claim binds.
    let off = admin.delete(&maintenance).await;
    assert_eq!(off.status, StatusCode::OK, "{}", off.text);
    assert_eq!(off.body["state"], "available", "{}", off.text);
    assert!(off.body["maintenance"].is_null(), "{}", off.text);
    eventually("the claim binds", async || {
        let c = tenant.get(&format!("/v1/claims/{claim}")).await.body;
        if c["state"] == "bound" {
            Ok(())
        } else {
            Err(c.to_string())
        }
    })
    .await;

    // Released in maintenance: the deprovisioning waits for its end.
    admin.put(&maintenance, json!({})).await;
    let released = tenant.delete(&format!("/v1/claims/{claim}")).await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    let deprovision = eventually("deprovision queued", async || {
        history(&admin, &id)
            .await
            .into_iter()
            .find(|o| o["kind"] == "deprovision")
            .ok_or_else(|| "none yet".to_owned())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let waiting = admin
        .get(&format!("/v1/operations/{}", string(&deprovision, "id")))
        .await
        .body;
    assert_eq!(waiting["status"], "queued", "{waiting}");
    let h = host(&admin, &id).await;
    assert_eq!(h["maintenance"]["state"], "deprovisioning", "{h}");
    admin.delete(&maintenance).await;
    wait_succeeded(&admin, &string(&deprovision, "id")).await;
    let h = wait_state(&admin, &id, "available").await;
    assert_eq!(h["power_state"], "off", "{h}");
    assert_eq!(
        tenant.get(&format!("/v1/claims/{claim}")).await.status,
        StatusCode::NOT_FOUND
    );
}
