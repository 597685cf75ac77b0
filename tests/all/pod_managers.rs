//! `/v1/pod_managers` against a real BMC (sushy-tools): creation with the defaults, the
//! background probe (online, wrong credentials, a stopped BMC, TLS), listing and paging, PATCH,
//! DELETE, and every way a body can be wrong.
//!
//! The helpers marked `pub(crate)` are shared with `hosts.rs`.

use std::time::{Duration, Instant};

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{Body, Client, Reply, TestServer};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

pub(crate) const USER: &str = "admin";
pub(crate) const PASSWORD: &str = "s3cret-bmc-password-5d2e";

/// How often [`eventually`] looks, and for how long.
const POLL_EVERY: Duration = Duration::from_millis(100);
const POLL_FOR: Duration = Duration::from_secs(20);

/// A server that probes every 300 ms and syncs every second, so status changes show quickly.
pub(crate) async fn fast_server() -> TestServer {
    TestServer::start_with(|config| {
        config.probe_interval = Duration::from_millis(300);
        config.sync_interval = Duration::from_secs(1);
    })
    .await
}

/// An emulator with `systems` systems behind basic auth ([`USER`], [`PASSWORD`]).
pub(crate) async fn bmc(systems: u32) -> Sushy {
    Sushy::start(SushyConfig {
        basic_auth: Some((USER.into(), PASSWORD.into())),
        ..SushyConfig::with_systems(systems)
    })
    .await
    .expect("sushy-tools starts")
}

