//! Support code for Podium's integration tests (`tests/all/`): a real Podium server per test on
//! a free loopback port, over a fresh SQLite file or a fresh PostgreSQL database, plus the
//! real peers (`sushy`) and the test guests' component bytes.
//!
//! `PODIUM_TEST_DATABASE=postgres` runs every test on PostgreSQL
//! (`PODIUM_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`); each test
//! gets its own database, dropped afterwards.

pub mod api_tools;
pub mod cloud_init;
pub mod ironic;
pub mod sushy;
pub mod vfat;
pub mod vm;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use anyhow::{Context, Result};
use podium_app::app::Podium;
use podium_server::server::{self, ServeConfig};
use podium_types::Secret;
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// The bytes of a test guest built by `tests/build.rs`.
pub mod guests {
    pub static FAULTY: &[u8] = include_bytes!(env!("GUEST_FAULTY"));
    pub static WRONG_VERSION: &[u8] = include_bytes!(env!("GUEST_WRONG_VERSION"));
    pub static MISSING_EXPORT: &[u8] = include_bytes!(env!("GUEST_MISSING_EXPORT"));
    pub static OTHER_WORLD: &[u8] = include_bytes!(env!("GUEST_OTHER_WORLD"));
    /// A driver built against the released `podium:plugin@0.1.0` (its own copy of the WIT).
    pub static CONTRACT_0_1_0: &[u8] = include_bytes!(env!("GUEST_CONTRACT_0_1_0"));
}

/// The admin token every test server starts with.
pub const ADMIN_TOKEN: &str = "pdm_test-admin-token-0123456789abcdef";

