//! Redfish event subscriptions (`EventService`): unmodified Ironic subscribes a tenant to its
//! claimed host's events through Podium, and a local receiver gets them; what a subscription
//! names is checked (when it is made, and again at each delivery); a receiver that does not
//! answer costs its own subscription its events, after bounded tries, and no one else's.

use std::time::Duration;

use podium_tests::ironic::Ironic;
use podium_tests::redfish_face::{Answer, Auth, get, post};
use podium_tests::site::Site;
use podium_tests::sushy::SushyConfig;
use podium_tests::{EventReceiver, Received, eventually};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Subscribes `destination` with `token` (asserting the 201); the subscription's `Id`.
async fn subscribe(site: &Site, token: &str, destination: &str) -> String {
    let Answer {
        status, body, text, ..
    } = post(
        site,
        "/redfish/v1/EventService/Subscriptions",
        Auth::Basic(token),
        json!({ "Destination": destination }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{text}");
    body["Id"].as_str().expect("an Id").to_owned()
}

/// The events `received` carries about `origin`, each record of each post.
fn records_about(received: &[Received], origin: &str) -> Vec<Value> {
    received
        .iter()
        .flat_map(|r| r.body["Events"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["OriginOfCondition"]["@odata.id"] == origin)
        .collect()
}

/// A site whose subscriptions may push to this machine (the receivers listen on 127.0.0.1).
async fn local_site() -> Site {
    Site::start_with(SushyConfig::with_systems(1), |c| {
        c.event_destinations_local = true;
    })
    .await
}

/// Alice's Ironic subscribes to her node's events with its `redfish` vendor passthru
/// (`create_subscription`, as Ironic 39 sends it: `EventTypes` `["Alert"]`, headers as a list):
/// when her host powers on, her receiver gets the change, with her context and headers, and
/// Bob's receiver, subscribed to his own, gets nothing of hers. The headers are never shown, and
/// Ironic deletes the subscription.
#[tokio::test]
async fn unmodified_ironic_subscribes_a_tenant_to_its_hosts_events_through_podium() {
    let site = local_site().await;
    let alice = site.tenant("alice").await;
    let bob = site.tenant("bob").await;
    let host = site.claimed(&alice.token).await.host;
    let receiver = EventReceiver::start().await;
    let ironic = Ironic::start(Duration::from_secs(3600)).await.unwrap();
    let system = format!("/redfish/v1/Systems/{host}");
    let node = ironic
        .node_create_with_interfaces(
            json!({"vendor_interface": "redfish"}),
            &site.server.url,
            &system,
            "alice",
            &alice.token,
        )
        .await
        .unwrap();
    let created = ironic
        .request(
            Method::POST,
            &format!("/nodes/{node}/vendor_passthru?method=create_subscription"),
            Some(json!({
                "Destination": receiver.url("/alice"),
                "Context": "alice-node",
                "HttpHeaders": [{"X-Receiver-Token": "header-secret-1"}],
            })),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", ironic.log()));
    assert_eq!(created["Context"], "alice-node", "{created}");
    assert_eq!(created["EventTypes"], json!(["Alert"]), "{created}");
    let id = created["Id"].as_str().unwrap().to_owned();
    let Answer { status, .. } = post(
        &site,
        "/redfish/v1/EventService/Subscriptions",
        Auth::Basic(&bob.token),
        json!({"Destination": receiver.url("/bob"), "Protocol": "Redfish"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);

    // Alice's subscription is hers: Bob does not see it; its headers are never shown.
    let path = format!("/redfish/v1/EventService/Subscriptions/{id}");
    let Answer { status, .. } = get(&site, &path, Auth::Basic(&bob.token)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let Answer {
        status,
        body: shown,
        text,
        ..
    } = get(&site, &path, Auth::Basic(&alice.token)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(shown["HttpHeaders"], Value::Null, "{text}");
    assert!(!text.contains("header-secret-1"), "{text}");

    let Answer { status, text, .. } = post(
        &site,
        &format!("{system}/Actions/ComputerSystem.Reset"),
        Auth::Basic(&alice.token),
        json!({"ResetType": "On"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{text}");
    let powered = eventually(
        Duration::from_secs(60),
        "alice's receiver hears the power on",
        || async {
            let received = receiver.received();
            let alices: Vec<Received> = received
                .into_iter()
                .filter(|r| r.path == "/alice")
                .collect();
            records_about(&alices, &system)
                .into_iter()
                .find(|e| {
                    e["Message"]
                        .as_str()
                        .is_some_and(|m| m.contains("powered on"))
                })
                .map(|e| (alices, e))
        },
    )
    .await;
    let (alices, record) = powered;
    assert_eq!(record["EventType"], "Alert", "{record}");
    assert_eq!(
        record["MessageId"], "ResourceEvent.1.0.ResourceChanged",
        "{record}"
    );
    let post = &alices[0];
    assert_eq!(post.body["Context"], "alice-node", "{:?}", post.body);
    assert_eq!(post.body["@odata.type"], "#Event.v1_7_0.Event");
    assert_eq!(
        post.headers
            .get("x-receiver-token")
            .and_then(|v| v.to_str().ok()),
        Some("header-secret-1")
    );
    // The power operation's end reaches her too, as its task.
    eventually(Duration::from_secs(30), "the task's end", || async {
        let alices: Vec<Received> = receiver
            .received()
            .into_iter()
            .filter(|r| r.path == "/alice")
            .collect();
        alices
            .iter()
            .flat_map(|r| r.body["Events"].as_array().cloned().unwrap_or_default())
            .find(|e| e["MessageId"] == "TaskEvent.1.0.TaskCompletedOK")
    })
    .await;
    // Bob's subscription heard nothing of Alice's host (one more delivery run has passed).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let bobs: Vec<Received> = receiver
        .received()
        .into_iter()
        .filter(|r| r.path == "/bob")
        .collect();
    assert!(bobs.is_empty(), "{bobs:?}");

    ironic
        .request(
            Method::DELETE,
            &format!("/nodes/{node}/vendor_passthru?method=delete_subscription"),
            Some(json!({"id": id})),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", ironic.log()));
    let Answer { status, .. } = get(&site, &path, Auth::Basic(&alice.token)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// What a subscription names is checked (a 400 naming the property); a destination on this
/// machine is refused unless the admin allows local destinations.
#[tokio::test]
async fn a_subscription_names_a_destination_podium_may_reach() {
    let site = Site::start(1).await;
    let alice = site.tenant("alice").await;
    let subscriptions = "/redfish/v1/EventService/Subscriptions";
    for (body, says) in [
        (json!({"Destination": "http://127.0.0.1:9/e"}), "loopback"),
        (
            json!({"Destination": "http://localhost:9/e"}),
            "this machine",
        ),
        (
            json!({"Destination": "http://169.254.169.254/latest"}),
            "link-local",
        ),
        (json!({"Destination": "http://[::1]/e"}), "loopback"),
        (json!({"Destination": "ftp://events.example.net/"}), "http"),
        (
            json!({"Destination": "https://u:pw@events.example.net/"}),
            "credentials",
        ),
        (json!({"Protocol": "Redfish"}), "Destination"),
        (
            json!({"Destination": "https://events.example.net/", "Protocol": "SNMPv2c"}),
            "Protocol",
        ),
        (
            json!({"Destination": "https://events.example.net/", "EventTypes": ["MetricReport"]}),
            "EventTypes",
        ),
        (
            json!({"Destination": "https://events.example.net/", "HttpHeaders": [{"Host": "x"}]}),
            "Host",
        ),
        (
            json!({"Destination": "https://events.example.net/", "Bogus": 1}),
            "Bogus",
        ),
    ] {
        let Answer { status, text, .. } = post(
            &site,
            subscriptions,
            Auth::Basic(&alice.token),
            body.clone(),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {text}");
        assert!(text.contains(says), "{body}: {text}");
    }
    let Answer { status, text, .. } = post(
        &site,
        subscriptions,
        Auth::Basic(&alice.token),
        json!({"Destination": "https://events.example.net/podium", "Context": "c"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{text}");
    let read_only = site
        .admin
        .created(
            &format!("/v1/tenants/{}/tokens", alice.id),
            json!({"read_only": true}),
        )
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let Answer { status, .. } = post(
        &site,
        subscriptions,
        Auth::Basic(&read_only),
        json!({"Destination": "https://events.example.net/podium"}),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let Answer {
        status,
        body: listed,
        ..
    } = get(&site, subscriptions, Auth::Basic(&read_only)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["Members"].as_array().unwrap().len(), 1, "{listed}");
}

/// A receiver that refuses every post is tried a bounded number of times, then its events are
/// given up on and its subscription says why; another subscription's receiver gets every event
/// meanwhile; once the first answers again, it gets the events after, not the ones given up on.
#[tokio::test]
async fn a_dead_receiver_costs_its_own_subscription_its_events_and_no_one_elses() {
    let site = local_site().await;
    let host = site.admin.systems_in_state(&site.pm, 1, "available").await[0]
        .id
        .to_string();
    let (dead, alive) = (EventReceiver::start().await, EventReceiver::start().await);
    dead.refuse_next(1_000);
    let subscriptions = "/redfish/v1/EventService/Subscriptions";
    let mut ids = Vec::new();
    for receiver in [&dead, &alive] {
        ids.push(subscribe(&site, podium_tests::ADMIN_TOKEN, &receiver.url("/events")).await);
    }
    let system = format!("/redfish/v1/Systems/{host}");
    let power = |action: &'static str| {
        let admin = site.admin.clone();
        let host = host.clone();
        async move {
            let op = admin
                .post(
                    &format!("/v1/hosts/{host}/power"),
                    json!({ "action": action }),
                )
                .await;
            crate::pod_managers::wait_succeeded(&admin, op.body["id"].as_str().unwrap()).await;
        }
    };
    power("on").await;
    eventually(
        Duration::from_secs(30),
        "the live receiver hears it",
        || async {
            let records = records_about(&alive.received(), &system);
            records
                .iter()
                .any(|e| {
                    e["Message"]
                        .as_str()
                        .is_some_and(|m| m.contains("powered on"))
                })
                .then_some(())
        },
    )
    .await;
    let dead_path = format!("{subscriptions}/{}", ids[0]);
    let given_up = eventually(
        Duration::from_secs(60),
        "the dead receiver given up on",
        || async {
            let Answer { body: shown, .. } =
                get(&site, &dead_path, Auth::Basic(podium_tests::ADMIN_TOKEN)).await;
            let error = shown["Oem"]["Podium"]["LastError"].as_str()?.to_owned();
            error.contains("given up").then_some(error)
        },
    )
    .await;
    assert!(given_up.contains("503"), "{given_up}");
    assert_eq!(dead.refused(), 5, "tried five times");
    assert!(dead.received().is_empty());

    // Alive again: it gets what comes next, not what was given up on.
    dead.refuse_next(0);
    power("off").await;
    eventually(
        Duration::from_secs(30),
        "the revived receiver hears the power off",
        || async {
            let records = records_about(&dead.received(), &system);
            records
                .iter()
                .any(|e| {
                    e["Message"]
                        .as_str()
                        .is_some_and(|m| m.contains("powered off"))
                })
                .then_some(())
        },
    )
    .await;
    let revived = records_about(&dead.received(), &system);
    assert!(
        !revived.iter().any(|e| e["Message"]
            .as_str()
            .is_some_and(|m| m.contains("powered on"))),
        "{revived:?}"
    );
}

/// A subscription to this machine, made while local destinations were allowed, gets nothing
/// once Podium runs without them: each delivery checks the destination again, and the
/// subscription says why its events were given up on.
#[tokio::test]
async fn a_local_destination_is_refused_at_delivery_once_local_destinations_are_not_allowed() {
    let mut site = local_site().await;
    let host = site.admin.systems_in_state(&site.pm, 1, "available").await[0]
        .id
        .to_string();
    let receiver = EventReceiver::start().await;
    let subscriptions = "/redfish/v1/EventService/Subscriptions";
    let id = subscribe(&site, podium_tests::ADMIN_TOKEN, &receiver.url("/events")).await;
    let path = format!("{subscriptions}/{id}");

    // Restarted as by default: no local destination.
    site.server = site.server.restart().await;
    site.admin = site.server.admin();
    let op = site
        .admin
        .post(&format!("/v1/hosts/{host}/power"), json!({"action": "on"}))
        .await;
    crate::pod_managers::wait_succeeded(&site.admin, op.body["id"].as_str().unwrap()).await;
    let given_up = eventually(
        Duration::from_secs(60),
        "the events given up on",
        || async {
            let Answer { body: shown, .. } =
                get(&site, &path, Auth::Basic(podium_tests::ADMIN_TOKEN)).await;
            let error = shown["Oem"]["Podium"]["LastError"].as_str()?.to_owned();
            error.contains("given up").then_some(error)
        },
    )
    .await;
    assert!(given_up.contains("loopback"), "{given_up}");
    let heard = records_about(&receiver.received(), &format!("/redfish/v1/Systems/{host}"));
    assert!(
        !heard.iter().any(|e| e["Message"]
            .as_str()
            .is_some_and(|m| m.contains("powered on"))),
        "{heard:?}"
    );
}