/// Polls `check` every 100 ms until it returns `Ok`, for at most 20 s; panics with the last
/// `Err` (what was seen instead) after that.
pub(crate) async fn eventually<T>(
    what: &str,
    mut check: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + POLL_FOR;
    loop {
        match check().await {
            Ok(value) => return value,
            Err(last) => {
                assert!(
                    Instant::now() < deadline,
                    "{what}: not after {POLL_FOR:?}; last seen: {last}"
                );
            }
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

pub(crate) async fn patch(client: &Client, path: &str, body: Value) -> Reply {
    client
        .send(Method::PATCH, path, Some(Body::Json(body)))
        .await
}

pub(crate) async fn delete(client: &Client, path: &str) -> Reply {
    client.send(Method::DELETE, path, None).await
}

/// A query parameter value, percent-encoded.
pub(crate) fn q(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// The `items` of a list answer, which must be 200.
pub(crate) fn items(reply: &Reply) -> Vec<Value> {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.body["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items in {}", reply.text))
        .clone()
}

/// A string field of a JSON object, which must be there.
pub(crate) fn string(value: &Value, key: &str) -> String {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key:?} in {value}"))
        .to_owned()
}

/// The minimal body for `bmc`.
pub(crate) fn minimal(name: &str, bmc: &Sushy) -> Value {
    json!({
        "name": name,
        "url": bmc.url(),
        "auth": {"username": USER, "password": PASSWORD},
    })
}

/// POSTs `body`, which must be accepted; returns the view.
pub(crate) async fn create(admin: &Client, body: Value) -> Value {
    let reply = admin.created("/v1/pod_managers", body).await;
    reply.body
}

/// Waits until the pod manager has `status`; returns its view then.
pub(crate) async fn wait_status(admin: &Client, uuid: &str, status: &str) -> Value {
    let path = format!("/v1/pod_managers/{uuid}");
    eventually(&format!("pod manager {uuid} {status}"), async || {
        let reply = admin.get(&path).await;
        if reply.status == StatusCode::OK && reply.body["status"] == status {
            Ok(reply.body)
        } else {
            Err(format!("{}: {}", reply.status, reply.text))
        }
    })
    .await
}

/// Waits until the operation `id` finished; asserts it succeeded; returns it.
pub(crate) async fn wait_succeeded(admin: &Client, id: &str) -> Value {
    let path = format!("/v1/operations/{id}");
    let operation = eventually(&format!("operation {id} finished"), async || {
        let reply = admin.get(&path).await;
        let done = reply.status == StatusCode::OK
            && matches!(reply.body["status"].as_str(), Some("succeeded" | "failed"));
        if done {
            Ok(reply.body)
        } else {
            Err(format!("{}: {}", reply.status, reply.text))
        }
    })
    .await;
    assert_eq!(operation["status"], "succeeded", "{operation}");
    assert!(operation["error"].is_null(), "{operation}");
    assert!(operation["finished_at"].is_string(), "{operation}");
    operation
}

/// The pod managers listed by `GET /v1/pod_managers{query}`.
async fn listed(admin: &Client, query: &str) -> Vec<Value> {
    items(&admin.get(&format!("/v1/pod_managers{query}")).await)
}

fn names(items: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = items.iter().map(|p| string(p, "name")).collect();
    names.sort();
    names
}

fn is_sha256(value: &Value) -> bool {
    value
        .as_str()
        .is_some_and(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The statuses of a pod manager's history, newest first, with runs of the same status
/// collapsed into one.
async fn history(admin: &Client, uuid: &str) -> (Vec<String>, Reply) {
    let reply = admin
        .get(&format!("/v1/pod_managers/{uuid}/status_history"))
        .await;
    let mut statuses: Vec<String> = Vec::new();
    for entry in items(&reply) {
        let status = string(&entry, "status");
        assert!(entry["at"].is_string(), "{entry}");
        if statuses.last() != Some(&status) {
            statuses.push(status);
        }
    }
    (statuses, reply)
}

#[tokio::test]
async fn the_minimal_body_creates_a_pod_manager_that_goes_online_with_the_defaults() {
    let server = fast_server().await;
    let admin = server.admin();
    let bmc = bmc(3).await;

    let created = admin
        .created("/v1/pod_managers", minimal("pm-1", &bmc))
        .await;
    assert!(
        !created.text.contains(PASSWORD),
        "the password is echoed: {}",
        created.text
    );
    let view = &created.body;
    let uuid = string(view, "uuid");
    assert!(
        matches!(view["status"].as_str(), Some("unknown" | "online")),
        "{view}"
    );
    assert_eq!(view["name"], "pm-1");
    assert_eq!(
        string(view, "url").trim_end_matches('/'),
        bmc.url(),
        "{view}"
    );
    assert_eq!(view["bookmark_link"], format!("/v1/pod_managers/{uuid}"));
    assert_eq!(view["has_auth"], true, "{view}");
    assert!(view.get("auth").is_none_or(Value::is_null), "{view}");
    assert_eq!(view["description"], "", "{view}");
    assert_eq!(view["location"], "", "{view}");
    assert_eq!(
        view["tls"],
        json!({"verify": true, "ca_bundle": false, "pinned_sha256": null})
    );
    assert_eq!(view["network_config_owner"], "admin", "{view}");
    assert_eq!(view["driver"]["name"], "redfish", "{view}");
    assert!(is_sha256(&view["driver"]["sha256"]), "{view}");
    assert_eq!(view["ipam"]["name"], "ipam-static", "{view}");
    assert!(is_sha256(&view["ipam"]["sha256"]), "{view}");
    // No renderer was bound: the bundled one renders, and the view says which and that it is
    // the default.
    assert_eq!(view["renderer"]["name"], "render-openstack", "{view}");
    assert!(is_sha256(&view["renderer"]["sha256"]), "{view}");
    assert_eq!(view["renderer_default"], true, "{view}");
    assert!(view["created_at"].is_string(), "{view}");
    assert!(view["updated_at"].is_string(), "{view}");

    // The default driver is the bundled redfish plugin, pinned by its digest.
    let plugins = items(&admin.get("/v1/plugins").await);
    let bundled_renderer = plugins
        .iter()
        .find(|p| p["name"] == "render-openstack")
        .expect("the bundled renderer");
    assert_eq!(view["renderer"]["sha256"], bundled_renderer["sha256"]);
    // Bound by the admin, it is no longer the default; unbound, it is again.
    let bound = admin
        .patch(
            &format!("/v1/pod_managers/{uuid}"),
            json!({"renderer": {"name": "render-openstack"}}),
        )
        .await;
    assert_eq!(bound.status, StatusCode::OK, "{}", bound.text);
    assert_eq!(bound.body["renderer_default"], false, "{}", bound.text);
    assert_eq!(bound.body["renderer"]["sha256"], bundled_renderer["sha256"]);
    let unbound = admin
        .patch(
            &format!("/v1/pod_managers/{uuid}"),
            json!({"renderer": null}),
        )
        .await;
    assert_eq!(unbound.body["renderer_default"], true, "{}", unbound.text);
    let redfish = plugins
        .iter()
        .find(|p| p["name"] == "redfish")
        .expect("the bundled redfish plugin");
    assert_eq!(view["driver"]["sha256"], redfish["sha256"]);

    let online = wait_status(&admin, &uuid, "online").await;
    let link = string(&online, "redfish_link");
    assert!(
        link.starts_with(&bmc.url())
            && (link.ends_with("/redfish/v1") || link.ends_with("/redfish/v1/")),
        "redfish_link {link:?} for {}",
        bmc.url()
    );
    assert!(online["status_message"].is_null(), "{online}");
    assert!(online["last_probe_at"].is_string(), "{online}");
    assert_eq!(online["has_auth"], true);
    assert_eq!(online["bookmark_link"], format!("/v1/pod_managers/{uuid}"));

    for path in [
        format!("/v1/pod_managers/{uuid}"),
        "/v1/pod_managers".to_owned(),
        format!("/v1/pod_managers/{uuid}/status_history"),
    ] {
        let reply = admin.get(&path).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text);
        assert!(
            !reply.text.contains(PASSWORD),
            "{path} shows the password: {}",
            reply.text
        );
    }
}

#[tokio::test]
async fn wrong_credentials_turn_it_offline_and_never_show_the_password() {
    const WRONG: &str = "not-the-password-91ab";
    let server = fast_server().await;
    let admin = server.admin();
    let bmc = bmc(1).await;
    let created = admin
        .created(
            "/v1/pod_managers",
            json!({
                "name": "pm-wrong",
                "url": bmc.url(),
                "auth": {"username": USER, "password": WRONG},
            }),
        )
        .await;
    assert!(!created.text.contains(WRONG), "{}", created.text);
    let uuid = string(&created.body, "uuid");

    let offline = wait_status(&admin, &uuid, "offline").await;
    let message = string(&offline, "status_message");
    let lower = message.to_lowercase();
    assert!(
        lower.contains("unauthorized") || lower.contains("credential"),
        "{message}"
    );
    assert!(!message.contains(WRONG), "{message}");
    assert!(offline["redfish_link"].is_null(), "{offline}");

    for path in [
        format!("/v1/pod_managers/{uuid}"),
        "/v1/pod_managers".to_owned(),
        format!("/v1/pod_managers/{uuid}/status_history"),
    ] {
        let reply = admin.get(&path).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text);
        assert!(
            !reply.text.contains(WRONG),
            "{path} shows the password: {}",
            reply.text
        );
    }
}

#[tokio::test]
async fn a_stopped_bmc_goes_offline_and_comes_back_online_with_the_history() {
    let server = fast_server().await;
    let admin = server.admin();
    let mut bmc = bmc(1).await;
    let uuid = string(&create(&admin, minimal("pm-flaky", &bmc)).await, "uuid");
    wait_status(&admin, &uuid, "online").await;

    bmc.stop().await;
    let offline = wait_status(&admin, &uuid, "offline").await;
    let message = string(&offline, "status_message");
    let lower = message.to_lowercase();
    assert!(
        lower.contains("unreachable") || lower.contains("connect"),
        "{message}"
    );
    let (statuses, reply) = history(&admin, &uuid).await;
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("offline"),
        "newest first: {}",
        reply.text
    );
    let newest = &items(&reply)[0];
    assert!(
        newest["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{newest}"
    );
    let offline_ones = listed(&admin, "?status=offline").await;
    assert!(
        offline_ones.iter().any(|p| p["uuid"] == uuid.as_str()),
        "{offline_ones:?}"
    );
    let online_ones = listed(&admin, "?status=online").await;
    assert!(
        online_ones.iter().all(|p| p["uuid"] != uuid.as_str()),
        "{online_ones:?}"
    );

    bmc.restart().await.expect("sushy restarts");
    let online = wait_status(&admin, &uuid, "online").await;
    assert!(online["status_message"].is_null(), "{online}");
    let (statuses, reply) = history(&admin, &uuid).await;
    assert!(
        statuses.len() >= 3 && statuses[..3] == ["online", "offline", "online"],
        "history, newest first: {statuses:?} from {}",
        reply.text
    );
}

#[tokio::test]
async fn tls_trusts_the_given_ca_bundle_refuses_an_unknown_certificate_and_can_skip_checks() {
    let server = fast_server().await;
    let admin = server.admin();
    let bmc = Sushy::start(SushyConfig {
        basic_auth: Some((USER.into(), PASSWORD.into())),
        tls: true,
        ..SushyConfig::with_systems(1)
    })
    .await
    .expect("sushy-tools starts with TLS");
    let pem = bmc.cert_pem().expect("a TLS emulator has a certificate");
    assert!(bmc.url().starts_with("https://"));

    let mut body = minimal("pm-tls", &bmc);
    body["tls"] = json!({"verify": true, "ca_bundle": pem});
    let view = create(&admin, body).await;
    assert_eq!(
        view["tls"],
        json!({"verify": true, "ca_bundle": true, "pinned_sha256": null})
    );
    let uuid = string(&view, "uuid");
    let path = format!("/v1/pod_managers/{uuid}");
    wait_status(&admin, &uuid, "online").await;

    // The system roots do not know the emulator's self-signed certificate.
    let reply = patch(&admin, &path, json!({"tls": {"verify": true}})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(
        reply.body["tls"],
        json!({"verify": true, "ca_bundle": false, "pinned_sha256": null})
    );
    let offline = wait_status(&admin, &uuid, "offline").await;
    let message = string(&offline, "status_message");
    let lower = message.to_lowercase();
    assert!(
        lower.contains("tls") || lower.contains("certificate"),
        "{message}"
    );

    let reply = patch(&admin, &path, json!({"tls": {"verify": false}})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(
        reply.body["tls"],
        json!({"verify": false, "ca_bundle": false, "pinned_sha256": null})
    );
    wait_status(&admin, &uuid, "online").await;

    // Pinning the emulator's own certificate by its SHA-256 trusts it; another pin does not.
    let der = pem_to_der(pem);
    let pin = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(&der))
    };
    let wrong = "00".repeat(32);
    let reply = patch(&admin, &path, json!({"tls": {"pinned_sha256": wrong}})).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let offline = wait_status(&admin, &uuid, "offline").await;
    assert!(
        string(&offline, "status_message").contains("pinned"),
        "{offline}"
    );
    let colons: Vec<String> = pin
        .as_bytes()
        .chunks(2)
        .map(|c| String::from_utf8_lossy(c).to_uppercase())
        .collect();
    let reply = patch(
        &admin,
        &path,
        json!({"tls": {"pinned_sha256": colons.join(":")}}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(
        reply.body["tls"]["pinned_sha256"],
        pin.as_str(),
        "stored canonical"
    );
    wait_status(&admin, &uuid, "online").await;

    let bad = patch(&admin, &path, json!({"tls": {"pinned_sha256": "abc"}})).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert_eq!(bad.field(), "tls.pinned_sha256");
}

/// The DER bytes of the first certificate of a PEM text.
fn pem_to_der(pem: &str) -> Vec<u8> {
    use base64::Engine as _;
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN CERTIFICATE"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("PEM base64")
}

#[tokio::test]
async fn the_list_filters_by_name_and_location_and_pages_with_a_cursor() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for (name, location, port) in [
        ("pm-a", "rack-1", 9),
        ("pm-b", "rack-1", 10),
        ("pm-c", "rack-2", 11),
    ] {
        create(
            &admin,
            json!({
                "name": name,
                "url": format!("http://127.0.0.1:{port}"),
                "location": location,
                "auth": {"username": USER, "password": PASSWORD},
            }),
        )
        .await;
    }

    assert_eq!(names(&listed(&admin, "").await), ["pm-a", "pm-b", "pm-c"]);
    assert_eq!(names(&listed(&admin, "?name=pm-b").await), ["pm-b"]);
    assert!(listed(&admin, "?name=pm").await.is_empty());
    assert_eq!(
        names(&listed(&admin, "?location=rack-1").await),
        ["pm-a", "pm-b"]
    );
    assert_eq!(names(&listed(&admin, "?location=rack-2").await), ["pm-c"]);
    assert!(listed(&admin, "?location=rack-3").await.is_empty());

    let first = admin.get("/v1/pod_managers?limit=2").await;
    let first_items = items(&first);
    assert_eq!(first_items.len(), 2, "{}", first.text);
    let cursor = first.body["next"]
        .as_str()
        .unwrap_or_else(|| panic!("a next cursor after 2 of 3: {}", first.text))
        .to_owned();
    let second = admin
        .get(&format!("/v1/pod_managers?limit=2&cursor={}", q(&cursor)))
        .await;
    let second_items = items(&second);
    assert_eq!(second_items.len(), 1, "{}", second.text);
    assert!(second.body["next"].is_null(), "{}", second.text);
    let mut all = first_items;
    all.extend(second_items);
    assert_eq!(names(&all), ["pm-a", "pm-b", "pm-c"], "each one once");

    for limit in ["0", "1001", "x"] {
        let reply = admin.get(&format!("/v1/pod_managers?limit={limit}")).await;
        assert!(
            reply.status.is_client_error(),
            "limit={limit}: {} {}",
            reply.status,
            reply.text
        );
    }
}

#[tokio::test]
async fn patch_changes_what_it_names_and_refuses_the_uuid_and_a_bad_url() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let url = "http://127.0.0.1:9";
    let view = create(
        &admin,
        json!({
            "name": "pm-patch",
            "url": url,
            "auth": {"username": USER, "password": PASSWORD},
        }),
    )
    .await;
    let uuid = string(&view, "uuid");
    let path = format!("/v1/pod_managers/{uuid}");
    // The first probe (which fails: nothing listens on port 9) is done: nothing else changes
    // the pod manager before the next probe, a minute later.
    let before = wait_status(&admin, &uuid, "offline").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;

    let reply = patch(
        &admin,
        &path,
        json!({"description": "the lab's BMC", "location": "rack-7"}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert_eq!(reply.body["description"], "the lab's BMC");
    assert_eq!(reply.body["location"], "rack-7");
    let shown = admin.get(&path).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
    assert_eq!(shown.body["description"], "the lab's BMC");
    assert_eq!(shown.body["location"], "rack-7");
    assert_eq!(shown.body["name"], "pm-patch", "untouched fields stay");
    assert_eq!(shown.body["has_auth"], true, "untouched fields stay");
    assert_ne!(
        shown.body["updated_at"], before["updated_at"],
        "{} after {}",
        shown.text, before
    );
    assert_eq!(shown.body["created_at"], before["created_at"]);

    let reply = patch(
        &admin,
        &path,
        json!({"uuid": "00000000-0000-4000-8000-000000000001"}),
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.text
    );
    assert_eq!(reply.field(), "uuid", "{}", reply.text);

    for bad in ["not a url", "ftp://x", "http://h/path"] {
        let reply = patch(
            &admin,
            &path,
            json!({"url": bad, "description": "should not stick"}),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {}",
            reply.text
        );
        assert_eq!(reply.field(), "url", "{bad}: {}", reply.text);
    }
    let shown = admin.get(&path).await;
    assert_eq!(
        string(&shown.body, "url").trim_end_matches('/'),
        url,
        "{}",
        shown.text
    );
    assert_eq!(shown.body["description"], "the lab's BMC", "{}", shown.text);
    assert_eq!(shown.body["uuid"], uuid.as_str());

    let reply = patch(&admin, &path, json!({"bogus": 1})).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.text
    );
    assert_eq!(reply.field(), "bogus", "{}", reply.text);

    let reply = patch(
        &admin,
        "/v1/pod_managers/00000000-0000-4000-8000-000000000001",
        json!({"description": "x"}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
}

#[tokio::test]
async fn delete_removes_the_pod_manager_and_its_hosts() {
    let server = fast_server().await;
    let admin = server.admin();
    let bmc = bmc(2).await;
    let uuid = string(&create(&admin, minimal("pm-gone", &bmc)).await, "uuid");
    let hosts_path = format!("/v1/hosts?pod_manager={uuid}");
    let hosts = eventually("both systems synced as hosts", async || {
        let hosts = items(&admin.get(&hosts_path).await);
        let systems = hosts.iter().filter(|h| h["kind"] == "system").count();
        if systems == 2 {
            Ok(hosts)
        } else {
            Err(format!("{systems} systems in {hosts:?}"))
        }
    })
    .await;

    let path = format!("/v1/pod_managers/{uuid}");
    // While a tenant holds one of its hosts, the pod manager stays, and the answer says why.
    // (The claims API binds hosts the same way: through the host's claim.)
    let claimed = podium_types::HostId::from(string(&hosts[0], "id"));
    let store = server.podium.datastore();
    assert!(
        store
            .host_set_claim(
                &claimed,
                Some(&"claim-1".into()),
                podium_types::Timestamp::now()
            )
            .await
            .unwrap()
    );
    let reply = delete(&admin, &path).await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.text);
    assert_eq!(reply.code(), "pod_manager_in_use");
    assert!(reply.message().contains("claimed"), "{}", reply.text);
    assert_eq!(
        admin.get(&path).await.status,
        StatusCode::OK,
        "nothing was deleted"
    );
    assert_eq!(items(&admin.get(&hosts_path).await).len(), hosts.len());
    assert!(
        store
            .host_set_claim(&claimed, None, podium_types::Timestamp::now())
            .await
            .unwrap()
    );

    let reply = delete(&admin, &path).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT, "{}", reply.text);

    let reply = admin.get(&path).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
    assert!(listed(&admin, "").await.is_empty());
    let all_hosts = admin.get("/v1/hosts").await;
    assert!(items(&all_hosts).is_empty(), "{}", all_hosts.text);
    // Filtering on the deleted pod manager: no hosts (or a 404 for the pod manager itself).
    let filtered = admin.get(&hosts_path).await;
    assert!(
        filtered.status == StatusCode::NOT_FOUND || items(&filtered).is_empty(),
        "{}",
        filtered.text
    );
    for host in &hosts {
        let id = string(host, "id");
        let reply = admin.get(&format!("/v1/hosts/{id}")).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{id}: {}", reply.text);
    }
    let reply = delete(&admin, &path).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
}

/// POSTs `body` and expects it refused with a 4xx naming `field`; returns the reply.
async fn refused(admin: &Client, body: Value, field: &str) -> Reply {
    let reply = admin.post("/v1/pod_managers", body.clone()).await;
    assert!(
        reply.status.is_client_error(),
        "{body} was not refused: {} {}",
        reply.status,
        reply.text
    );
    assert_eq!(reply.field(), field, "{body}: {}", reply.text);
    assert!(!reply.message().is_empty(), "{body}: {}", reply.text);
    reply
}

#[tokio::test]
async fn bad_bodies_are_refused_with_the_field_and_store_nothing() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let valid = json!({
        "name": "pm-ok",
        "url": "http://127.0.0.1:9",
        "auth": {"username": USER, "password": PASSWORD},
    });
    let with = |key: &str, value: Value| {
        let mut body = valid.clone();
        body[key] = value;
        body
    };

    let mut no_name = valid.clone();
    no_name.as_object_mut().unwrap().remove("name");
    refused(&admin, no_name, "name").await;
    refused(&admin, with("name", json!(5)), "name").await;
    refused(&admin, with("name", json!("")), "name").await;
    refused(&admin, with("name", json!("bad name!")), "name").await;
    refused(&admin, with("name", json!("a".repeat(64))), "name").await;

    for bad in [
        "not a url",
        "ftp://x",
        "http://h/path",
        "http://user:pw@h",
        "http://h/?q=1",
        "http://h/#top",
    ] {
        refused(&admin, with("url", json!(bad)), "url").await;
    }

    let reply = refused(&admin, with("bogus", json!(1)), "bogus").await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    refused(
        &admin,
        with("description", json!("d".repeat(1025))),
        "description",
    )
    .await;
    refused(&admin, with("location", json!("l".repeat(256))), "location").await;
    refused(
        &admin,
        with("network_config_owner", json!("root")),
        "network_config_owner",
    )
    .await;

    let reply = refused(&admin, with("driver", json!({"name": "nope"})), "driver").await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    let reply = refused(
        &admin,
        with("driver", json!({"name": "ipam-static"})),
        "driver",
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        reply.message().contains("hardware-driver"),
        "{}",
        reply.text
    );
    let reply = refused(
        &admin,
        with("driver", json!({"name": "redfish", "config": {"root": 5}})),
        "driver.config",
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    let reply = refused(&admin, with("ipam", json!({"name": "redfish"})), "ipam").await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);

    assert!(
        listed(&admin, "").await.is_empty(),
        "a refused body stored something"
    );

    create(&admin, valid.clone()).await;
    let same_name = with("url", json!("http://127.0.0.1:10"));
    let reply = refused(&admin, same_name, "name").await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.text);
    assert_eq!(reply.code(), "name_taken", "{}", reply.text);
    let reply = refused(&admin, with("name", json!("pm-other")), "url").await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.text);
    assert_eq!(reply.code(), "url_taken", "{}", reply.text);
    assert_eq!(names(&listed(&admin, "").await), ["pm-ok"]);
}

