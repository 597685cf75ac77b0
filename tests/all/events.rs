//! Events: `GET /v1/events` streams changes of claims, hosts and operations as they are
//! committed, read here by `eventsource-stream` (a client nobody here wrote); a tenant sees only
//! its own; a stream resumed with `Last-Event-ID` misses nothing, even under concurrent writers
//! (PostgreSQL too); bad requests are refused naming the field; a revoked token ends the stream.

use std::time::Duration;

use podium_tests::sushy::SushyConfig;
use podium_tests::{EventStream, SentEvent, Site, TestServer, eventually};
use podium_types::HostKind;
use podium_types::views::ClaimView;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Reads events until one satisfies `done`; answers every event read, that one last.
async fn read_until(
    stream: &mut EventStream,
    what: &str,
    done: impl Fn(&SentEvent) -> bool,
) -> Vec<SentEvent> {
    let mut seen = Vec::new();
    loop {
        match stream.next_within(Duration::from_secs(30)).await {
            Some(event) => {
                let last = done(&event);
                seen.push(event);
                if last {
                    return seen;
                }
            }
            None => panic!("no event for {what} within 30 s after {seen:#?}"),
        }
    }
}

/// Revokes the first token of a tenant.
async fn revoke_first_token(admin: &podium_tests::Client, tenant: &str) {
    let tokens = admin
        .get(&format!("/v1/tenants/{tenant}/tokens"))
        .await
        .body;
    let token_id = tokens["items"][0]["id"].as_str().unwrap();
    let revoked = admin
        .send(
            reqwest::Method::DELETE,
            &format!("/v1/tenants/{tenant}/tokens/{token_id}"),
            None,
        )
        .await;
    assert!(revoked.status.is_success(), "{}", revoked.text);
}

fn seqs(events: &[SentEvent]) -> Vec<i64> {
    events
        .iter()
        .map(|e| e.data["seq"].as_i64().expect("seq"))
        .collect()
}

/// The claim an event is about: the claim's own, the host's, the operation's.
fn claim_of(e: &SentEvent) -> Option<&str> {
    e.data["claim"]["id"]
        .as_str()
        .or_else(|| e.data["host"]["claim"].as_str())
        .or_else(|| e.data["operation"]["claim"].as_str())
}