/// A Podium server running in this process, stopped when dropped.
#[derive(Debug)]
pub struct TestServer {
    pub url: String,
    /// The scrapers' listener (`/metrics` with no token), where the configuration opened one.
    pub metrics_url: Option<String>,
    pub podium: Podium,
    pub data_dir: tempfile::TempDir,
    /// The self-signed certificate a server started by `start_tls` serves (PEM), which its
    /// clients trust.
    pub certificate: Option<String>,
    /// Where that certificate and its key are, for as long as the server runs.
    tls_dir: Option<tempfile::TempDir>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<()>>,
    database: Option<PostgresDatabase>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(|_| {}).await
    }

    /// Starts a server after `adjust` changed its configuration.
    pub async fn start_with(adjust: impl FnOnce(&mut ServeConfig)) -> TestServer {
        init_tracing();
        let data_dir = tempfile::tempdir().expect("temp dir");
        let mut config = ServeConfig::new(
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            data_dir.path().to_path_buf(),
        );
        config.bundled = podium::bundled::PLUGINS;
        config.admin_token = Some(Secret::new(ADMIN_TOKEN));
        // One compile cache for the whole run: compiling the bundled plugins once, not per test.
        config.compiled_dir = Some(std::path::Path::new(env!("OUT_DIR")).join("compiled-plugins"));
        let database = PostgresDatabase::for_this_run().await;
        if let Some(db) = &database {
            config.database_url = Some(Secret::new(db.url.clone()));
        }
        adjust(&mut config);
        TestServer::launch(config, data_dir, database).await
    }

    /// Starts a server that serves the API over TLS only, as a site does: a certificate for
    /// 127.0.0.1 issued by a new certificate authority of the test's own (`certificate` holds
    /// the authority's, which `client()` trusts; some clients, Python's `ssl` among them, trust
    /// no certificate that is not an authority's).
    pub async fn start_tls(adjust: impl FnOnce(&mut ServeConfig)) -> TestServer {
        let ca_key = rcgen::KeyPair::generate().expect("a key");
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "Podium test authority");
        let ca = rcgen::CertifiedIssuer::self_signed(ca, ca_key).expect("a CA certificate");
        let key = rcgen::KeyPair::generate().expect("a key");
        let mut leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .expect("certificate parameters");
        // Python's `ssl` (through urllib3) checks strictly: a certificate names its issuer's key.
        leaf.use_authority_key_identifier_extension = true;
        let leaf = leaf.signed_by(&key, &ca).expect("a certificate");
        let dir = tempfile::tempdir().expect("temp dir");
        let files = podium_server::TlsFiles {
            cert: dir.path().join("cert.pem"),
            key: dir.path().join("key.pem"),
        };
        std::fs::write(&files.cert, leaf.pem() + &ca.pem()).expect("writing the certificate");
        std::fs::write(&files.key, key.serialize_pem()).expect("writing the key");
        let mut server = TestServer::start_with(|c| {
            c.tls = Some(files);
            adjust(c);
        })
        .await;
        server.certificate = Some(ca.pem());
        server.tls_dir = Some(dir);
        server
    }

    /// Stops this server and starts another on the same data directory and database (and a
    /// compile cache of its own in the data directory), as a restart of Podium would.
    pub async fn restart(mut self) -> TestServer {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), &mut self.task).await;
        let data_dir =
            std::mem::replace(&mut self.data_dir, tempfile::tempdir().expect("temp dir"));
        let database = self.database.take();
        let mut config = ServeConfig::new(
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            data_dir.path().to_path_buf(),
        );
        config.bundled = podium::bundled::PLUGINS;
        config.admin_token = Some(Secret::new(ADMIN_TOKEN));
        config.database_url = database.as_ref().map(|db| Secret::new(db.url.clone()));
        TestServer::launch(config, data_dir, database).await
    }

    async fn launch(
        config: ServeConfig,
        data_dir: tempfile::TempDir,
        database: Option<PostgresDatabase>,
    ) -> TestServer {
        let started = server::start(&config).await.expect("starting podium");
        let scheme = if config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let url = format!(
            "{scheme}://{}",
            started.listener.local_addr().expect("local addr")
        );
        let metrics_url = started
            .metrics_listener
            .as_ref()
            .map(|l| format!("http://{}", l.local_addr().expect("local addr")));
        let podium = started.podium.clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(server::serve(started, async {
            let _ = rx.await;
        }));
        TestServer {
            url,
            metrics_url,
            podium,
            data_dir,
            certificate: None,
            tls_dir: None,
            shutdown: Some(tx),
            task,
            database,
        }
    }

    /// The URL of this server's database (its SQLite file, or its PostgreSQL database), for a
    /// test that writes what an earlier release would have.
    pub fn database_url(&self) -> String {
        match &self.database {
            Some(db) => db.url.clone(),
            None => format!(
                "sqlite://{}",
                self.data_dir.path().join("podium.db").display()
            ),
        }
    }

    /// A client authenticated as the admin.
    pub fn admin(&self) -> Client {
        self.client(Some(ADMIN_TOKEN))
    }

    /// A client with this token, or none.
    pub fn client(&self, token: Option<&str>) -> Client {
        let mut client = Client::new(&self.url, token);
        if let Some(pem) = &self.certificate {
            client.http = reqwest::Client::builder()
                .add_root_certificate(
                    reqwest::Certificate::from_pem(pem.as_bytes()).expect("a PEM certificate"),
                )
                .build()
                .expect("an HTTP client");
        }
        client
    }

    /// Stops the server and waits for it (10 s at most); answers whether it stopped.
    pub async fn stop(mut self) -> bool {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), &mut self.task)
            .await
            .is_ok()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.task.abort();
        let _ = &self.database;
    }
}

/// A small JSON client for the API.
#[derive(Debug, Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

/// A stream of server-sent events.
pub struct EventStream {
    /// The `ready` event that started the stream, once read.
    pub ready: Option<SentEvent>,
    inner: std::pin::Pin<
        Box<
            dyn futures::Stream<
                    Item = std::result::Result<
                        eventsource_stream::Event,
                        eventsource_stream::EventStreamError<reqwest::Error>,
                    >,
                > + Send,
        >,
    >,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventStream")
    }
}

