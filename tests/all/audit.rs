//! The audit log: every authenticated request asking for a change is recorded with who, what
//! and how it ended, never with a secret; admins read and filter it, a tenant reads its own;
//! events past the retention are forgotten.

use std::time::Duration;

use podium_tests::{ADMIN_TOKEN, Client, TestServer, eventually};
use podium_types::Role;
use podium_types::views::{AuditEventView, List, MeView, TenantView, TokenCreatedView};
use reqwest::StatusCode;
use serde_json::json;

async fn audit(client: &Client, query: &str) -> Vec<AuditEventView> {
    let reply = client.get(&format!("/v1/audit{query}")).await;
    assert_eq!(reply.status, StatusCode::OK, "{query}: {}", reply.text);
    reply.view::<List<AuditEventView>>().items
}

#[tokio::test]
async fn changes_are_recorded_with_who_and_how_they_ended_and_never_a_secret() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let admin_token_id = admin.get("/v1/me").await.view::<MeView>().token_id;

    // A tenant, its token, a pod manager with a password: recorded, their secrets not.
    let tenant_id = admin
        .created("/v1/tenants", json!({"name": "acme"}))
        .await
        .view::<TenantView>()
        .id;
    let token = admin
        .created(&format!("/v1/tenants/{tenant_id}/tokens"), json!({}))
        .await
        .view::<TokenCreatedView>();
    let secret_token = token.token.clone();
    let pm = admin
        .post(
            "/v1/pod_managers",
            json!({"name": "site", "url": "http://127.0.0.1:9",
                   "auth": {"username": "admin", "password": "audit-bmc-password-3"}}),
        )
        .await;
    assert!(pm.status.is_success(), "{}", pm.text);
    // Refused and wrong requests are recorded too, with the error's code.
    let acme = server.client(Some(&secret_token));
    let refused = acme.post("/v1/tenants", json!({"name": "evil"})).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let invalid = admin.post("/v1/tenants", json!({"name": ""})).await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);
    // Neither reads nor requests without a valid token are recorded.
    admin.get("/v1/tenants").await;
    server
        .client(None)
        .post("/v1/tenants", json!({"name": "anon"}))
        .await;
    server
        .client(Some("pdm_unknown-token-unknown-token-00"))
        .post("/v1/tenants", json!({"name": "anon"}))
        .await;

    let events = audit(&admin, "").await;
    let text = serde_json::to_string(&events).unwrap();
    assert!(!text.contains(&secret_token), "a token in the audit log");
    assert!(
        !text.contains("audit-bmc-password-3"),
        "a password in the audit log"
    );
    assert!(!text.contains(ADMIN_TOKEN));
    let summary: Vec<(String, String, u16)> = events
        .iter()
        .rev()
        .map(|e| (e.method.clone(), e.route.clone(), e.status))
        .collect();
    assert_eq!(
        summary,
        [
            ("POST".to_owned(), "/v1/tenants".to_owned(), 201),
            ("POST".into(), "/v1/tenants/{id}/tokens".into(), 201),
            ("POST".into(), "/v1/pod_managers".into(), pm.status.as_u16()),
            ("POST".into(), "/v1/tenants".into(), 403),
            ("POST".into(), "/v1/tenants".into(), 422),
        ],
        "{events:#?}"
    );
    let created = &events[4];
    assert_eq!(created.role, Role::Admin);
    assert_eq!(created.token_id, admin_token_id);
    assert_eq!(created.tenant, None);
    assert_eq!(created.resource, Some(tenant_id.to_string()));
    assert_eq!(created.outcome, "succeeded");
    assert_eq!(created.path, "/v1/tenants");
    let token_event = &events[3];
    assert_eq!(token_event.resource, Some(token.view.id.to_string()));
    assert_eq!(token_event.path, format!("/v1/tenants/{tenant_id}/tokens"));
    let by_tenant = &events[1];
    assert_eq!(by_tenant.role, Role::Tenant);
    assert_eq!(by_tenant.tenant.as_ref(), Some(&tenant_id));
    assert_eq!(by_tenant.token_id, token.view.id);
    assert_eq!(by_tenant.outcome, "failed");
    assert_eq!(by_tenant.error_code.as_deref(), Some("forbidden"));
    assert!(events[0].error_code.is_some(), "{:?}", events[0]);
    let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");

    // Filters: by tenant, by resource (created, or named in the path), by time; pages.
    let mine = audit(&admin, &format!("?tenant={tenant_id}")).await;
    assert_eq!(mine.len(), 1);
    let about = audit(&admin, &format!("?resource={tenant_id}")).await;
    assert_eq!(about.len(), 2, "its creation and its token's: {about:#?}");
    assert!(
        audit(&admin, "?since=2999-01-01T00:00:00Z")
            .await
            .is_empty()
    );
    assert_eq!(audit(&admin, "?until=2999-01-01T00:00:00Z").await.len(), 5);
    let since = events[2].at;
    assert_eq!(audit(&admin, &format!("?since={since}")).await.len(), 3);
    let bad = admin.get("/v1/audit?since=yesterday").await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.body["error"]["field"], "since");
    let bad = admin.get("/v1/audit?resource=%25").await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.body["error"]["field"], "resource");
    let first = admin
        .get("/v1/audit?limit=2")
        .await
        .view::<List<AuditEventView>>();
    let next = first.next.expect("a next page");
    let second = audit(&admin, &format!("?limit=2&cursor={next}")).await;
    assert_eq!(second[0].id, events[2].id);

    // A tenant reads its own events and nobody else's.
    let own = audit(&acme, "").await;
    assert_eq!(own.len(), 1, "{own:#?}");
    assert_eq!(own[0].tenant.as_ref(), Some(&tenant_id));
    let other = acme
        .get("/v1/audit?tenant=00000000-0000-0000-0000-000000000000")
        .await;
    assert_eq!(other.status, StatusCode::FORBIDDEN);

    // A token that revokes itself: recorded as its own, though gone once answered.
    let second = admin
        .created("/v1/admin/tokens", json!({}))
        .await
        .view::<TokenCreatedView>();
    let second_id = second.view.id;
    let itself = server.client(Some(&second.token));
    let revoked = itself
        .delete(&format!("/v1/admin/tokens/{second_id}"))
        .await;
    assert!(revoked.status.is_success(), "{}", revoked.text);
    let last = &audit(&admin, "?limit=1").await[0];
    assert_eq!(last.method, "DELETE", "{last:?}");
    assert_eq!(last.token_id, second_id, "{last:?}");
    assert_eq!(last.resource, Some(second_id.to_string()), "{last:?}");
}

#[tokio::test]
async fn events_past_the_retention_are_forgotten() {
    let server = TestServer::start_with(|c| c.audit_retention = Some(Duration::from_secs(1))).await;
    let admin = server.admin();
    admin.created("/v1/tenants", json!({"name": "old"})).await;
    let old = audit(&admin, "").await;
    assert_eq!(old.len(), 1);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    eventually(
        Duration::from_secs(20),
        "the old event forgotten",
        || async {
            admin.post("/v1/admin/tasks/expiry/run", json!({})).await;
            let now = audit(&admin, "").await;
            (!now.iter().any(|e| e.id == old[0].id)).then_some(())
        },
    )
    .await;
}