#[tokio::test]
async fn a_tenant_follows_its_claim_and_resumes_without_losing_an_event() {
    let site = Site::start(2).await;
    let admin = site.server.admin();
    let (_, alice_token) = admin.granted_tenant("alice", &site.pm).await;
    let (_, bob_token) = admin.granted_tenant("bob", &site.pm).await;
    let alice = site.server.client(Some(&alice_token));
    let bob = site.server.client(Some(&bob_token));

    // Streams open before anything happens: each starts with the next change.
    let mut admin_events = admin.events("/v1/events", None).await.unwrap();
    let mut alice_live = alice.events("/v1/events", None).await.unwrap();
    let mut alice_dropped = alice.events("/v1/events", None).await.unwrap();
    let mut bob_events = bob.events("/v1/events", None).await.unwrap();

    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": site.pm, "image": {"url": site.images.url("/os.iso")}}),
        )
        .await
        .view::<ClaimView>();
    let id = claim.id.to_string();
    let host = claim.host.expect("bound").id.to_string();

    // One stream drops after its first event; the other follows the provisioning to its end.
    let first = alice_dropped
        .next_within(Duration::from_secs(30))
        .await
        .expect("a first event");
    drop(alice_dropped);
    assert_eq!(first.name, "claim", "{first:?}");
    assert_eq!(first.data["action"], "created");
    assert_eq!(first.data["claim"]["id"], id.as_str());
    assert_eq!(
        first.id,
        first.data["seq"].to_string(),
        "the SSE id is the seq"
    );
    let live = read_until(&mut alice_live, "the provisioning's success", |e| {
        e.data["operation"]["kind"] == "provision" && e.data["operation"]["status"] == "succeeded"
    })
    .await;

    // In commit order, all of them alice's, and the tenant's view of a host: no pod manager,
    // no error.
    let numbers = seqs(&live);
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    for e in &live {
        assert_eq!(claim_of(e), Some(id.as_str()), "not alice's: {e:?}");
        assert!(e.data["host"]["pod_manager"].is_null(), "{e:?}");
        assert_eq!(e.name, e.data["kind"].as_str().unwrap());
    }
    let kinds: Vec<(&str, &str)> = live
        .iter()
        .map(|e| {
            (
                e.data["kind"].as_str().unwrap(),
                e.data["action"].as_str().unwrap(),
            )
        })
        .collect();
    for expected in [
        ("claim", "created"),
        ("host", "changed"),
        ("operation", "created"),
        ("operation", "changed"),
    ] {
        assert!(kinds.contains(&expected), "no {expected:?} in {kinds:?}");
    }
    let host_states: Vec<&str> = live
        .iter()
        .filter(|e| e.data["host"]["id"] == host.as_str())
        .map(|e| e.data["host"]["provisioning_state"].as_str().unwrap())
        .collect();
    assert!(
        host_states.ends_with(&["provisioning", "provisioned"]),
        "{host_states:?}"
    );

    // The dropped stream resumes after its last event and reads exactly what the live one did.
    let mut resumed = alice.events("/v1/events", Some(&first.id)).await.unwrap();
    let last = *numbers.last().unwrap();
    let rest = read_until(&mut resumed, "the live stream's last event", |e| {
        e.data["seq"].as_i64() == Some(last)
    })
    .await;
    // It said where it starts: after the event it was given.
    assert_eq!(resumed.ready.as_ref().unwrap().id, first.id);
    assert_eq!(
        resumed.ready.as_ref().unwrap().data["after"].to_string(),
        first.id
    );
    let mut both = vec![first.clone()];
    both.extend(rest);
    assert_eq!(
        seqs(&both),
        numbers,
        "the resumed stream lost or added events"
    );
    // `?after=` does the same for clients that cannot send the header.
    let mut after = alice
        .events(&format!("/v1/events?after={}", first.id), None)
        .await
        .unwrap();
    let again = read_until(&mut after, "the last event", |e| {
        e.data["seq"].as_i64() == Some(last)
    })
    .await;
    assert_eq!(seqs(&again), numbers[1..]);

    // Bob saw nothing of alice's: his first event is his own claim's creation.
    let bob_claim = bob
        .created(
            "/v1/claims",
            json!({"pod_manager": site.pm, "image": {"url": site.images.url("/os.iso")},
                   "online": false}),
        )
        .await
        .body;
    let bob_first = bob_events
        .next_within(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(
        bob_first.data["claim"]["id"], bob_claim["id"],
        "{bob_first:?}"
    );

    // The admin saw both tenants, and the hosts' pod manager.
    let seen = read_until(&mut admin_events, "bob's claim", |e| {
        e.data["claim"]["id"] == bob_claim["id"]
    })
    .await;
    assert!(seen.iter().any(|e| claim_of(e) == Some(id.as_str())));
    assert!(
        seen.iter()
            .filter(|e| e.name == "host")
            .all(|e| e.data["host"]["pod_manager"] == site.pm.as_str()),
        "{seen:#?}"
    );

    // A release ends with the claim's deletion, seen by the claim's own filter.
    let mut claim_events = alice
        .events(&format!("/v1/events?claim={id}"), None)
        .await
        .unwrap();
    let released = alice
        .send(reqwest::Method::DELETE, &format!("/v1/claims/{id}"), None)
        .await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    let gone = read_until(&mut claim_events, "the claim deleted", |e| {
        e.data["action"] == "deleted"
    })
    .await;
    // Its host's last event as its host: unbound, available again.
    assert!(
        gone.iter()
            .all(|e| claim_of(e) == Some(id.as_str()) || e.data["host"]["id"] == host.as_str()),
        "{gone:#?}"
    );
    assert!(
        gone.iter()
            .any(|e| e.data["host"]["provisioning_state"] == "available"
                && e.data["host"]["claim"].is_null())
    );
    assert!(
        gone.iter()
            .any(|e| e.data["host"]["provisioning_state"] == "deprovisioning")
    );
}

