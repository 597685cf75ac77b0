//! TLS and plain HTTP: the API over TLS with a certificate reloaded on SIGHUP and when its files
//! change, without dropping a connection; config drives on a plain-HTTP listener of their own
//! that serves nothing else; and bearer tokens refused over plain HTTP on an address that is not
//! loopback (in a network namespace of the test's own, on 198.51.100.0/24) unless the admin
//! allows it.

use std::path::Path;
use std::time::Duration;

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{ADMIN_TOKEN, ProcessServer, eventually};
use reqwest::StatusCode;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");

/// A new self-signed certificate for 127.0.0.1 written to `dir` (`cert.pem`, `key.pem`, each
/// replaced whole by a rename); answers the certificate's PEM, for a client to trust.
fn new_certificate(dir: &Path) -> String {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
    for (name, pem) in [
        ("key.pem", signing_key.serialize_pem()),
        ("cert.pem", cert.pem()),
    ] {
        let partial = dir.join(format!("{name}.partial"));
        std::fs::write(&partial, pem).unwrap();
        std::fs::rename(&partial, dir.join(name)).unwrap();
    }
    cert.pem()
}

/// An HTTP client that trusts only `cert_pem`, with one connection it keeps open.
fn trusting(cert_pem: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(cert_pem.as_bytes()).unwrap())
        .pool_idle_timeout(Duration::from_secs(600))
        .build()
        .unwrap()
}

async fn works(client: &reqwest::Client, url: &str) -> bool {
    match client
        .get(format!("{url}/v1/me"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
    {
        Ok(r) => r.status() == StatusCode::OK,
        Err(_) => false,
    }
}

/// The address the server's log line with `message` gives in its `addr` field.
async fn logged_addr(server: &ProcessServer, message: &str) -> String {
    eventually(Duration::from_secs(20), message, || async {
        server
            .log()
            .lines()
            .filter(|l| l.contains(message))
            .find_map(|l| {
                let event: Value = serde_json::from_str(l).ok()?;
                event["fields"]["addr"].as_str().map(str::to_owned)
            })
    })
    .await
}

#[tokio::test]
async fn the_api_over_tls_reloads_its_certificate_without_dropping_a_connection() {
    let certs = tempfile::tempdir().unwrap();
    let first = new_certificate(certs.path());
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let (cert, key) = (certs.path().join("cert.pem"), certs.path().join("key.pem"));
    let options = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let server = ProcessServer::start_logging(
        BIN,
        data.path(),
        database.as_ref().map(|d| d.url.as_str()),
        "info",
        &options,
    )
    .await;
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );

    // A client that trusts the certificate is served; plain HTTP to the same port, or a client
    // that trusts none of it, is not.
    let kept = trusting(&first);
    assert!(works(&kept, &server.url).await);
    // Plain HTTP to the same port is told, in plain HTTP, to use HTTPS; its token unused.
    let plain = server.url.replacen("https://", "http://", 1);
    let refused = reqwest::Client::new()
        .post(format!("{plain}/v1/tenants"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"name": "in-clear"}))
        .send()
        .await
        .expect("an answer in plain HTTP");
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "tls_required", "{body}");
    let tenants = kept
        .get(format!("{}/v1/tenants?name=in-clear", server.url))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(tenants["items"], json!([]), "the plain request was served");
    assert!(!works(&reqwest::Client::new(), &server.url).await);

    // SIGHUP after the files were replaced: a new connection gets the new certificate, the open
    // one goes on with the old.
    let second = new_certificate(certs.path());
    let pid = server.pid().unwrap().to_string();
    let hup = tokio::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .await
        .unwrap();
    assert!(hup.success());
    let fresh = trusting(&second);
    eventually(
        Duration::from_secs(20),
        "the second certificate",
        || async { works(&fresh, &server.url).await.then_some(()) },
    )
    .await;
    assert!(
        works(&kept, &server.url).await,
        "the connection opened before the reload was dropped"
    );
    assert!(
        !works(&trusting(&first), &server.url).await,
        "a new connection still gets the first certificate"
    );

    // Files replaced with no signal: reloaded when the change is seen. A file that is not a
    // certificate is logged and the one in use kept.
    let third = new_certificate(certs.path());
    eventually(Duration::from_secs(20), "the third certificate", || async {
        works(&trusting(&third), &server.url).await.then_some(())
    })
    .await;
    let refusals = || {
        server
            .log()
            .matches("cannot reload the TLS certificate")
            .count()
    };
    let before = refusals();
    std::fs::write(&cert, "not a certificate").unwrap();
    eventually(
        Duration::from_secs(20),
        "the refused reload logged",
        || async { (refusals() > before).then_some(()) },
    )
    .await;
    assert!(works(&trusting(&third), &server.url).await);
    let log = server.log();
    assert!(log.contains("\"why\":\"SIGHUP\""), "{log}");
    assert!(log.contains("\"why\":\"the files changed\""), "{log}");
    assert!(!log.contains("PRIVATE KEY"), "{log}");
}

