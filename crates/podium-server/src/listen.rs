//! The listeners: serving an application on a bound socket over plain HTTP or TLS until the
//! shutdown, and the TLS certificate, loaded from PEM files and reloaded (on SIGHUP, or when the
//! files change) without dropping a connection: a new handshake gets the new certificate, an
//! open connection keeps the one it began with. A plain-HTTP request to the TLS listener is
//! answered, in plain HTTP, that it must be HTTPS (400), instead of a connection cut short.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum_server::accept::Accept;
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use futures::future::BoxFuture;
use tokio::net::TcpStream;

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
            let acceptor = RustlsAcceptor::new(config).acceptor(PlainHttpRefused);
            axum_server::from_tcp(listener.into_std()?)?
                .acceptor(acceptor)
                .handle(handle)
                .serve(app.into_make_service())
                .await
        }),
    }
}

/// How long a new connection to the TLS listener may take to send its first byte, and a
/// plain-HTTP one its request.
const FIRST_BYTES_WITHIN: Duration = Duration::from_secs(10);

/// The most of a plain-HTTP request read before it is answered.
const PLAIN_REQUEST_MAX: usize = 64 << 10;

/// Before the TLS handshake: a connection whose first byte is not a TLS record's (a client
/// speaking plain HTTP to the TLS port, as a browser or a tool given `http://` does) is answered
/// in plain HTTP that this address takes HTTPS only (400, the API's error body), and closed.
/// Nothing of the request is looked at but its length: its credentials, if any, are dropped.
#[derive(Clone, Copy, Debug)]
struct PlainHttpRefused;

/// The first byte of a TLS handshake record.
const TLS_HANDSHAKE: u8 = 0x16;

impl<S: Send + 'static> Accept<TcpStream, S> for PlainHttpRefused {
    type Stream = TcpStream;
    type Service = S;
    type Future = BoxFuture<'static, std::io::Result<(TcpStream, S)>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        Box::pin(async move {
            let mut first = [0_u8; 1];
            let peeked = tokio::time::timeout(FIRST_BYTES_WITHIN, stream.peek(&mut first))
                .await
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
            if peeked == 0 || first[0] == TLS_HANDSHAKE {
                return Ok((stream, service));
            }
            let _ = tokio::time::timeout(FIRST_BYTES_WITHIN, refuse_plain_http(stream)).await;
            Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a plain-HTTP request to the TLS listener",
            ))
        })
    }
}

/// Reads a plain-HTTP request (its head and as much body as it says it has, up to a bound, so
/// that closing the connection does not reset it before the client reads the answer), answers
/// 400 and closes.
async fn refuse_plain_http(mut stream: TcpStream) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut request = Vec::new();
    let mut buffer = [0_u8; 4096];
    let head_end = loop {
        if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break Some(at + 4);
        }
        if request.len() >= PLAIN_REQUEST_MAX {
            break None;
        }
        let n = stream.read(&mut buffer).await?;
        if n == 0 {
            break None;
        }
        request.extend_from_slice(&buffer[..n]);
    };
    if let Some(head_end) = head_end {
        let head = String::from_utf8_lossy(&request[..head_end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0)
            .min(PLAIN_REQUEST_MAX);
        let mut left = (head_end + length).saturating_sub(request.len());
        while left > 0 {
            let n = stream.read(&mut buffer).await?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
        }
    }
    let body = serde_json::json!({"error": {
        "code": podium_types::ErrorCode::TlsRequired,
        "message": "this address serves HTTPS only: send the request to https:// instead of \
                    http:// (nothing it carried was used)",
    }})
    .to_string();
    let answer = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(answer.as_bytes()).await?;
    stream.shutdown().await
}
