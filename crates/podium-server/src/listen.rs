//! The listeners: serving an application on a bound socket over plain HTTP or TLS until the
//! shutdown, and the TLS certificate, loaded from PEM files and reloaded (on SIGHUP, or when the
//! files change) without dropping a connection: a new handshake gets the new certificate, an
//! open connection keeps the one it began with.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum_server::tls_rustls::RustlsConfig;
use futures::future::BoxFuture;

/// The PEM files of `--tls-cert` and `--tls-key`.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// How often the certificate files are checked for a change.
const WATCH_EVERY: Duration = Duration::from_secs(2);

impl TlsFiles {
    /// Loads the certificate and key; an error names the files and what is wrong.
    pub(crate) async fn load(&self) -> anyhow::Result<RustlsConfig> {
        RustlsConfig::from_pem_file(&self.cert, &self.key)
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot load the TLS certificate {} with the key {}: {e}",
                    self.cert.display(),
                    self.key.display()
                )
            })
    }

    /// What identifies the files' contents now: their modification times and lengths.
    fn stamp(&self) -> Option<[(SystemTime, u64); 2]> {
        let of = |path: &Path| {
            let meta = std::fs::metadata(path).ok()?;
            Some((meta.modified().ok()?, meta.len()))
        };
        Some([of(&self.cert)?, of(&self.key)?])
    }

    /// Reloads `config` from the files on SIGHUP and whenever they change, for the life of the
    /// process. A certificate that does not load is logged and the one in use kept.
    pub(crate) fn watch(self, config: RustlsConfig) {
        tokio::spawn(async move {
            let mut hangup =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
            let mut seen = self.stamp();
            loop {
                let why = tokio::select! {
                    Some(()) = async {
                        match hangup.as_mut() {
                            Some(h) => h.recv().await,
                            None => std::future::pending().await,
                        }
                    } => "SIGHUP",
                    () = tokio::time::sleep(WATCH_EVERY) => {
                        let now = self.stamp();
                        if now == seen || now.is_none() {
                            continue;
                        }
                        "the files changed"
                    }
                };
                seen = self.stamp();
                match config.reload_from_pem_file(&self.cert, &self.key).await {
                    Ok(()) => {
                        tracing::info!(why, cert = %self.cert.display(), "reloaded the TLS certificate")
                    }
                    Err(e) => tracing::warn!(why, cert = %self.cert.display(), error = %e,
                        "cannot reload the TLS certificate; the one in use stays"),
                }
            }
        });
    }
}

/// Serves `app` on `listener` (over TLS where `tls` is given) until `shutdown` resolves, then
/// finishes the requests under way.
pub(crate) fn serve(
    listener: tokio::net::TcpListener,
    tls: Option<RustlsConfig>,
    app: Router,
    shutdown: futures::future::Shared<BoxFuture<'static, ()>>,
) -> BoxFuture<'static, std::io::Result<()>> {
    match tls {
        None => Box::pin(async move {
            // A clone of the router (one `Arc`) per connection. Served as it is, axum rebuilds
            // every route for each connection (`with_state(())`): about 60 KiB held for as long
            // as the connection stays open, 60 MiB for a thousand clients (BENCHMARKS.md).
            axum::serve(listener, app.into_make_service())
                .with_graceful_shutdown(shutdown)
                .await
        }),
        Some(config) => Box::pin(async move {
            let handle = axum_server::Handle::new();
            let stopper = handle.clone();
            tokio::spawn(async move {
                shutdown.await;
                stopper.graceful_shutdown(None);
            });
            axum_server::from_tcp_rustls(listener.into_std()?, config)?
                .handle(handle)
                .serve(app.into_make_service())
                .await
        }),
    }
}