#[tokio::test]
async fn without_a_valid_token_every_endpoint_is_401_and_nothing_is_stored() {
    let server = TestServer::start().await;
    let body = json!({
        "name": "pm-anon",
        "url": "http://127.0.0.1:9",
        "auth": {"username": USER, "password": PASSWORD},
    });
    for client in [
        server.client(None),
        server.client(Some("pdm_not-a-real-token")),
    ] {
        let reply = client.post("/v1/pod_managers", body.clone()).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.text);
        assert_eq!(reply.code(), "unauthenticated", "{}", reply.text);
        for path in ["/v1/pod_managers", "/v1/hosts", "/v1/operations"] {
            let reply = client.get(path).await;
            assert_eq!(
                reply.status,
                StatusCode::UNAUTHORIZED,
                "{path}: {}",
                reply.text
            );
        }
    }
    assert!(listed(&server.admin(), "").await.is_empty());
}

#[tokio::test]
async fn a_plugin_error_with_control_characters_is_recorded_escaped_and_its_sync_ends() {
    // On PostgreSQL a NUL in text cannot be stored at all: this once left the pod manager
    // `unknown` with no history and its sync `running` forever.
    let server = TestServer::start_with(|config| {
        config.probe_interval = Duration::from_millis(300);
        config.sync_interval = Duration::from_secs(3600);
        config.operations.retry_base = Duration::from_millis(10);
        config.operations.max_attempts = 2;
    })
    .await;
    let admin = server.admin();
    admin.upload_plugin(podium_tests::guests::FAULTY).await;
    let created = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "pm-nul", "url": "http://127.0.0.1:9",
                   "driver": {"name": "faulty", "config": {"fault": "nul-error"}}}),
        )
        .await;
    let uuid = string(&created.body, "uuid");
    let offline = wait_status(&admin, &uuid, "offline").await;
    let message = string(&offline, "status_message");
    assert!(
        message.contains("bmc\\u{0}down\\nINFO podium::server: forged\\u{1b}[2J"),
        "{message}"
    );
    let (statuses, reply) = history(&admin, &uuid).await;
    assert_eq!(statuses, ["offline"], "{}", reply.text);

    let sync = admin
        .post(&format!("/v1/pod_managers/{uuid}/sync"), json!({}))
        .await;
    assert_eq!(sync.status, StatusCode::ACCEPTED, "{}", sync.text);
    let op = string(&sync.body, "id");
    let ended = podium_tests::eventually(Duration::from_secs(20), "sync ended", || async {
        let reply = admin.get(&format!("/v1/operations/{op}")).await;
        (reply.body["status"] == "failed").then_some(reply.body)
    })
    .await;
    let error = string(&ended, "error");
    assert!(error.contains("gave up after 2 attempts"), "{ended}");
    assert!(error.contains("bmc\\u{0}down"), "{ended}");
    assert_eq!(ended["attempts"], 2, "{ended}");
}