#[tokio::test]
async fn a_stream_refuses_what_it_cannot_follow_and_ends_with_its_token() {
    let site = Site::start(1).await;
    let admin = site.server.admin();
    let (alice_id, alice_token) = admin.granted_tenant("alice", &site.pm).await;
    let (_, bob_token) = admin.granted_tenant("bob", &site.pm).await;
    let alice = site.server.client(Some(&alice_token));
    let bob = site.server.client(Some(&bob_token));
    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": site.pm, "image": {"url": site.images.url("/os.iso")}}),
        )
        .await
        .view::<ClaimView>();
    let id = claim.id.as_str();
    let host = claim.host.as_ref().expect("bound").id.as_str();

    let refused = |reply: Result<EventStream, podium_tests::Reply>| match reply {
        Ok(_) => panic!("a stream was opened"),
        Err(reply) => reply,
    };
    let none = refused(site.server.client(None).events("/v1/events", None).await);
    assert_eq!(none.status, StatusCode::UNAUTHORIZED, "{}", none.text);
    for (path, header, field) in [
        ("/v1/events", Some("seven"), "Last-Event-ID"),
        ("/v1/events", Some("-1"), "Last-Event-ID"),
        ("/v1/events", Some("999999999"), "Last-Event-ID"),
        ("/v1/events?kind=claim,cow", None, "kind"),
        ("/v1/events?after=x", None, "after"),
        ("/v1/events?colour=red", None, "colour"),
        // An id that is none is a mistake, not something to look for.
        ("/v1/events?claim=", None, "claim"),
        ("/v1/events?host=web-1", None, "host"),
        ("/v1/events?operation=%20", None, "operation"),
    ] {
        let reply = refused(admin.events(path, header).await);
        assert!(
            reply.status.is_client_error(),
            "{path} {header:?}: {}",
            reply.text
        );
        assert_eq!(reply.field(), field, "{path} {header:?}: {}", reply.text);
    }
    // Another tenant's claim, host or operation does not exist for bob.
    let ops = alice.get(&format!("/v1/claims/{id}/operations")).await;
    let op = ops.body["items"][0]["id"].as_str().unwrap().to_owned();
    for path in [
        format!("/v1/events?claim={id}"),
        format!("/v1/events?host={host}"),
        format!("/v1/events?operation={op}"),
    ] {
        let reply = refused(bob.events(&path, None).await);
        assert_eq!(
            reply.status,
            StatusCode::NOT_FOUND,
            "{path}: {}",
            reply.text
        );
        assert!(alice.events(&path, None).await.is_ok(), "{path}");
    }

    // A revoked token ends its stream, with an error event saying why.
    let mut stream = alice.events("/v1/events", None).await.unwrap();
    revoke_first_token(&admin, &alice_id).await;
    let read = read_until(&mut stream, "the error event", |e| e.name == "error").await;
    let last = read.last().unwrap();
    assert_eq!(last.name, "error", "{last:?}");
    assert_eq!(last.data["error"]["code"], "unauthenticated", "{last:?}");
    assert!(stream.ends_within(Duration::from_secs(5)).await);
}

/// Every event a stream sends is one the OpenAPI document describes for `GET /v1/events`, as
/// `jsonschema` (not Podium) reads the document: `ready`, the changes, `reset` on a stream
/// resumed from before what is kept, and `error` at the end of a revoked token's stream.
#[tokio::test]
async fn every_event_a_stream_sends_is_one_its_document_describes() {
    let retention = Duration::from_secs(2);
    let site = Site::start_with(SushyConfig::with_systems(1), |c| {
        c.event_retention = retention
    })
    .await;
    let admin = site.server.admin();
    let (tenant_id, token) = admin.granted_tenant("alice", &site.pm).await;
    let alice = site.server.client(Some(&token));
    let mut stream = alice.events("/v1/events", None).await.unwrap();
    alice
        .created(
            "/v1/claims",
            json!({"pod_manager": site.pm, "image": {"url": site.images.url("/os.iso")}}),
        )
        .await;
    let mut sent = read_until(&mut stream, "an operation's event", |e| {
        e.name == "operation"
    })
    .await;
    sent.extend(read_until(&mut stream, "a host's event", |e| e.name == "host").await);
    sent.push(stream.ready.clone().expect("the ready event"));
    let first = sent[0].id.clone();

    // Resumed from before what is kept, once the expiry task forgot it.
    tokio::time::sleep(retention + Duration::from_millis(500)).await;
    let run = admin.post("/v1/admin/tasks/expiry/run", json!({})).await;
    assert!(run.status.is_success(), "{}", run.text);
    let reset = eventually(Duration::from_secs(20), "a reset event", || async {
        let mut resumed = alice.events("/v1/events", Some(&first)).await.ok()?;
        let event = resumed.next_within(Duration::from_secs(1)).await?;
        (event.name == "reset").then_some(event)
    })
    .await;
    sent.push(reset);

    // A revoked token's stream ends with an error event.
    revoke_first_token(&admin, &tenant_id).await;
    sent.extend(read_until(&mut stream, "the error event", |e| e.name == "error").await);

    let kinds: std::collections::BTreeSet<&str> = sent.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        kinds,
        ["claim", "error", "host", "operation", "ready", "reset"].into(),
        "{sent:#?}"
    );
    // As the wire carries it: `data` is text, whose content is JSON.
    let as_read = |e: &SentEvent| json!({"event": e.name, "id": e.id, "data": e.data.to_string()});
    let mut instances: Vec<Value> = sent.iter().map(as_read).collect();
    // And the check bites: a `ready` without where it starts, a change without its seq, data
    // that is no JSON, data as an object (what the document once described).
    instances.push(json!({"event": "ready", "id": "1", "data": "{}"}));
    let mut no_seq = sent[0].data.clone();
    no_seq.as_object_mut().unwrap().remove("seq");
    instances.push(json!({"event": sent[0].name, "id": sent[0].id, "data": no_seq.to_string()}));
    instances.push(json!({"event": "ready", "id": "1", "data": "{\"after\": 1"}));
    instances.push(json!({"event": "ready", "id": "1", "data": {"after": 1}}));
    let document = site.server.client(None).get("/openapi.json").await.body;
    let verdicts =
        podium_tests::api_tools::conforms(&document, "/v1/events", "text/event-stream", &instances)
            .await
            .unwrap();
    let (sent_verdicts, bad_verdicts) = verdicts.split_at(sent.len());
    for (event, verdict) in sent.iter().zip(sent_verdicts) {
        assert_eq!(verdict, &None, "{event:?} is not as documented");
    }
    assert!(
        bad_verdicts.iter().all(Option::is_some),
        "events the document does not describe passed: {bad_verdicts:?}"
    );
}