/// One server-sent event: its `event`, its `id` and its data as JSON.
#[derive(Clone, Debug)]
pub struct SentEvent {
    pub name: String,
    pub id: String,
    pub data: Value,
}

impl EventStream {
    /// The next event past `ready` (kept in `ready`), or `None` when none came within `wait` or
    /// the stream ended.
    pub async fn next_within(&mut self, wait: Duration) -> Option<SentEvent> {
        use futures::StreamExt;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let event = match tokio::time::timeout_at(deadline, self.inner.next()).await {
                Ok(Some(Ok(e))) => SentEvent {
                    name: e.event,
                    id: e.id,
                    data: serde_json::from_str(&e.data).unwrap_or(Value::Null),
                },
                Ok(Some(Err(e))) => panic!("the event stream broke: {e}"),
                Ok(None) | Err(_) => return None,
            };
            if event.name != "ready" {
                return Some(event);
            }
            self.ready = Some(event);
        }
    }

    /// Whether the stream ended (the server closed it) within `wait`, reading what comes first.
    pub async fn ends_within(&mut self, wait: Duration) -> bool {
        use futures::StreamExt;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.inner.next()).await {
                Ok(None) | Ok(Some(Err(_))) => return true,
                Ok(Some(Ok(_))) => continue,
                Err(_) => return false,
            }
        }
    }
}

/// A response: status and JSON body (`Null` when the body is empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
    pub text: String,
}

impl Reply {
    /// The `error.code` of an error body.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or("")
    }
    pub fn field(&self) -> &str {
        self.body["error"]["field"].as_str().unwrap_or("")
    }
}

impl Client {
    /// The URL the client sends to (`http://127.0.0.1:PORT`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// A client of the API at `base` (`http://127.0.0.1:PORT`), with this token or none.
    pub fn new(base: &str, token: Option<&str>) -> Client {
        Client {
            base: base.to_owned(),
            token: token.map(str::to_owned),
            http: reqwest::Client::new(),
        }
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Body>) -> Reply {
        self.try_send(method, path, body)
            .await
            .expect("request to podium")
    }

    /// A POST that answers `None` where the server is gone (killed) instead of panicking.
    pub async fn try_post(&self, path: &str, body: Value) -> Option<Reply> {
        self.try_send(Method::POST, path, Some(Body::Json(body)))
            .await
    }

