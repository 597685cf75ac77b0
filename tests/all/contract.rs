//! The API's contract as clients nobody here wrote read it: `/openapi.json` is valid OpenAPI
//! (openapi-spec-validator), the API answers only as the document says whatever it is sent
//! (Schemathesis), and a generated client (openapi-python-client) drives a claim from creation
//! to release. And the inputs that once broke it: NUL characters, unknown routes.

use std::time::Duration;

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{ADMIN_TOKEN, TestServer, api_tools, eventually};
use podium_types::views::{TenantView, TokenCreatedView};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test]
async fn the_openapi_document_is_valid_and_documents_every_common_answer() {
    let server = TestServer::start().await;
    let doc = server.client(None).get("/openapi.json").await.body;
    api_tools::validate_openapi(&doc).await.unwrap();

    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            operations += 1;
            let at = format!("{method} {path}");
            let responses = op["responses"].as_object().unwrap();
            // Every parameter in the path is one of the path's own `{...}`; the rest are queries.
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap();
                let in_path = path.contains(&format!("{{{name}}}"));
                // One header is a parameter: where an event stream resumes.
                let expected = match (in_path, name) {
                    (true, _) => "path",
                    (false, "Last-Event-ID") => "header",
                    (false, _) => "query",
                };
                assert_eq!(p["in"], expected, "{at}: parameter {name}");
                if name == "limit" {
                    assert_eq!(p["schema"]["minimum"], 1, "{at}: {p}");
                    assert_eq!(p["schema"]["maximum"], 1000, "{at}: {p}");
                }
            }
            let secured = op["security"].as_array().is_some_and(|s| !s.is_empty());
            if secured {
                for status in ["401", "403"] {
                    assert!(responses.contains_key(status), "{at} lacks {status}");
                }
            }
            if op.get("requestBody").is_some() {
                for status in ["400", "413", "422"] {
                    assert!(responses.contains_key(status), "{at} lacks {status}");
                }
            }
            // Every write to a host or a claim acts on a host's state, which may refuse it now.
            let on_host = path.starts_with("/v1/hosts/{id}") || path.starts_with("/v1/claims/{id}");
            if on_host && method != "get" {
                assert!(responses.contains_key("409"), "{at} lacks 409");
            }
        }
    }
    assert!(operations > 50, "{operations} operations");
    // Every error body's code is one of the API's codes, and the document lists them all.
    let schemas = &doc["components"]["schemas"];
    let code = &schemas["ErrorDetail"]["properties"]["code"];
    let code = match code["$ref"].as_str() {
        Some(at) => &schemas[at.strip_prefix("#/components/schemas/").unwrap()],
        None => code,
    };
    let listed: Vec<&str> = code["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("no enum of codes: {code}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let codes: Vec<&str> = podium_types::ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(listed, codes);
    for code in [
        "not_found",
        "invalid_input",
        "host_busy",
        "chassis_in_use",
        "plugin_deadline",
    ] {
        assert!(listed.contains(&code), "{code} in {listed:?}");
    }
    // The event stream names a claim, host or operation that may be gone.
    assert!(doc["paths"]["/v1/events"]["get"]["responses"]["404"].is_object());
    // Each event's `data` is what the wire carries: a string holding JSON of a schema.
    let events = doc["components"]["schemas"]["StreamEvent"]["oneOf"]
        .as_array()
        .unwrap();
    assert_eq!(events.len(), 6, "{events:?}");
    for event in events {
        let data = &event["properties"]["data"];
        assert_eq!(data["type"], "string", "{event}");
        assert_eq!(data["contentMediaType"], "application/json", "{event}");
        let schema = data["contentSchema"]["$ref"].as_str().unwrap_or_default();
        let name = schema
            .strip_prefix("#/components/schemas/")
            .unwrap_or_default();
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "{event}: no schema {schema}"
        );
    }
}