#[tokio::test]
async fn a_token_holds_a_bounded_number_of_streams_and_gets_one_back_when_one_ends() {
    let server = TestServer::start_with(|c| c.event_streams_per_token = 3).await;
    let admin = server.admin();
    let tenant = admin
        .post("/v1/tenants", json!({"name": "busy"}))
        .await
        .body;
    let tenant_id = tenant["id"].as_str().unwrap();
    let token = admin
        .post(&format!("/v1/tenants/{tenant_id}/tokens"), json!({}))
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let busy = server.client(Some(&token));
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(busy.events("/v1/events", None).await.unwrap());
    }
    let refused = match busy.events("/v1/events", None).await {
        Ok(_) => panic!("a fourth stream was opened"),
        Err(reply) => reply,
    };
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        refused.text
    );
    assert_eq!(refused.code(), "too_many_requests", "{}", refused.text);
    assert!(
        refused.message().contains("--event-streams-per-token"),
        "{}",
        refused.text
    );
    // The answer says when to ask again.
    let raw = reqwest::Client::new()
        .get(format!("{}/v1/events", server.url))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(raw.headers()["retry-after"], "10");
    // Another token has its own bound; a stream that ends gives its place back.
    assert!(admin.events("/v1/events", None).await.is_ok());
    drop(open.pop());
    eventually(Duration::from_secs(60), "a stream's place back", || async {
        busy.events("/v1/events", None).await.ok()
    })
    .await;
}