    async fn try_send(&self, method: Method, path: &str, body: Option<Body>) -> Option<Reply> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        match body {
            Some(Body::Json(v)) => request = request.json(&v),
            Some(Body::Raw(content_type, bytes)) => {
                request = request.header("content-type", content_type).body(bytes)
            }
            None => {}
        }
        let response = request.send().await.ok()?;
        let status = response.status();
        let text = response.text().await.ok()?;
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Some(Reply { status, body, text })
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(Method::POST, path, Some(Body::Json(body))).await
    }

    /// POSTs a creation and checks it was one (201); the reply carries what was created.
    pub async fn created(&self, path: &str, body: Value) -> Reply {
        let reply = self.post(path, body).await;
        assert_eq!(
            reply.status,
            StatusCode::CREATED,
            "POST {path}: {}",
            reply.text
        );
        reply
    }

    /// Creates the tenant `name`, grants it the pod manager `pm` and gives it a token; answers
    /// the tenant's id and the token.
    pub async fn granted_tenant(&self, name: &str, pm: &str) -> (String, String) {
        let tenant = self
            .created("/v1/tenants", serde_json::json!({ "name": name }))
            .await
            .body["id"]
            .as_str()
            .unwrap()
            .to_owned();
        self.created(
            "/v1/grants",
            serde_json::json!({"tenant": tenant, "pod_manager": pm}),
        )
        .await;
        let token = self
            .created(
                &format!("/v1/tenants/{tenant}/tokens"),
                serde_json::json!({}),
            )
            .await
            .body["token"]
            .as_str()
            .unwrap()
            .to_owned();
        (tenant, token)
    }

    /// Registers a pod manager named `site` at `url`; answers its uuid.
    /// Every host `query` selects (`&state=available`, or empty for all), page after page.
    pub async fn hosts_all(&self, query: &str) -> Vec<Value> {
        let mut all = Vec::new();
        let mut cursor = String::new();
        loop {
            let page = self
                .get(&format!("/v1/hosts?limit=1000{query}{cursor}"))
                .await
                .body;
            all.extend(page["items"].as_array().cloned().unwrap_or_default());
            match page["next"].as_str() {
                Some(next) => cursor = format!("&cursor={next}"),
                None => return all,
            }
        }
    }

    /// Waits (up to 60 s) until pod manager `uuid` has `n` hosts of kind `system` in `state`,
    /// and answers them.
    pub async fn systems_in_state(&self, uuid: &str, n: usize, state: &str) -> Vec<Value> {
        eventually(
            Duration::from_secs(60),
            &format!("{n} hosts {state}"),
            || async {
                let hosts: Vec<_> = self
                    .hosts_all(&format!("&pod_manager={uuid}"))
                    .await
                    .into_iter()
                    .filter(|h| h["kind"] == "system")
                    .collect();
                (hosts.len() == n && hosts.iter().all(|h| h["state"] == state)).then_some(hosts)
            },
        )
        .await
    }

    pub async fn create_site(&self, url: &str) -> String {
        let pm = self
            .created(
                "/v1/pod_managers",
                serde_json::json!({"name": "site", "url": url}),
            )
            .await;
        pm.body["uuid"].as_str().unwrap().to_owned()
    }

    /// Opens `GET path` as a stream of server-sent events (parsed by `eventsource-stream`, a
    /// client nobody here wrote), resuming after `last_event_id` where given; the reply's
    /// status and body where the server refused.
    pub async fn events(
        &self,
        path: &str,
        last_event_id: Option<&str>,
    ) -> std::result::Result<EventStream, Reply> {
        use eventsource_stream::Eventsource;
        let mut request = self.http.get(format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.expect("request to podium");
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            let body = serde_json::from_str(&text).unwrap_or(Value::Null);
            return Err(Reply { status, body, text });
        }
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "{path}"
        );
        Ok(EventStream {
            inner: Box::pin(response.bytes_stream().eventsource()),
            ready: None,
        })
    }

    pub async fn patch(&self, path: &str, body: Value) -> Reply {
        self.send(Method::PATCH, path, Some(Body::Json(body))).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.send(Method::PUT, path, Some(Body::Json(body))).await
    }

    /// A GET whose body is bytes (a config drive image), with its status and headers.
    pub async fn get_bytes(&self, path: &str) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let response = request.send().await.expect("request to podium");
        let (status, headers) = (response.status(), response.headers().clone());
        let bytes = response.bytes().await.expect("body").to_vec();
        (status, headers, bytes)
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.send(Method::DELETE, path, None).await
    }

    /// Uploads a plugin (`POST /v1/plugins`), which must be accepted; answers its view.
    pub async fn upload_plugin(&self, wasm: &[u8]) -> Value {
        let reply = self
            .post_bytes("/v1/plugins", "application/wasm", wasm.to_vec())
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        reply.body
    }

    pub async fn post_bytes(&self, path: &str, content_type: &str, bytes: Vec<u8>) -> Reply {
        self.send(
            Method::POST,
            path,
            Some(Body::Raw(content_type.to_owned(), bytes)),
        )
        .await
    }
}

#[derive(Debug)]
pub enum Body {
    Json(Value),
    Raw(String, Vec<u8>),
}

/// A fresh PostgreSQL database, dropped with this value.
#[derive(Debug)]
pub struct PostgresDatabase {
    admin_url: String,
    name: String,
    pub url: String,
}

