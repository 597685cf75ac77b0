//! Tenants and credentials: tokens shown once and stored hashed, read-only and expiring tokens,
//! revocation at once, and an authorization sweep over every route of the OpenAPI document.

use podium_tests::{ADMIN_TOKEN, Client, TestServer};
use podium_types::views::{GrantView, PodManagerView, TenantView, TokenCreatedView};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn tenant(admin: &Client, name: &str) -> String {
    let reply = admin.created("/v1/tenants", json!({"name": name})).await;
    reply.view::<TenantView>().id.to_string()
}

/// A token made at `path`: its secret and its id.
async fn token(admin: &Client, path: &str, body: Value) -> (String, String) {
    let created = admin.created(path, body).await.view::<TokenCreatedView>();
    (created.token, created.view.id.to_string())
}

#[tokio::test]
async fn tenant_tokens_are_shown_once_and_work_until_revoked() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let id = tenant(&admin, "acme").await;
    let (secret, token_id) = token(&admin, &format!("/v1/tenants/{id}/tokens"), json!({})).await;
    assert!(secret.starts_with("pdm_"));

    let me = server.client(Some(&secret)).get("/v1/me").await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text);
    assert_eq!(me.body["role"], "tenant");
    assert_eq!(me.body["tenant"], id.as_str());
    assert_eq!(me.body["tenant_name"], "acme", "{}", me.text);

    let listed = admin.get(&format!("/v1/tenants/{id}/tokens")).await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(listed.body["items"][0]["id"], token_id.as_str());
    assert!(
        !listed.text.contains(&secret),
        "the list never shows a secret"
    );

    // Stored hashed: the database file does not hold the secret.
    let db = std::fs::read(server.data_dir.path().join("podium.db")).unwrap_or_default();
    assert!(!db.windows(secret.len()).any(|w| w == secret.as_bytes()));

    let revoked = admin
        .delete(&format!("/v1/tenants/{id}/tokens/{token_id}"))
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT, "{}", revoked.text);
    let after = server.client(Some(&secret)).get("/v1/me").await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
    assert_eq!(after.message(), "this token was revoked");
}