#[tokio::test]
async fn concurrent_changes_reach_a_live_watcher_exactly_as_they_read_afterwards() {
    let site = Site::start(3).await;
    let admin = site.server.admin();
    // From the very first event on, live.
    let mut live = admin.events("/v1/events?after=0", None).await.unwrap();
    let mut tenants = Vec::new();
    for i in 0..6 {
        let (_, token) = admin.granted_tenant(&format!("t{i}"), &site.pm).await;
        tenants.push(site.server.client(Some(&token)));
    }
    // Six tenants claim five hosts each at once (three bind; the rest wait), while the admin
    // powers the hosts through maintenance: many writers, committing in any order.
    let hosts: Vec<String> = admin
        .hosts_all(&format!("&pod_manager={}", site.pm))
        .await
        .into_iter()
        .filter(|h| h.kind == HostKind::System)
        .map(|h| h.id.to_string())
        .collect();
    let body = json!({"pod_manager": site.pm, "image": {"url": site.images.url("/os.iso")},
                      "online": false});
    let claims = tenants
        .iter()
        .flat_map(|t| (0..5).map(move |_| t))
        .map(|t| {
            let body = body.clone();
            async move { t.post("/v1/claims", body).await }
        });
    let maintenance = hosts.iter().map(|h| {
        let admin = admin.clone();
        async move {
            admin
                .put(
                    &format!("/v1/hosts/{h}/maintenance"),
                    json!({"reason": "events test"}),
                )
                .await
        }
    });
    let (created, _) = tokio::join!(
        futures::future::join_all(claims),
        futures::future::join_all(maintenance)
    );
    let ids: Vec<Value> = created
        .iter()
        .map(|r| {
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
            r.body["id"].clone()
        })
        .collect();
    // The live watcher sees every claim created, in increasing order, each once.
    let mut seen: Vec<SentEvent> = Vec::new();
    while !ids.iter().all(|id| {
        seen.iter()
            .any(|e| e.data["claim"]["id"] == *id && e.data["action"] == "created")
    }) {
        let e = live
            .next_within(Duration::from_secs(30))
            .await
            .unwrap_or_else(|| panic!("claims missing after {} events", seen.len()));
        seen.push(e);
    }
    let live_seqs = seqs(&seen);
    assert!(live_seqs.windows(2).all(|w| w[0] < w[1]), "{live_seqs:?}");
    // A watcher that reads the same span afterwards reads exactly the same events.
    let mut later = admin.events("/v1/events?after=0", None).await.unwrap();
    let last = *live_seqs.last().unwrap();
    let replay = read_until(&mut later, "the live watcher's last event", |e| {
        e.data["seq"].as_i64() == Some(last)
    })
    .await;
    assert_eq!(seqs(&replay), live_seqs, "the live watcher missed events");
    let as_read =
        |events: &[SentEvent]| -> Vec<Value> { events.iter().map(|e| e.data.clone()).collect() };
    assert_eq!(as_read(&replay), as_read(&seen));
}

/// A server shutting down ends its event streams (the listener drains only once they close).
#[tokio::test]
async fn streams_end_at_shutdown_so_the_server_stops() {
    let site = Site::start(1).await;
    let admin = site.server.admin();
    let mut stream = admin.events("/v1/events", None).await.unwrap();
    assert!(
        site.server.stop().await,
        "the server did not stop with a stream open"
    );
    assert!(stream.ends_within(Duration::from_secs(5)).await);
}

/// The order a watcher relies on is the order of commits, not of writes: a transaction that
/// changed a claim first but commits last still reaches a watcher that has already seen a later
/// change. On SQLite one writer at a time makes the two orders one; on PostgreSQL a change
/// numbered when written would be skipped here, so this holds a transaction open by hand.
#[tokio::test]
async fn a_change_committed_late_still_reaches_a_watcher_past_it() {
    use sqlx::Connection;
    let site = Site::start(2).await;
    if !site.server.database_url().starts_with("postgres") {
        return;
    }
    let admin = site.server.admin();
    let (_, token) = admin.granted_tenant("alice", &site.pm).await;
    let alice = site.server.client(Some(&token));
    let body = json!({"pod_manager": site.pm, "image": {"url": site.images.url("/os.iso")},
                      "online": false});
    let first: ClaimView = alice.created("/v1/claims", body.clone()).await.view();
    let second: ClaimView = alice.created("/v1/claims", body).await.view();
    let mut live = admin.events("/v1/events?kind=claim", None).await.unwrap();

    // The first claim changes in a transaction left open...
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(&site.server.database_url())
        .await
        .unwrap();
    let mut held = db.begin().await.unwrap();
    sqlx::query("UPDATE claims SET reason = 'held open by the test' WHERE id = $1")
        .bind(first.id.as_str())
        .execute(&mut *held)
        .await
        .unwrap();
    // ...while the second changes and commits, and the watcher reads it.
    let patched = alice
        .patch(
            &format!("/v1/claims/{}", second.id),
            json!({"online": true}),
        )
        .await;
    assert!(patched.status.is_success(), "{}", patched.text);
    let seen = read_until(&mut live, "the second claim's change", |e| {
        e.data["claim"]["id"] == second.id.as_str()
    })
    .await;
    // Then the first commits: the watcher, past the second's event, still gets it.
    held.commit().await.unwrap();
    let later = read_until(&mut live, "the change committed late", |e| {
        e.data["claim"]["id"] == first.id.as_str()
    })
    .await;
    let before = seen.last().unwrap().data["seq"].as_i64().unwrap();
    let after = later.last().unwrap().data["seq"].as_i64().unwrap();
    assert!(before < after, "{before} then {after}");
    assert_eq!(
        later.last().unwrap().data["claim"]["reason"],
        "held open by the test"
    );
}