#[tokio::test]
async fn a_nul_character_anywhere_in_the_input_is_refused_naming_the_field() {
    // Run on PostgreSQL too (`PODIUM_TEST_DATABASE=postgres`), which cannot store NUL in text.
    let server = TestServer::start().await;
    let admin = server.admin();
    let tenant = admin.created("/v1/tenants", json!({"name": "acme"})).await;
    let tenant_id = tenant.view::<TenantView>().id.to_string();
    let cases: Vec<(Method, String, Option<Value>, &str)> = vec![
        (Method::GET, "/v1/hosts/a%00b".into(), None, "id"),
        (Method::GET, "/v1/pod_managers/x%00".into(), None, "uuid"),
        (
            Method::GET,
            "/v1/grants?tenant=a%00b&limit=5".into(),
            None,
            "tenant",
        ),
        (
            Method::GET,
            "/v1/hosts?label=rack%00=1".into(),
            None,
            "label",
        ),
        (
            Method::GET,
            "/v1/operations?pod_manager=%00".into(),
            None,
            "pod_manager",
        ),
        (
            Method::POST,
            "/v1/tenants".into(),
            Some(json!({"name": "b", "description": "a\u{0}b"})),
            "description",
        ),
        (
            Method::POST,
            "/v1/grants".into(),
            Some(json!({"tenant": "t\u{0}", "pod_manager": "x"})),
            "tenant",
        ),
        (
            Method::POST,
            "/v1/ip_pools".into(),
            Some(
                json!({"name": "p", "ranges": [{"start": "10.0.0.1\u{0}", "end": "10.0.0.9"}],
                        "prefix": 24}),
            ),
            "ranges[0].start",
        ),
        (
            Method::POST,
            format!("/v1/tenants/{tenant_id}/tokens"),
            Some(json!({"description": "\u{0}"})),
            "description",
        ),
    ];
    for (method, path, body, field) in cases {
        let reply = admin
            .send(method.clone(), &path, body.map(podium_tests::Body::Json))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{method} {path}: {}",
            reply.text
        );
        assert_eq!(reply.code(), "invalid_input", "{method} {path}");
        assert_eq!(reply.field(), field, "{method} {path}: {}", reply.text);
        assert!(reply.message().contains("NUL"), "{}", reply.text);
    }
    // Nothing was stored: the tenant list holds the one tenant, which has no token.
    let tenants = admin.get("/v1/tenants").await;
    assert_eq!(
        tenants.body["items"].as_array().unwrap().len(),
        1,
        "{}",
        tenants.text
    );
    let tokens = admin.get(&format!("/v1/tenants/{tenant_id}/tokens")).await;
    assert_eq!(
        tokens.body["items"].as_array().unwrap().len(),
        0,
        "{}",
        tokens.text
    );
}

#[tokio::test]
async fn an_unknown_route_names_the_path_it_was_sent() {
    let server = TestServer::start().await;
    let reply = server.admin().get("/v1/no/such/thing?x=1").await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert_eq!(reply.code(), "not_found");
    assert_eq!(
        reply.message(),
        "route `/v1/no/such/thing` not found",
        "{}",
        reply.text
    );
}

/// Schemathesis' checks that the API's answers keep to the document: no 5xx, no status code
/// it does not list, no body outside its schema, the content type it names.
const CHECKS: &[&str] = &[
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
];

#[tokio::test]
async fn a_schema_fuzzer_finds_no_answer_outside_the_document() {
    let server = TestServer::start().await;
    let admin = server.admin();
    // Something to find: a tenant with a token (whose token fuzzes the tenant's side), a pool.
    let tenant = admin.post("/v1/tenants", json!({"name": "fuzz"})).await;
    let tenant_id = tenant.view::<TenantView>().id.to_string();
    let token = admin
        .post(&format!("/v1/tenants/{tenant_id}/tokens"), json!({}))
        .await;
    let tenant_token = token.view::<TokenCreatedView>().token;
    admin
        .created(
            "/v1/ip_pools",
            json!({"name": "fuzz", "ranges": [{"subnet": "10.9.0.0/24"}], "prefix": 24}),
        )
        .await;

    for (who, token, budget) in [
        ("admin", ADMIN_TOKEN, Duration::from_secs(75)),
        ("tenant", tenant_token.as_str(), Duration::from_secs(45)),
    ] {
        let fuzzed = api_tools::schemathesis(&server.url, token, CHECKS, 12, budget)
            .await
            .unwrap();
        assert!(
            fuzzed.passed,
            "Schemathesis with the {who} token found answers outside the document:\n{}",
            fuzzed.output
        );
        // Every operation of the document, the plugin upload (`application/wasm`) included.
        let line = |label: &str| {
            fuzzed
                .output
                .lines()
                .find_map(|l| {
                    l.trim()
                        .strip_prefix(label)
                        .map(str::trim)
                        .map(str::to_owned)
                })
                .unwrap_or_default()
        };
        let (selected, tested) = (line("Selected:"), line("Tested:"));
        let (picked, total) = selected.split_once('/').unwrap_or(("", "?"));
        // All but the event stream, which never ends (api_tools excludes it).
        let all_but_one = total
            .parse::<usize>()
            .is_ok_and(|total| picked.parse::<usize>() == Ok(total - 1));
        assert!(
            all_but_one && tested == picked,
            "Schemathesis left operations out (selected {selected}, tested {tested}):\n{}",
            fuzzed.output
        );
    }
    // The server is still whole.
    assert_eq!(
        server.client(None).get("/healthz").await.status,
        StatusCode::OK
    );
}

