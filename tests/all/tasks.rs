//! The background tasks of a server: listed with their status at `/v1/admin/tasks`, run now on
//! request, admin only.

use std::time::Duration;

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{TestServer, eventually};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn task(admin: &podium_tests::Client, name: &str) -> Value {
    let tasks = admin.get("/v1/admin/tasks").await;
    assert_eq!(tasks.status, StatusCode::OK, "{}", tasks.text);
    tasks.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no task {name} in {}", tasks.text))
}

#[tokio::test]
async fn background_tasks_show_their_status_and_run_when_asked() {
    let bmc = Sushy::start(SushyConfig::with_systems(1)).await.unwrap();
    // Intervals far longer than the test: whatever runs, runs because it was asked.
    let server = TestServer::start_with(|c| {
        c.probe_interval = Duration::from_secs(3600);
        c.sync_interval = Duration::from_secs(3600);
    })
    .await;
    let admin = server.admin();

    let tasks = admin.get("/v1/admin/tasks").await;
    let names: Vec<&str> = tasks.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "probe", "sync", "bind", "expiry", "leasing", "refresh", "delivery"
        ]
    );
    let probe = task(&admin, "probe").await;
    assert_eq!(probe["runs"], 0, "{probe}");
    assert_eq!(probe["interval_seconds"], 3600.0, "{probe}");
    assert!(probe["next_run_at"].is_string(), "{probe}");

    admin
        .created(
            "/v1/pod_managers",
            json!({"name": "site", "url": bmc.url()}),
        )
        .await;

    for (name, result, counts) in [
        ("probe", "1 pod managers probed", json!({"probed": 1})),
        (
            "sync",
            "1 pod managers synced",
            json!({"synced": 1, "failed": 0}),
        ),
        (
            "bind",
            "0 pending claims tried",
            json!({"tried": 0, "failed": 0, "decomposed": 0, "not_decomposed": 0}),
        ),
        (
            "expiry",
            "0 expired config drives, 0 timed-out Redfish sessions, 0 audit events and 0 change events past their retention forgotten",
            json!({"config_drives": 0, "sessions": 0, "audit_events": 0, "change_events": 0}),
        ),
        (
            "refresh",
            "0 hosts with their own BMC read, 0 did not answer",
            json!({"read": 0, "unreachable": 0}),
        ),
        (
            "delivery",
            "0 events delivered, 0 deliveries failed, 0 events given up on",
            json!({"delivered": 0, "retrying": 0, "dropped": 0}),
        ),
    ] {
        let before = task(&admin, name).await["runs"].as_u64().unwrap();
        let ran = admin
            .post(&format!("/v1/admin/tasks/{name}/run"), json!({}))
            .await;
        assert_eq!(ran.status, StatusCode::ACCEPTED, "{}", ran.text);
        assert_eq!(ran.body["name"], name);
        let after = eventually(Duration::from_secs(30), "the task ran", || async {
            let t = task(&admin, name).await;
            (t["runs"].as_u64().unwrap() > before && t["running"] == false).then_some(t)
        })
        .await;
        assert_eq!(after["last_result"], result, "{after}");
        assert_eq!(after["last_counts"], counts, "{after}");
        assert!(after["last_error"].is_null(), "{after}");
        assert!(after["last_duration_ms"].is_u64(), "{after}");
        assert!(after["last_started_at"].is_string(), "{after}");
    }
    // The leasing runs on its own, every half second and whenever work is queued.
    let leasing = task(&admin, "leasing").await;
    assert!(leasing["runs"].as_u64().unwrap() > 0, "{leasing}");

    let unknown = admin.post("/v1/admin/tasks/teleport/run", json!({})).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.text);
    assert!(unknown.message().contains("teleport"), "{}", unknown.text);

    // Tenants neither see nor run them.
    let tenant = admin.post("/v1/tenants", json!({"name": "acme"})).await;
    let id = tenant.body["id"].as_str().unwrap();
    let token = admin
        .post(&format!("/v1/tenants/{id}/tokens"), json!({}))
        .await;
    let tenant = server.client(token.body["token"].as_str());
    assert_eq!(
        tenant.get("/v1/admin/tasks").await.status,
        StatusCode::FORBIDDEN
    );
    let refused = tenant.post("/v1/admin/tasks/probe/run", json!({})).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    server.stop().await;
}