impl PostgresDatabase {
    /// The database `PODIUM_TEST_DATABASE=postgres` asks for, or `None` (SQLite).
    pub async fn for_this_run() -> Option<PostgresDatabase> {
        match std::env::var("PODIUM_TEST_DATABASE").as_deref() {
            Ok("postgres") => Some(
                PostgresDatabase::create()
                    .await
                    .expect("creating a PostgreSQL database"),
            ),
            _ => None,
        }
    }

    pub async fn create() -> Result<PostgresDatabase> {
        let admin_url = std::env::var("PODIUM_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
        let name = format!("podium_test_{}", uuid_like());
        psql(&admin_url, &format!("CREATE DATABASE {name}"))
            .await
            .with_context(|| format!("is PostgreSQL running at {admin_url}?"))?;
        let base = admin_url
            .rsplit_once('/')
            .map_or(admin_url.as_str(), |(b, _)| b);
        Ok(PostgresDatabase {
            url: format!("{base}/{name}"),
            admin_url,
            name,
        })
    }
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Drop runs inside the test's runtime: use a thread with its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(psql(&admin_url, &sql)).ok()
        })
        .join();
    }
}

async fn psql(url: &str, sql: &str) -> Result<()> {
    let status = tokio::process::Command::new("psql")
        .arg(url)
        .arg("-v")
        .arg("ON_ERROR_STOP=1")
        .arg("-q")
        .arg("-c")
        .arg(sql)
        .status()
        .await
        .context("running psql")?;
    anyhow::ensure!(status.success(), "psql `{sql}` failed");
    Ok(())
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{}_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn init_tracing() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_env("PODIUM_LOG")
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
            )
            .with_test_writer()
            .try_init();
    });
}