/// How many hosts a pod manager has now, counted page by page.
async fn host_count(admin: &Client, uuid: &str) -> usize {
    let mut count = 0;
    let mut cursor = String::new();
    loop {
        let page = admin
            .get(&format!("/v1/hosts?pod_manager={uuid}&limit=1000{cursor}"))
            .await;
        count += items(&page).len();
        match page.body["next"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return count,
        }
    }
}

#[tokio::test]
async fn a_site_that_reports_thousands_of_systems_does_not_hold_up_another_sites_sync() {
    const SYSTEMS: usize = 5_000;
    let server = TestServer::start_with(|config| {
        config.probe_interval = Duration::from_secs(3600);
        config.sync_interval = Duration::from_secs(3600);
    })
    .await;
    let admin = server.admin();
    admin.upload_plugin(podium_tests::guests::FAULTY).await;
    let (quiet_bmc, busy_bmc) = (
        podium_tests::ImageServer::start(br#"{"PowerState": "Off"}"#.to_vec()).await,
        podium_tests::ImageServer::start(br#"{"PowerState": "Off"}"#.to_vec()).await,
    );
    let quiet = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "quiet", "url": quiet_bmc.url("/"), "driver": {"name": "faulty"}}),
        )
        .await;
    let quiet = string(&quiet.body, "uuid");
    eventually("the quiet site's host", async || {
        match host_count(&admin, &quiet).await {
            1 => Ok(()),
            n => Err(format!("{n} hosts")),
        }
    })
    .await;
    // Its creation syncs the busy site at once: 5,000 hosts written in batches, each batch's
    // registrations (then inspections) queued with it.
    let busy = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "busy", "url": busy_bmc.url("/"),
                   "driver": {"name": "faulty", "config": {"systems": SYSTEMS}}}),
        )
        .await;
    let busy = string(&busy.body, "uuid");
    // Once its first batch shows (it is still writing the others), the quiet site syncs.
    podium_tests::eventually(
        Duration::from_secs(120),
        "the busy site's first hosts",
        || async {
            let page = admin
                .get(&format!("/v1/hosts?pod_manager={busy}&limit=1"))
                .await;
            (!items(&page).is_empty()).then_some(())
        },
    )
    .await;
    let shown = host_count(&admin, &busy).await;
    assert!(
        shown < SYSTEMS,
        "all {SYSTEMS} hosts appeared at once: one transaction"
    );
    let sync = admin
        .post(&format!("/v1/pod_managers/{quiet}/sync"), json!({}))
        .await;
    assert_eq!(sync.status, StatusCode::ACCEPTED, "{}", sync.text);
    let op = string(&sync.body, "id");
    let quiet_sync =
        podium_tests::eventually(Duration::from_secs(120), "the quiet sync", || async {
            let reply = admin.get(&format!("/v1/operations/{op}")).await;
            (reply.body["status"] == "succeeded").then_some(reply.body)
        })
        .await;
    let (queued_at, started_at) = (
        string(&quiet_sync, "created_at"),
        string(&quiet_sync, "started_at"),
    );
    // While it waited, the busy site's older backlog was not served ahead of it: the quiet
    // site ran nothing, so its operation was the next leased (give or take the leases already
    // under way when it was queued).
    let mut served_first = 0;
    let mut cursor = String::new();
    loop {
        let page = admin
            .get(&format!(
                "/v1/operations?pod_manager={busy}&limit=1000{cursor}"
            ))
            .await;
        served_first += items(&page)
            .iter()
            .filter_map(|o| o["started_at"].as_str())
            .filter(|at| *at > queued_at.as_str() && *at < started_at.as_str())
            .count();
        match page.body["next"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    assert!(
        served_first <= 8,
        "{served_first} of the busy site's operations were leased while the quiet site's sync \
         waited ({queued_at} to {started_at})"
    );
}

/// Syncs of one pod manager that run at once (the one its registration starts, the `sync`
/// task's and one asked for) all succeed, and each new host is registered once: the host and its
/// `register` are written by whichever sync added it first. (The window is narrow: here it was
/// `tasks::background_tasks_show_their_status_and_run_when_asked` on PostgreSQL that caught a
/// later sync queueing `register` for an id it had not written.)
#[tokio::test]
async fn syncs_of_one_pod_manager_at_once_register_each_host_once() {
    let bmc = podium_tests::sushy::SushyStatic::start(&podium_tests::composition::mockup(
        "public-bladed",
    ))
    .await
    .expect("sushy-static starts");
    let server = TestServer::start_with(podium_tests::site::quick).await;
    let admin = server.admin();
    let pm = admin.create_site(&bmc.url()).await;
    // The `sync` task syncs every pod manager itself, beside the sync operations.
    let sync_task = || async {
        admin.get("/v1/admin/tasks").await.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "sync")
            .cloned()
            .expect("the sync task")
    };
    let runs = |task: &Value| task["runs"].as_u64().unwrap_or(0);
    let before = runs(&sync_task().await);
    let ran = admin.post("/v1/admin/tasks/sync/run", json!({})).await;
    assert_eq!(ran.status, StatusCode::ACCEPTED, "{}", ran.text);
    let pms = [pm.clone()];
    admin.sync_all(&pms).await;
    let task = podium_tests::eventually(Duration::from_secs(30), "the sync task ran", || async {
        let task = sync_task().await;
        (runs(&task) > before && task["running"] == false).then_some(task)
    })
    .await;
    assert_eq!(task["last_counts"]["failed"], 0, "{task}");
    let hosts = admin.hosts_all(&format!("&pod_manager={pm}")).await;
    assert_eq!(hosts.len(), 4, "4 systems; the 5 chassis are no hosts");
    for host in &hosts {
        let ops = admin
            .get(&format!("/v1/operations?host={}&kind=register", host.id))
            .await;
        assert_eq!(ops.status, reqwest::StatusCode::OK, "{}", ops.text);
        assert_eq!(
            ops.body["items"].as_array().unwrap().len(),
            1,
            "{}: {}",
            host.name,
            ops.text
        );
    }
}