/// Drives a claim from creation to release with the generated client alone, failing on any
/// status code the document does not list (`raise_on_unexpected_status`).
const GENERATED_CLIENT_SCRIPT: &str = r#"
import os, sys, time
from podium_client import AuthenticatedClient
from podium_client.api.pod_managers import pod_manager_create
from podium_client.api.hosts import host_list
from podium_client.api.tenants import tenant_create, tenant_token_create
from podium_client.api.grants import grant_create
from podium_client.api.claims import claim_create, claim_view, claim_delete
from podium_client.models import (PodManagerCreate, TenantCreate, TokenCreate, GrantCreate,
                                  ClaimCreate, ImageParams, ErrorBody)

base = os.environ["PODIUM_URL"]
admin = AuthenticatedClient(base_url=base, token=os.environ["ADMIN_TOKEN"],
                            raise_on_unexpected_status=True)

pm = pod_manager_create.sync(client=admin,
                             body=PodManagerCreate(name="gen", url=os.environ["BMC_URL"]))
assert not isinstance(pm, ErrorBody), pm
for _ in range(200):
    hosts = host_list.sync(client=admin, pod_manager=pm.uuid)
    if [h for h in hosts.items if h.kind == "system" and h.state == "available"]:
        break
    time.sleep(0.1)
else:
    sys.exit("no host became available")

tenant = tenant_create.sync(client=admin, body=TenantCreate(name="generated"))
token = tenant_token_create.sync(tenant.id, client=admin, body=TokenCreate())
grant = grant_create.sync(client=admin, body=GrantCreate(tenant=tenant.id, pod_manager=pm.uuid))
assert not isinstance(grant, ErrorBody), grant

me = AuthenticatedClient(base_url=base, token=token.token, raise_on_unexpected_status=True)
claim = claim_create.sync(client=me, body=ClaimCreate(
    pod_manager=pm.uuid, image=ImageParams(url="http://127.0.0.1:9/img.iso"), online=False))
assert not isinstance(claim, ErrorBody), claim
assert claim.state == "bound", claim
seen = claim_view.sync(claim.id, client=me)
assert seen.host.id, seen
print("claimed", seen.host.id)

released = claim_delete.sync_detailed(claim.id, client=me)
assert released.status_code == 202, released
for _ in range(300):
    gone = claim_view.sync_detailed(claim.id, client=me)
    if gone.status_code == 404:
        assert isinstance(gone.parsed, ErrorBody) and gone.parsed.error.code == "not_found", gone
        print("released")
        break
    time.sleep(0.1)
else:
    sys.exit("the claim was never released")
"#;

#[tokio::test]
async fn a_generated_client_drives_a_claim_from_creation_to_release() {
    let server = TestServer::start().await;
    let bmc = Sushy::start(SushyConfig::with_systems(1)).await.unwrap();
    let doc = server.client(None).get("/openapi.json").await.body;
    let dir = tempfile::tempdir().unwrap();
    let (pythonpath, module) = api_tools::generate_python_client(&doc, dir.path())
        .await
        .unwrap();
    assert_eq!(module, "podium_client");
    let out = api_tools::python(
        GENERATED_CLIENT_SCRIPT,
        &pythonpath,
        &[
            ("PODIUM_URL", &server.url),
            ("ADMIN_TOKEN", ADMIN_TOKEN),
            ("BMC_URL", &bmc.url()),
        ],
    )
    .await
    .unwrap();
    assert!(out.contains("claimed") && out.contains("released"), "{out}");
    // What the generated client did is what the API holds: the host is free again.
    eventually(Duration::from_secs(10), "host available", || async {
        let hosts = server.admin().get("/v1/hosts").await.body;
        hosts["items"]
            .as_array()?
            .iter()
            .find(|h| h["kind"] == "system" && h["state"] == "available")
            .map(|_| ())
    })
    .await;
}