#[tokio::test]
async fn the_api_serves_tls_with_the_certificate_and_key_named_in_a_config_file() {
    let certs = tempfile::tempdir().unwrap();
    let pem = new_certificate(certs.path());
    let file = certs.path().join("podium.toml");
    let (cert, key) = (certs.path().join("cert.pem"), certs.path().join("key.pem"));
    std::fs::write(
        &file,
        format!(
            "tls-cert = {:?}\ntls-key = {:?}\n",
            cert.display().to_string(),
            key.display().to_string()
        ),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = ProcessServer::start_logging(
        BIN,
        data.path(),
        None,
        "info",
        &["--config", file.to_str().unwrap()],
    )
    .await;
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    assert!(works(&trusting(&pem), &server.url).await);
}

#[tokio::test]
async fn config_drives_have_a_plain_http_listener_that_serves_nothing_else() {
    let certs = tempfile::tempdir().unwrap();
    let pem = new_certificate(certs.path());
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let (cert, key) = (certs.path().join("cert.pem"), certs.path().join("key.pem"));
    let options = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        "--config-drive-listen",
        "127.0.0.1:0",
    ];
    let server = ProcessServer::start_logging(
        BIN,
        data.path(),
        database.as_ref().map(|d| d.url.as_str()),
        "info",
        &options,
    )
    .await;
    let drives = format!(
        "http://{}",
        logged_addr(&server, "serving config drives over plain HTTP").await
    );
    let admin = server.client_with(trusting(&pem), Some(ADMIN_TOKEN));
    let bmc = Sushy::start(SushyConfig::with_systems(1)).await.unwrap();
    let pm = admin.create_site(&bmc.url()).await;
    let host = eventually(Duration::from_secs(30), "the host synced", || async {
        let hosts = admin.get(&format!("/v1/hosts?pod_manager={pm}")).await.body["items"]
            .as_array()
            .cloned()?;
        hosts.into_iter().find(|h| h["kind"] == "system")
    })
    .await;
    let drive = admin
        .created(
            &format!("/v1/hosts/{}/config_drive", host["id"].as_str().unwrap()),
            json!({"phase": "preprovisioning"}),
        )
        .await
        .body;
    let url = drive["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{drives}/v1/config_drives/")),
        "the URL a BMC is given points at the plain listener: {url}"
    );
    let image = reqwest::get(url).await.unwrap();
    assert_eq!(image.status(), StatusCode::OK);
    assert_eq!(
        image.bytes().await.unwrap().len() as u64,
        drive["size"].as_u64().unwrap()
    );
    // Nothing else is served there, with a token or without.
    for path in [
        "/v1/me",
        "/v1/plugins",
        "/healthz",
        "/openapi.json",
        "/metrics",
    ] {
        let answer = reqwest::Client::new()
            .get(format!("{drives}{path}"))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{path}");
        let body: Value = answer.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_found", "{path}: {body}");
    }
    let post = reqwest::Client::new()
        .post(url)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(post, StatusCode::METHOD_NOT_ALLOWED);
}

/// `podium serve` in a network namespace of its own, listening on 198.51.100.1 (an address on
/// the namespace's loopback interface, but not a loopback address), with `options`.
async fn isolated_server(data: &Path, options: &[&str]) -> ProcessServer {
    let mut command = tokio::process::Command::new("unshare");
    command
        .args([
            "--net",
            "sh",
            "-c",
            "ip link set lo up && ip addr add 198.51.100.1/32 dev lo && exec \"$0\" \"$@\"",
            BIN,
            "serve",
            "--log-json",
            "--listen",
            "198.51.100.1:0",
            "--data-dir",
        ])
        .arg(data)
        .arg("--compiled-dir")
        .arg(Path::new(env!("OUT_DIR")).join("compiled-plugins"))
        .args(options)
        .env("PODIUM_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("PODIUM_LOG", "info")
        .env_remove("PODIUM_DATABASE_URL");
    ProcessServer::spawn(command).await
}

/// `curl` from inside the server's namespace: the status and the body.
async fn curl_inside(server: &ProcessServer, path: &str, token: Option<&str>) -> (u16, String) {
    let mut command = tokio::process::Command::new("nsenter");
    command
        .args(["-t", &server.pid().unwrap().to_string(), "-n", "curl", "-s"])
        .args(["-w", "\n%{http_code}"]);
    if let Some(token) = token {
        command.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    let out = command
        .arg(format!("{}{path}", server.url))
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, status) = text.rsplit_once('\n').unwrap();
    (status.parse().unwrap(), body.to_owned())
}

#[tokio::test]
async fn a_bearer_token_over_plain_http_off_loopback_is_refused_unless_allowed() {
    let data = tempfile::tempdir().unwrap();
    let server = isolated_server(data.path(), &[]).await;
    assert!(
        server.url.starts_with("http://198.51.100.1:"),
        "{}",
        server.url
    );
    let (status, body) = curl_inside(&server, "/v1/me", Some(ADMIN_TOKEN)).await;
    assert_eq!(status, 403, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "insecure_transport", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("--tls-cert") && message.contains("--allow-insecure-http"),
        "{message}"
    );
    // A wrong token too: refused before anyone looks at it.
    let (status, _) = curl_inside(&server, "/v1/me", Some("pdm_wrong")).await;
    assert_eq!(status, 403);
    // What takes no token still works.
    let (status, _) = curl_inside(&server, "/healthz", None).await;
    assert_eq!(status, 200);
    let (_, log) = server.terminate().await;
    assert!(log.contains("are refused"), "{log}");
    assert!(!log.contains(ADMIN_TOKEN));

    let allowed = isolated_server(data.path(), &["--allow-insecure-http"]).await;
    let (status, body) = curl_inside(&allowed, "/v1/me", Some(ADMIN_TOKEN)).await;
    assert_eq!(status, 200, "{body}");
}