/// Polls `check` every 100 ms until it returns `Some`, for at most `timeout`; panics with
/// `what` if it never does.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A TCP listener that counts the connections it accepts (and answers none), to prove that a
/// request never left the host.
#[derive(Debug)]
pub struct ConnectionCounter {
    pub port: u16,
    count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl ConnectionCounter {
    pub async fn start() -> ConnectionCounter {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind counter");
        let port = listener.local_addr().expect("addr").port();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c = count.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(stream);
            }
        });
        ConnectionCounter { port, count, task }
    }

    pub fn count(&self) -> usize {
        self.count.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for ConnectionCounter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A `podium serve` process (the binary the caller names), for what an in-process server cannot
/// show: a `kill -9`. Killed when dropped.
#[derive(Debug)]
pub struct ProcessServer {
    pub url: String,
    child: tokio::process::Child,
    log: std::sync::Arc<std::sync::Mutex<String>>,
    /// The task reading the log; it ends when the process closes its stderr.
    reader: tokio::task::JoinHandle<()>,
}

impl ProcessServer {
    /// Starts `bin serve` on a free port of 127.0.0.1 with the test admin token, and waits until
    /// it serves.
    pub async fn start(
        bin: &str,
        data_dir: &std::path::Path,
        database_url: Option<&str>,
    ) -> ProcessServer {
        ProcessServer::start_logging(bin, data_dir, database_url, "info", &[]).await
    }

    /// Starts it with this log filter (`PODIUM_LOG`, e.g. `debug`) and more `serve` options.
    pub async fn start_logging(
        bin: &str,
        data_dir: &std::path::Path,
        database_url: Option<&str>,
        filter: &str,
        options: &[&str],
    ) -> ProcessServer {
        let mut command = tokio::process::Command::new(bin);
        command
            .args([
                "serve",
                "--log-json",
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
            ])
            .arg(data_dir)
            .arg("--compiled-dir")
            .arg(std::path::Path::new(env!("OUT_DIR")).join("compiled-plugins"))
            .env("PODIUM_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("PODIUM_LOG", filter)
            .env_remove("PODIUM_DATABASE_URL");
        if let Some(url) = database_url {
            command.arg("--database-url").arg(url);
        }
        command.args(options);
        ProcessServer::spawn(command).await
    }

    /// Starts the server `command` runs (its stderr JSON log lines), and waits until it serves.
    pub async fn spawn(mut command: tokio::process::Command) -> ProcessServer {
        use tokio::io::AsyncBufReadExt;
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("starting podium serve");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let url = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(line) = lines.next_line().await.expect("reading podium's log") {
                if line.contains("podium is serving")
                    && let Ok(event) = serde_json::from_str::<Value>(&line)
                    && let Some(url) = event["fields"]["url"].as_str()
                {
                    return Some(url.to_owned());
                }
            }
            None
        })
        .await
        .expect("podium did not start within 2 minutes")
        .expect("podium exited before serving");
        // Keep reading the log, so the child never blocks on a full pipe and tests can grep it.
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = log.clone();
        let reader = tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut log = sink.lock().expect("log poisoned");
                log.push_str(&line);
                log.push('\n');
            }
        });
        ProcessServer {
            url,
            child,
            log,
            reader,
        }
    }

    /// Everything the server logged so far (after it started serving).
    pub fn log(&self) -> String {
        self.log.lock().expect("log poisoned").clone()
    }

    /// A client with this token, or none.
    pub fn client(&self, token: Option<&str>) -> Client {
        Client {
            base: self.url.clone(),
            token: token.map(str::to_owned),
            http: reqwest::Client::new(),
        }
    }

    pub fn admin(&self) -> Client {
        Client {
            base: self.url.clone(),
            token: Some(ADMIN_TOKEN.to_owned()),
            http: reqwest::Client::new(),
        }
    }

    /// A client with this token, or none, over `http` (one that trusts the server's
    /// certificate, for a server serving TLS).
    pub fn client_with(&self, http: reqwest::Client, token: Option<&str>) -> Client {
        Client {
            base: self.url.clone(),
            token: token.map(str::to_owned),
            http,
        }
    }

    /// The process id (a network namespace's, for `nsenter`).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The process's resident memory, in KiB, and the CPU time it used so far.
    pub fn usage(&self) -> Option<(u64, Duration)> {
        process_usage(self.child.id()?)
    }

    /// The process's peak resident memory in KiB since it started or since
    /// [`ProcessServer::reset_peak`].
    pub fn peak_rss(&self) -> Option<u64> {
        let pid = self.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }

    /// Resets the peak resident memory to the current (Linux's `clear_refs`, value 5).
    pub fn reset_peak(&self) -> std::io::Result<()> {
        let pid = self.child.id().ok_or(std::io::ErrorKind::NotFound)?;
        std::fs::write(format!("/proc/{pid}/clear_refs"), "5")
    }

    /// `kill -TERM`, as an orchestrator stops a replica: waits (up to two minutes) for the
    /// process to exit and answers how it exited and everything it logged.
    pub async fn terminate(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().expect("the process runs");
        let sent = tokio::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .await
            .expect("running kill");
        assert!(sent.success(), "kill -TERM {pid}: {sent}");
        let status = tokio::time::timeout(Duration::from_secs(120), self.child.wait())
            .await
            .expect("podium did not exit within 2 minutes of SIGTERM")
            .expect("waiting for podium");
        let _ = (&mut self.reader).await;
        (status, self.log())
    }

    /// `kill -9`: no shutdown, no flush.
    pub async fn kill9(mut self) {
        self.child.start_kill().expect("SIGKILL");
        let _ = self.child.wait().await;
    }
}

