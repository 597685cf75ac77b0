//! `TestServer`: a real Podium server in the test's process, on a free loopback port, over a
//! fresh SQLite file or a fresh PostgreSQL database, stopped when dropped.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use anyhow::Result;
use podium_app::app::Podium;
use podium_server::server::{self, ServeConfig};
use podium_types::Secret;

use crate::{ADMIN_TOKEN, Client, PostgresDatabase};

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

    /// One compile cache for the whole run: the bundled plugins compiled once, not per test.
    pub fn compile_cache() -> std::path::PathBuf {
        std::path::Path::new(env!("OUT_DIR")).join("compiled-plugins")
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
        config.compiled_dir = Some(TestServer::compile_cache());
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
    pub async fn restart(self) -> TestServer {
        self.restart_with(|_| {}).await
    }

    /// [`TestServer::restart`], the new server's configuration changed by `adjust` (the one it
    /// started with, for a restart that keeps its addresses).
    pub async fn restart_with(mut self, adjust: impl FnOnce(&mut ServeConfig)) -> TestServer {
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
        adjust(&mut config);
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

    /// The bundled hardware driver `name` (`redfish`, `fake`), compiled and ready, for a test
    /// that calls it through the runtime as the host does.
    pub async fn bundled_driver(&self, name: &str) -> podium_runtime::Plugin {
        let reference = podium_app::plugins::PluginRef {
            name: name.into(),
            ..Default::default()
        };
        self.podium
            .plugins()
            .resolve(&reference, podium_runtime::World::HardwareDriver, "driver")
            .await
            .unwrap_or_else(|e| panic!("the bundled {name} plugin: {e:#}"))
    }

    /// A client authenticated as the admin.
    pub fn admin(&self) -> Client {
        self.client(Some(ADMIN_TOKEN))
    }

    /// A client with this token, or none.
    pub fn client(&self, token: Option<&str>) -> Client {
        let client = Client::new(&self.url, token);
        match &self.certificate {
            Some(pem) => client.with_http(
                reqwest::Client::builder()
                    .add_root_certificate(
                        reqwest::Certificate::from_pem(pem.as_bytes()).expect("a PEM certificate"),
                    )
                    .build()
                    .expect("an HTTP client"),
            ),
            None => client,
        }
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