#[tokio::test]
async fn expired_tokens_are_refused_and_read_only_tokens_cannot_write() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let (short, _) = token(&admin, "/v1/admin/tokens", json!({"expires_in": 1})).await;
    assert_eq!(
        server.client(Some(&short)).get("/v1/plugins").await.status,
        StatusCode::OK
    );
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let expired = server.client(Some(&short)).get("/v1/plugins").await;
    assert_eq!(expired.status, StatusCode::UNAUTHORIZED);
    assert_eq!(expired.message(), "this token has expired");

    let (reader, _) = token(&admin, "/v1/admin/tokens", json!({"read_only": true})).await;
    let reader = server.client(Some(&reader));
    assert_eq!(reader.get("/v1/tenants").await.status, StatusCode::OK);
    let write = reader.post("/v1/tenants", json!({"name": "nope"})).await;
    assert_eq!(write.status, StatusCode::FORBIDDEN, "{}", write.text);

    let past = admin
        .post(
            "/v1/admin/tokens",
            json!({"expires_at": "2001-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(past.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(past.field(), "expires_at");
    assert!(past.message().contains("past"), "{}", past.text);
    let garbled = admin
        .post("/v1/admin/tokens", json!({"expires_at": "tomorrow"}))
        .await;
    assert_eq!(garbled.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(garbled.field(), "expires_at");
    assert!(garbled.message().contains("RFC 3339"), "{}", garbled.text);
    let dup = admin.post("/v1/tenants", json!({"name": "t1"})).await;
    assert_eq!(dup.status, StatusCode::CREATED);
    let dup = admin.post("/v1/tenants", json!({"name": "t1"})).await;
    assert_eq!(dup.status, StatusCode::CONFLICT);
    assert_eq!(dup.field(), "name");
}

/// Tenants and pools are found by their exact name (what the CLI resolves a name with).
#[tokio::test]
async fn tenants_and_pools_are_listed_by_name() {
    let server = TestServer::start().await;
    let admin = server.admin();
    for name in ["acme", "acme2"] {
        admin.created("/v1/tenants", json!({"name": name})).await;
        admin
            .created(
                "/v1/ip_pools",
                json!({"name": name, "ranges": [{"subnet": "10.9.0.0/24"}], "prefix": 24}),
            )
            .await;
    }
    for collection in ["/v1/tenants", "/v1/ip_pools"] {
        let names = async |query: &str| -> Vec<String> {
            let reply = admin.get(&format!("{collection}{query}")).await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
            reply.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names("").await.len(), 2, "{collection}");
        assert_eq!(names("?name=acme").await, ["acme"], "{collection}");
        assert!(names("?name=acm").await.is_empty(), "{collection}");
    }
}

/// Every route of the OpenAPI document (so a new endpoint cannot be forgotten), with no token,
/// a malformed token, an unknown token, a tenant token, a read-only admin token and the admin.
#[tokio::test]
async fn authorization_sweep_over_every_route() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let tenant_id = tenant(&admin, "sweep").await;
    let (tenant_token, _) = token(
        &admin,
        &format!("/v1/tenants/{tenant_id}/tokens"),
        json!({}),
    )
    .await;
    let (reader_token, _) = token(&admin, "/v1/admin/tokens", json!({"read_only": true})).await;
    let openapi = server.client(None).get("/openapi.json").await.body;
    // Public: the config drive URL is its own credential (a token in the path).
    let public = [
        "/healthz",
        "/livez",
        "/openapi.json",
        "/v1/config_drives/{name}",
    ];
    // Routes any authenticated caller may use.
    let anyone = [
        "/v1/me",
        "/v1/audit",
        "/v1/events",
        "/v1/claims",
        "/v1/claims/{id}",
        "/v1/claims/{id}/rendered",
        "/v1/claims/{id}/operations",
        "/v1/claims/{id}/config_drive",
        "/v1/claims/{id}/bios",
        "/v1/claims/{id}/bios/reset",
        "/v1/claims/{id}/secure_boot",
        "/v1/claims/{id}/firmware",
        "/v1/claims/{id}/firmware/update",
        "/v1/claims/{id}/hardware",
        "/v1/me/pod_managers",
        "/v1/me/pod_managers/{uuid}",
        "/v1/me/pod_managers/{uuid}/chassis",
    ];
    // Routes only a tenant may use: an admin is refused.
    let tenant_only = [
        ("POST", "/v1/claims"),
        ("GET", "/v1/me/pod_managers"),
        ("GET", "/v1/me/pod_managers/{uuid}"),
        ("GET", "/v1/me/pod_managers/{uuid}/chassis"),
    ];
    let mut checked = 0;
    for (path, ops) in openapi["paths"].as_object().unwrap() {
        let concrete = path
            .split('/')
            .map(|seg| {
                if seg.starts_with('{') {
                    "00000000-0000-0000-0000-000000000000"
                } else {
                    seg
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        // An event stream never ends: one of a claim nobody has is refused (404) once the
        // caller is known, which is what this sweep checks.
        let concrete = if path == "/v1/events" {
            format!("{concrete}?claim=00000000-0000-0000-0000-000000000000")
        } else {
            concrete
        };
        for method in ops.as_object().unwrap().keys() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let body = (method != Method::GET && method != Method::DELETE).then(|| json!({}));
            let send = |token: Option<&str>| {
                let client = server.client(token);
                let (method, concrete, body) = (method.clone(), concrete.clone(), body.clone());
                async move {
                    client
                        .send(method, &concrete, body.map(podium_tests::Body::Json))
                        .await
                }
            };
            if public.contains(&path.as_str()) {
                if path.starts_with("/v1/config_drives/") {
                    assert_eq!(send(None).await.status, StatusCode::NOT_FOUND, "{path}");
                }
                continue;
            }
            for bad in [
                None,
                Some("garbage"),
                Some("pdm_unknown-token-unknown-token-00"),
            ] {
                let reply = send(bad).await;
                assert_eq!(
                    reply.status,
                    StatusCode::UNAUTHORIZED,
                    "{method} {path} with {bad:?}"
                );
                assert_eq!(reply.code(), "unauthenticated");
            }
            let as_tenant = send(Some(&tenant_token)).await;
            if anyone.contains(&path.as_str()) {
                assert!(
                    as_tenant.status != StatusCode::UNAUTHORIZED
                        && as_tenant.status != StatusCode::FORBIDDEN,
                    "{method} {path} as tenant: {}",
                    as_tenant.text
                );
            } else {
                assert_eq!(
                    as_tenant.status,
                    StatusCode::FORBIDDEN,
                    "{method} {path} as tenant: {}",
                    as_tenant.text
                );
            }
            let as_reader = send(Some(&reader_token)).await;
            let only_tenants = tenant_only.contains(&(method.as_str(), path.as_str()));
            if method == Method::GET && !only_tenants {
                assert_ne!(
                    as_reader.status,
                    StatusCode::FORBIDDEN,
                    "{method} {path} read-only"
                );
            } else {
                assert_eq!(
                    as_reader.status,
                    StatusCode::FORBIDDEN,
                    "{method} {path} read-only: {}",
                    as_reader.text
                );
            }
            let as_admin = send(Some(ADMIN_TOKEN)).await;
            if only_tenants {
                assert_eq!(
                    as_admin.status,
                    StatusCode::FORBIDDEN,
                    "{method} {path} as admin"
                );
                checked += 1;
                continue;
            }
            assert!(
                as_admin.status != StatusCode::UNAUTHORIZED
                    && as_admin.status != StatusCode::FORBIDDEN,
                "{method} {path} as admin: {}",
                as_admin.text
            );
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} routes checked");
}

#[tokio::test]
async fn grants_name_a_tenant_and_a_pod_manager_and_refuse_bad_references() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let tenant_id = tenant(&admin, "grantee").await;
    let pm = admin.created("/v1/pod_managers",
            json!({"name": "site", "url": "http://127.0.0.1:9", "auth": {"username": "u", "password": "p"}})).await;
    let pm = pm.view::<PodManagerView>().uuid.to_string();

    let minimal = admin
        .created(
            "/v1/grants",
            json!({"tenant": tenant_id, "pod_manager": pm}),
        )
        .await
        .view::<GrantView>();
    assert_eq!(minimal.tenant.to_string(), tenant_id);
    assert_eq!(minimal.pod_manager.to_string(), pm);
    assert!(minimal.selector.is_empty());
    assert_eq!(minimal.max_hosts, None);
    let id = minimal.id.to_string();

    let again = admin
        .post(
            "/v1/grants",
            json!({"tenant": tenant_id, "pod_manager": pm}),
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);

    for (body, field) in [
        (json!({"tenant": "nope", "pod_manager": pm}), "tenant"),
        (
            json!({"tenant": tenant_id, "pod_manager": "nope"}),
            "pod_manager",
        ),
        (
            json!({"tenant": tenant_id, "pod_manager": pm, "max_hosts": 0}),
            "max_hosts",
        ),
        (
            json!({"tenant": tenant_id, "pod_manager": pm, "selector": {"bad key!": "x"}}),
            "selector.bad key!",
        ),
        (json!({"tenant": tenant_id}), "pod_manager"),
    ] {
        let reply = admin.post("/v1/grants", body.clone()).await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            reply.text
        );
        assert_eq!(reply.field(), field, "{body}: {}", reply.text);
    }

    let listed = admin.get(&format!("/v1/grants?tenant={tenant_id}")).await;
    assert_eq!(listed.body["items"].as_array().unwrap().len(), 1);
    assert_eq!(
        admin.get(&format!("/v1/grants/{id}")).await.status,
        StatusCode::OK
    );
    // Deleting the tenant removes its grants.
    assert_eq!(
        admin
            .delete(&format!("/v1/tenants/{tenant_id}"))
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        admin.get(&format!("/v1/grants/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
}

/// A tenant reads the pod managers it was granted (name, location, status, its grant's
/// selector and limit), by name too; never a URL or credentials; another pod manager is not
/// found; an admin is pointed at the admin's lists.
#[tokio::test]
async fn a_tenant_sees_the_pod_managers_it_was_granted_and_nothing_of_their_bmcs() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let mut uuids = Vec::new();
    for (name, url) in [
        ("rack1", "http://127.0.0.1:9"),
        ("rack2", "http://127.0.0.1:10"),
    ] {
        let pm = admin
            .created(
                "/v1/pod_managers",
                json!({"name": name, "url": url, "location": format!("hall {name}"),
                       "auth": {"username": "root", "password": "bmc-secret-91c2"}}),
            )
            .await;
        uuids.push(pm.view::<PodManagerView>().uuid.to_string());
    }
    let acme = tenant(&admin, "acme").await;
    let grant = admin
        .created(
            "/v1/grants",
            json!({"tenant": acme, "pod_manager": uuids[0], "selector": {"rack": "r1"},
                   "max_hosts": 2}),
        )
        .await;
    let (secret, _) = token(&admin, &format!("/v1/tenants/{acme}/tokens"), json!({})).await;
    let acme = server.client(Some(&secret));

    let listed = acme.get("/v1/me/pod_managers").await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    let items = listed.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{}", listed.text);
    let rack1 = &items[0];
    assert_eq!(rack1["uuid"], uuids[0].as_str());
    assert_eq!(rack1["name"], "rack1");
    assert_eq!(rack1["location"], "hall rack1");
    assert_eq!(rack1["network_config_owner"], "admin");
    assert_eq!(
        rack1["grant"],
        json!({"id": grant.body["id"], "selector": {"rack": "r1"}, "max_hosts": 2,
               "chassis": null, "created_at": grant.body["created_at"]})
    );
    for secret in ["127.0.0.1:9", "bmc-secret", "root", "driver", "sha256"] {
        assert!(!listed.text.contains(secret), "{secret} in {}", listed.text);
    }
    // By name; one not granted is not there, nor found by its uuid.
    let named = acme.get("/v1/me/pod_managers?name=rack1").await;
    assert_eq!(
        named.body["items"][0]["uuid"],
        uuids[0].as_str(),
        "{}",
        named.text
    );
    let other = acme.get("/v1/me/pod_managers?name=rack2").await;
    assert_eq!(other.body["items"], json!([]), "{}", other.text);
    let one = acme.get(&format!("/v1/me/pod_managers/{}", uuids[0])).await;
    assert_eq!(one.body, *rack1);
    let hidden = acme.get(&format!("/v1/me/pod_managers/{}", uuids[1])).await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND, "{}", hidden.text);
    // An admin claims nothing: told where its lists are.
    let as_admin = admin.get("/v1/me/pod_managers").await;
    assert_eq!(as_admin.status, StatusCode::FORBIDDEN, "{}", as_admin.text);
    assert!(
        as_admin.message().contains("/v1/pod_managers"),
        "{}",
        as_admin.text
    );
}