/// An HTTP server on 127.0.0.1 that answers every request with `body` (the "image" a BMC
/// downloads), stopped when dropped.
#[derive(Debug)]
pub struct ImageServer {
    port: u16,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl ImageServer {
    pub async fn start(body: Vec<u8>) -> ImageServer {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the image server");
        let port = listener.local_addr().expect("addr").port();
        let body = std::sync::Arc::new(body);
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = hits.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (body, counted) = (body.clone(), counted.clone());
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0_u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(n) if n > 0 && request.len() < 64 * 1024 => {
                                request.extend_from_slice(&buf[..n]);
                            }
                            _ => return,
                        }
                    }
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(head.as_bytes()).await;
                    if !request.starts_with(b"HEAD ") {
                        let _ = stream.write_all(&body).await;
                    }
                    let _ = stream.shutdown().await;
                });
            }
        });
        ImageServer { port, hits, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Requests answered so far.
    pub fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for ImageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An HTTP proxy on 127.0.0.1 in front of a real BMC (the emulator) that, while `failing` is
/// set, answers every request itself with `500 Internal Server Error` and a Redfish error body,
/// as a BMC whose service is wedged does; otherwise it forwards each request unchanged. Each
/// answer waits `delay_ms` first, plus up to `jitter_ms` more (uniformly at random), as a slow
/// BMC's does; `requests` counts what it was sent. Stopped when dropped.
#[derive(Debug)]
pub struct FaultProxy {
    port: u16,
    pub failing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Milliseconds every request waits before it is answered (or forwarded).
    pub delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// At most this many milliseconds more, drawn for each request.
    pub jitter_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Requests received so far.
    pub requests: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The most requests it held at once (received, not yet answered) so far.
    pub most_at_once: std::sync::Arc<std::sync::atomic::AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    pub async fn start(upstream: &str) -> FaultProxy {
        FaultProxy::start_with(upstream, None).await
    }

    /// A proxy that shows one system of the emulator behind it: its `Systems` collection lists
    /// only the one whose id is `system`, as a host's own BMC would. Many such proxies in front
    /// of one emulator are many single-system BMCs, without an emulator process each.
    pub async fn start_one_system(upstream: &str, system: &str) -> FaultProxy {
        FaultProxy::start_with(upstream, Some(system.to_owned())).await
    }

    async fn start_with(upstream: &str, only_system: Option<String>) -> FaultProxy {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the fault proxy");
        let port = listener.local_addr().expect("addr").port();
        let failing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let delay_ms = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let jitter_ms = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let most_at_once = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let at_once = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let upstream = upstream.trim_end_matches('/').to_owned();
        let client = reqwest::Client::new();
        let (flag, delay, jitter, count) = (
            failing.clone(),
            delay_ms.clone(),
            jitter_ms.clone(),
            requests.clone(),
        );
        let (most, now) = (most_at_once.clone(), at_once.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (flag, client, upstream) = (flag.clone(), client.clone(), upstream.clone());
                let (delay, jitter, count) = (delay.clone(), jitter.clone(), count.clone());
                let (most, now) = (most.clone(), now.clone());
                let only_system = only_system.clone();
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0_u8; 4096];
                    let head_end = loop {
                        if let Some(i) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                            break i + 4;
                        }
                        match stream.read(&mut buf).await {
                            Ok(n) if n > 0 && request.len() < 1 << 20 => {
                                request.extend_from_slice(&buf[..n])
                            }
                            _ => return,
                        }
                    };
                    let head = String::from_utf8_lossy(&request[..head_end]).into_owned();
                    let mut lines = head.split("\r\n");
                    let mut first = lines.next().unwrap_or("").split(' ');
                    let (method, path) =
                        (first.next().unwrap_or("GET"), first.next().unwrap_or("/"));
                    let headers: Vec<(String, String)> = lines
                        .filter_map(|l| l.split_once(':'))
                        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                        .collect();
                    let length: usize = headers
                        .iter()
                        .find(|(k, _)| k == "content-length")
                        .and_then(|(_, v)| v.parse().ok())
                        .unwrap_or(0);
                    while request.len() < head_end + length {
                        match stream.read(&mut buf).await {
                            Ok(n) if n > 0 => request.extend_from_slice(&buf[..n]),
                            _ => return,
                        }
                    }
                    let body = request[head_end..head_end + length].to_vec();
                    count.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                    let held = now.fetch_add(1, std::sync::atomic::Ordering::AcqRel) + 1;
                    most.fetch_max(held, std::sync::atomic::Ordering::AcqRel);
                    // Counted out however this request ends.
                    let _held = counted_out(now.clone());
                    let wait = delay.load(std::sync::atomic::Ordering::Acquire)
                        + fastrand::u64(..=jitter.load(std::sync::atomic::Ordering::Acquire));
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    let (status, content_type, answer) = if flag
                        .load(std::sync::atomic::Ordering::Acquire)
                    {
                        (
                                500,
                                "application/json".to_owned(),
                                br#"{"error": {"code": "Base.1.0.InternalError", "message": "the service is wedged"}}"#.to_vec(),
                            )
                    } else {
                        let method = reqwest::Method::from_bytes(method.as_bytes())
                            .unwrap_or(reqwest::Method::GET);
                        let mut forward = client.request(method, format!("{upstream}{path}"));
                        for (k, v) in &headers {
                            if !matches!(k.as_str(), "host" | "content-length" | "connection") {
                                forward = forward.header(k.as_str(), v.as_str());
                            }
                        }
                        match forward.body(body).send().await {
                            Ok(r) => {
                                let status = r.status().as_u16();
                                let content_type = r
                                    .headers()
                                    .get("content-type")
                                    .and_then(|v| v.to_str().ok())
                                    .unwrap_or("application/json")
                                    .to_owned();
                                let mut bytes =
                                    r.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
                                if let Some(system) = &only_system
                                    && path.trim_end_matches('/') == "/redfish/v1/Systems"
                                {
                                    bytes = one_member(&bytes, system);
                                }
                                (status, content_type, bytes)
                            }
                            Err(_) => return,
                        }
                    };
                    let head = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n",
                        answer.len()
                    );
                    let _ = stream.write_all(head.as_bytes()).await;
                    let _ = stream.write_all(&answer).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        FaultProxy {
            port,
            failing,
            delay_ms,
            jitter_ms,
            requests,
            most_at_once,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Decrements `counter` when dropped.
fn counted_out(counter: std::sync::Arc<std::sync::atomic::AtomicU64>) -> impl Drop {
    struct Decrement(std::sync::Arc<std::sync::atomic::AtomicU64>);
    impl Drop for Decrement {
        fn drop(&mut self) {
            self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        }
    }
    Decrement(counter)
}

/// A Redfish collection with only the member whose id (its path's last segment) is `id`.
fn one_member(collection: &[u8], id: &str) -> Vec<u8> {
    let Ok(mut doc) = serde_json::from_slice::<Value>(collection) else {
        return collection.to_vec();
    };
    if let Some(members) = doc["Members"].as_array_mut() {
        members.retain(|m| {
            m["@odata.id"]
                .as_str()
                .is_some_and(|p| p.trim_end_matches('/').rsplit('/').next() == Some(id))
        });
        let count = members.len();
        doc["Members@odata.count"] = serde_json::json!(count);
    }
    serde_json::to_vec(&doc).unwrap_or_default()
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A benchmark's numeric arguments (`cargo bench --bench NAME -- 10000 5`), each defaulting to
/// the matching entry of `defaults`; other arguments (cargo's `--bench`) are skipped.
pub fn bench_args<const N: usize>(defaults: [usize; N]) -> [usize; N] {
    let given: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    std::array::from_fn(|i| given.get(i).copied().unwrap_or(defaults[i]))
}

/// A process's resident memory in KiB (`VmRSS`) and the CPU time (user and system) it used so
/// far, from `/proc`; `None` once it is gone.
pub fn process_usage(pid: u32) -> Option<(u64, Duration)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    // utime and stime, fields 14 and 15 of /proc/PID/stat, in clock ticks (100 per second on
    // Linux); the command name (field 2) may hold spaces, so count after its `)`.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((rss, Duration::from_millis(ticks * 10)))
}
