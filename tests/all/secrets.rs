//! No API response and no log line carries a BMC password or a token secret: a `podium serve`
//! process logging at debug level is driven through everything that handles one (pod managers
//! with right and wrong credentials, hosts with their own BMC, tokens made, used, revoked and
//! forged, claims, the Redfish service with a token and a session, errors), then its log and
//! every answer are searched for each secret.

use std::time::Duration;

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{ADMIN_TOKEN, BMC_PASSWORD, ProcessServer, Reply, eventually};
use podium_types::views::{
    ClaimView, HostView, List, PodManagerView, TenantView, TokenCreatedView,
};
use reqwest::StatusCode;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");
const WRONG_PASSWORD: &str = "wr0ng-bmc-Passw0rd-for-grep";
const HEADER_SECRET: &str = "event-header-S3cret-for-grep";

#[tokio::test]
async fn no_response_and_no_log_line_carries_a_secret() {
    let mut config = SushyConfig::with_systems(2);
    config.basic_auth = Some(("admin".into(), BMC_PASSWORD.into()));
    let bmc = Sushy::start(config).await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let server = ProcessServer::start_logging(
        BIN,
        data.path(),
        database.as_ref().map(|d| d.url.as_str()),
        "debug",
        &["--probe-interval", "1", "--sync-interval", "1"],
    )
    .await;
    let admin = server.admin();
    // Every answer except the two that hand out a token once.
    let mut answers: Vec<Reply> = Vec::new();

    let pm = admin.created("/v1/pod_managers",
            json!({"name": "site", "url": bmc.url(), "auth": {"username": "admin", "password": BMC_PASSWORD}})).await;
    let pm_id = pm.view::<PodManagerView>().uuid.to_string();
    answers.push(pm);
    // The same BMC with a wrong password: refused by the BMC, reported without the password.
    let wrong = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "wrong", "url": bmc.url().replace("127.0.0.1", "localhost"),
                   "auth": {"username": "admin", "password": WRONG_PASSWORD}}),
        )
        .await;
    let wrong_id = wrong.body["uuid"].as_str().map(str::to_owned);
    answers.push(wrong);
    let hosts = eventually(Duration::from_secs(30), "hosts inspected", || async {
        let hosts = admin
            .get(&format!("/v1/hosts?pod_manager={pm_id}&state=available"))
            .await;
        (hosts.body["items"].as_array()?.len() >= 2).then_some(hosts)
    })
    .await;
    let host_id = hosts.view::<List<HostView>>().items[0].id.to_string();
    answers.push(hosts);
    if let Some(id) = wrong_id {
        let offline = eventually(
            Duration::from_secs(30),
            "wrong credentials seen",
            || async {
                let pm = admin.get(&format!("/v1/pod_managers/{id}")).await;
                (pm.body["status"] == "offline").then_some(pm)
            },
        )
        .await;
        answers.push(offline);
    }
    // A host with its own BMC and a (bad) password: stored sealed, never shown.
    answers.push(
        admin
            .post(
                "/v1/hosts",
                json!({"pod_manager": pm_id, "bmc": {"url": "http://127.0.0.1:9",
                       "auth": {"username": "root", "password": WRONG_PASSWORD}}}),
            )
            .await,
    );
    answers.push(admin.get(&format!("/v1/hosts/{host_id}")).await);
    answers.push(admin.get("/v1/pod_managers").await);
    answers.push(
        admin
            .post(
                &format!("/v1/hosts/{host_id}/power"),
                json!({"action": "on"}),
            )
            .await,
    );
    // BIOS settings: the driver's answer (here, that the BMC has none) and a change.
    answers.push(admin.get(&format!("/v1/hosts/{host_id}/bios")).await);
    answers.push(
        admin
            .patch(
                &format!("/v1/hosts/{host_id}/bios"),
                json!({"attributes": {"QuietBoot": false}}),
            )
            .await,
    );

    let tenant = admin.post("/v1/tenants", json!({"name": "acme"})).await;
    let tenant_id = tenant.view::<TenantView>().id.to_string();
    answers.push(tenant);
    answers.push(
        admin
            .post(
                "/v1/grants",
                json!({"tenant": tenant_id, "pod_manager": pm_id}),
            )
            .await,
    );
    let made = admin
        .post(&format!("/v1/tenants/{tenant_id}/tokens"), json!({}))
        .await;
    let TokenCreatedView {
        token: tenant_token,
        view: tenant_token_view,
    } = made.view();
    let tenant_token_id = tenant_token_view.id.to_string();
    let made = admin
        .post("/v1/admin/tokens", json!({"read_only": true}))
        .await;
    let admin_token = made.view::<TokenCreatedView>().token;
    answers.push(admin.get(&format!("/v1/tenants/{tenant_id}/tokens")).await);
    answers.push(admin.get("/v1/admin/tokens").await);

    let acme = server.client(Some(&tenant_token));
    let claim = acme
        .created(
            "/v1/claims",
            json!({"pod_manager": pm_id, "image": {"url": "http://images.invalid/os.qcow2"}}),
        )
        .await;
    let claim_id = claim.view::<ClaimView>().id.to_string();
    answers.push(claim);
    answers.push(acme.get(&format!("/v1/claims/{claim_id}")).await);
    answers.push(acme.get("/v1/me").await);
    // A config drive: its URL (shown once, to its maker) is the credential of the download.
    assert_eq!(answers[answers.len() - 2].body["state"], "bound");
    let drive = acme
        .created(&format!("/v1/claims/{claim_id}/config_drive"), json!({}))
        .await;
    let drive_url = drive.body["url"].as_str().unwrap().to_owned();
    let drive_token = drive_url
        .rsplit('/')
        .next()
        .unwrap()
        .trim_end_matches(".img")
        .to_owned();
    let drive_path = &drive_url[drive_url.find("/v1/").unwrap()..];
    assert_eq!(
        server.client(None).get_bytes(drive_path).await.0,
        StatusCode::OK
    );
    answers.push(acme.get("/v1/pod_managers").await);
    // The tenant's own Redfish tools: Basic with the token, a session, a reset, a wrong token.
    let claimed = acme.get(&format!("/v1/claims/{claim_id}")).await.body["host"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let base = server.client(None).base().to_owned();
    let http = reqwest::Client::new();
    let reply = |response: reqwest::Response| async move {
        let status = response.status();
        let headers = format!("{:?}", response.headers());
        let text = response.text().await.unwrap();
        Reply {
            status,
            body: serde_json::from_str(&text).unwrap_or_default(),
            text: format!("{headers}\n{text}"),
        }
    };
    let system = format!("{base}/redfish/v1/Systems/{claimed}");
    for path in ["/redfish/v1/Systems".to_owned(), system.replace(&base, "")] {
        let r = http
            .get(format!("{base}{path}"))
            .basic_auth("acme", Some(&tenant_token));
        answers.push(reply(r.send().await.unwrap()).await);
    }
    let opened = http
        .post(format!("{base}/redfish/v1/SessionService/Sessions"))
        .json(&json!({"UserName": "acme", "Password": tenant_token}))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), StatusCode::CREATED);
    let session_token = opened.headers()["x-auth-token"]
        .to_str()
        .unwrap()
        .to_owned();
    let opened = opened.text().await.unwrap();
    assert!(!opened.contains(&session_token) && !opened.contains(&tenant_token));
    let reset = http
        .post(format!("{system}/Actions/ComputerSystem.Reset"))
        .header("X-Auth-Token", &session_token)
        .json(&json!({"ResetType": "ForceRestart"}))
        .send()
        .await
        .unwrap();
    answers.push(reply(reset).await);
    let refused = http
        .post(format!("{base}/redfish/v1/SessionService/Sessions"))
        .json(&json!({"UserName": "acme", "Password": forged_of(&tenant_token)}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    answers.push(reply(refused).await);
    let bmc_system = format!(
        "/redfish/v1/Systems/{}",
        answers[answers.len() - 3].body["UUID"].as_str().unwrap()
    );
    for answer in &answers[answers.len() - 4..] {
        for leak in [bmc.url(), bmc_system.clone()] {
            assert!(
                !answer.text.contains(&leak),
                "a Redfish answer leaks {leak}: {}",
                answer.text
            );
        }
    }
    // Event subscriptions whose headers carry a credential: sealed, never shown, never logged
    // (their deliveries fail: the name resolves nowhere, and the failure is logged).
    let subscriptions = format!("{base}/redfish/v1/EventService/Subscriptions");
    for headers in [
        json!({"Authorization": format!("Bearer {HEADER_SECRET}")}),
        json!([{"X-Bad": format!("{HEADER_SECRET}\u{1}")}]),
    ] {
        let r = http
            .post(&subscriptions)
            .basic_auth("acme", Some(&tenant_token))
            .json(
                &json!({"Destination": "https://events.example.invalid/acme",
                          "HttpHeaders": headers}),
            );
        answers.push(reply(r.send().await.unwrap()).await);
    }
    let listed = reply(
        http.get(&subscriptions)
            .basic_auth("acme", Some(&tenant_token))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let member = listed.body["Members"][0]["@odata.id"]
        .as_str()
        .expect("the subscription made")
        .to_owned();
    answers.push(listed);
    answers.push(
        reply(
            http.get(format!("{base}{member}"))
                .basic_auth("acme", Some(&tenant_token))
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    answers.push(server.client(Some(&admin_token)).get("/v1/hosts").await);
    answers.push(
        server
            .client(Some(&admin_token))
            .post("/v1/tenants", json!({"name": "nope"}))
            .await,
    );
    // Forged, truncated and revoked tokens.
    let forged = forged_of(&tenant_token);
    answers.push(server.client(Some(&forged)).get("/v1/me").await);
    answers.push(server.client(Some(&tenant_token[..20])).get("/v1/me").await);
    answers.push(
        admin
            .delete(&format!("/v1/tenants/{tenant_id}/tokens/{tenant_token_id}"))
            .await,
    );
    let revoked = acme.get("/v1/claims").await;
    assert_eq!(revoked.status, StatusCode::UNAUTHORIZED);
    answers.push(revoked);
    // Malformed bodies that carry a password.
    answers.push(
        admin
            .post(
                "/v1/pod_managers",
                json!({"name": "bad name!", "url": bmc.url(), "auth": {"username": "a", "password": BMC_PASSWORD}}),
            )
            .await,
    );
    answers.push(
        admin
            .post(
                "/v1/pod_managers",
                json!({"name": "bad-url", "url": format!("http://admin:{BMC_PASSWORD}@bmc.invalid")}),
            )
            .await,
    );
    // Let the background probes and syncs run with both credentials a few times.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let log = server.log();
    server.kill9().await;

    assert!(log.lines().count() > 20, "the server logged: {log}");
    let secrets = [
        ("the BMC password", BMC_PASSWORD),
        ("a wrong BMC password", WRONG_PASSWORD),
        ("the tenant token", tenant_token.as_str()),
        ("an admin token", admin_token.as_str()),
        ("the bootstrap admin token", ADMIN_TOKEN),
        ("the config drive token", drive_token.as_str()),
        ("a Redfish session token", session_token.as_str()),
        ("an event subscription's header", HEADER_SECRET),
    ];
    for (what, secret) in secrets {
        for (i, answer) in answers.iter().enumerate() {
            assert!(
                !answer.text.contains(secret),
                "answer {i} ({}) carries {what}: {}",
                answer.status,
                answer.text
            );
        }
        if let Some(line) = log.lines().find(|l| l.contains(secret)) {
            panic!("the log carries {what}: {line}");
        }
    }
}

/// A token with its last character changed.
fn forged_of(token: &str) -> String {
    format!("{}x", &token[..token.len() - 1])
}
