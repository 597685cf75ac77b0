//! The server itself: health, the OpenAPI document, error format, authentication, bootstrap.

use podium_tests::{ADMIN_TOKEN, TestServer};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn healthz_and_livez_need_no_token() {
    let server = TestServer::start().await;
    for path in ["/healthz", "/livez"] {
        let reply = server.client(None).get(path).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text);
        assert_eq!(reply.body["status"], "ok", "{path}");
    }
}

#[tokio::test]
async fn openapi_document_lists_the_routes() {
    let server = TestServer::start().await;
    let reply = server.client(None).get("/openapi.json").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.body["openapi"].as_str().unwrap().starts_with("3."));
    let paths = reply.body["paths"].as_object().unwrap();
    for path in ["/healthz", "/livez", "/v1/plugins", "/v1/plugins/{sha256}"] {
        assert!(
            paths.contains_key(path),
            "{path} missing from {:?}",
            paths.keys()
        );
    }
    assert!(paths["/v1/plugins"]["post"].is_object());
}

#[tokio::test]
async fn missing_malformed_and_unknown_tokens_are_401_with_a_json_error() {
    let server = TestServer::start().await;
    let none = server.client(None).get("/v1/plugins").await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
    assert_eq!(none.code(), "unauthenticated");
    assert!(none.message().contains("Bearer"), "{}", none.message());

    let unknown = server
        .client(Some("pdm_not-a-real-token"))
        .get("/v1/plugins")
        .await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert_eq!(unknown.message(), "invalid token");

    let malformed = server
        .client(None)
        .send(reqwest::Method::GET, "/v1/plugins", None)
        .await;
    assert_eq!(malformed.status, StatusCode::UNAUTHORIZED);

    let ok = server.admin().get("/v1/plugins").await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text);
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_json_errors() {
    let server = TestServer::start().await;
    let reply = server.admin().get("/v1/nothing-here").await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert_eq!(reply.code(), "not_found");
    let reply = server
        .admin()
        .send(reqwest::Method::DELETE, "/healthz", None)
        .await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(reply.code(), "method_not_allowed");
}

#[tokio::test]
async fn without_an_admin_token_one_is_generated_into_the_data_dir() {
    let server = TestServer::start_with(|c| c.admin_token = None).await;
    let path = server.data_dir.path().join("admin.token");
    let token = std::fs::read_to_string(&path).expect("admin.token written");
    let token = token.trim();
    assert!(token.starts_with("pdm_"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(
        server.client(Some(token)).get("/v1/plugins").await.status,
        StatusCode::OK
    );
    // The default test token was not created.
    assert_eq!(
        server
            .client(Some(ADMIN_TOKEN))
            .get("/v1/plugins")
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn a_write_the_database_cannot_take_in_time_is_503_with_retry_after_and_changes_nothing() {
    use sqlx::Connection;
    let server = TestServer::start().await;
    let admin = server.admin();
    // Another session holds the lock a new tenant needs: SQLite's write lock, PostgreSQL's
    // tenants table. Podium waits as long as it waits for a lock (10 s), then refuses.
    sqlx::any::install_default_drivers();
    let url = server.database_url();
    let mut other = sqlx::AnyConnection::connect(&url).await.unwrap();
    let take = if url.starts_with("postgres") {
        "BEGIN; LOCK TABLE tenants IN ACCESS EXCLUSIVE MODE"
    } else {
        "BEGIN EXCLUSIVE"
    };
    sqlx::raw_sql(take).execute(&mut other).await.unwrap();

    let refused = reqwest::Client::new()
        .post(format!("{}/v1/tenants", server.url))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"name": "patient"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        refused.headers().get("retry-after").map(|v| v.as_bytes()),
        Some(&b"1"[..]),
        "{:?}",
        refused.headers()
    );
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable", "{body}");
    assert_eq!(
        body["error"]["message"], "the database is busy: nothing was changed; try again shortly",
        "{body}"
    );

    sqlx::raw_sql("ROLLBACK").execute(&mut other).await.unwrap();
    other.close().await.unwrap();
    // Nothing of the refused request was kept; asked again, it is done once.
    let named = |reply: &podium_tests::Reply| {
        reply.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"] == "patient")
            .count()
    };
    assert_eq!(named(&admin.get("/v1/tenants").await), 0);
    admin
        .created("/v1/tenants", json!({"name": "patient"}))
        .await;
    assert_eq!(named(&admin.get("/v1/tenants").await), 1);
    // As the API's document says it may.
    let openapi = admin.get("/openapi.json").await;
    let documented = &openapi.body["paths"]["/v1/tenants"]["post"]["responses"]["503"];
    assert!(
        documented["description"]
            .as_str()
            .is_some_and(|d| d.contains("Retry-After")),
        "{documented}"
    );
}

/// On PostgreSQL (the run with `PODIUM_TEST_DATABASE=postgres`), the log says at start where
/// the server's autovacuum is off (the queue's dead rows would pile up), and says nothing where
/// it is on.
#[tokio::test]
async fn podium_on_postgresql_warns_at_start_where_autovacuum_is_off() {
    use sqlx::Connection;
    let Some(database) = podium_tests::PostgresDatabase::for_this_run().await else {
        return;
    };
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&database.url).await.unwrap();
    let autovacuum: String = sqlx::query_scalar("SELECT current_setting('autovacuum')")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = podium_tests::ProcessServer::start(
        env!("CARGO_BIN_EXE_podium-under-test"),
        data.path(),
        Some(&database.url),
    )
    .await;
    let log = server.log();
    let warned = log
        .lines()
        .any(|l| l.contains(r#""level":"WARN""#) && l.contains("autovacuum is off"));
    assert_eq!(
        warned,
        autovacuum == "off",
        "autovacuum {autovacuum}:\n{log}"
    );
}

/// A client that sends its body after its headers (two writes, as many clients make) to a route
/// that answers without reading it, here a 405, gets the answer and keeps its connection for the
/// next request: the body was read. Left unread, the connection was closed under the client,
/// and a body arriving after the close made the kernel reset it, sometimes before the client had
/// read the answer.
#[tokio::test]
async fn a_request_answered_without_its_body_keeps_the_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start().await;
    let address = server.url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let body = br#"{"Name": "not a resource one can post to"}"#;
    let head = format!(
        "POST /redfish/v1/ HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // The body comes later, once a server not waiting for it would have answered and closed.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    stream.write_all(body).await.unwrap();

    /// One answer off the connection: its status line and body (an answer always has a length).
    async fn answer(stream: &mut tokio::net::TcpStream) -> (String, String) {
        let mut read = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            if let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&read[..end]).to_string();
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse().unwrap())
                    })
                    .expect("a content-length");
                if read.len() >= end + 4 + length {
                    let body = String::from_utf8_lossy(&read[end + 4..end + 4 + length]);
                    return (head.lines().next().unwrap().to_owned(), body.to_string());
                }
            }
            let n = stream
                .read(&mut buffer)
                .await
                .expect("the connection was reset");
            assert!(
                n > 0,
                "the connection was closed: {}",
                String::from_utf8_lossy(&read)
            );
            read.extend_from_slice(&buffer[..n]);
        }
    }
    let (status, body) = answer(&mut stream).await;
    assert_eq!(status, "HTTP/1.1 405 Method Not Allowed", "{body}");
    let head = format!("GET /livez HTTP/1.1\r\nHost: {address}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let (status, body) = answer(&mut stream).await;
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
}
