//! The CLI's side of the API: where the login is kept, and requests that turn API errors into
//! messages a person can act on.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use reqwest::Method;
use serde_json::Value;

use podium_types::views::MeView;
use podium_types::{Role, Secret};

/// What `podium login` keeps: the API's URL and a token.
#[derive(Debug, serde::Deserialize)]
pub(super) struct Login {
    pub(super) url: String,
    pub(super) token: Secret,
}

/// Where the login is kept: `$PODIUM_CONFIG`, else `$XDG_CONFIG_HOME/podium/config.json`, else
/// `~/.config/podium/config.json`.
pub(super) fn config_path() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("PODIUM_CONFIG") {
        return Ok(PathBuf::from(path));
    }
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => std::env::home_dir()
            .context("no home directory: set PODIUM_CONFIG to say where to keep the login")?
            .join(".config"),
    };
    Ok(base.join("podium").join("config.json"))
}

impl Login {
    /// Writes the login with mode 0600 (its directory 0700), replacing any earlier one.
    pub(super) fn save(&self) -> anyhow::Result<PathBuf> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let path = config_path()?;
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("creating {}", dir.display()))?;
        }
        let text = serde_json::json!({"url": self.url, "token": self.token.expose()});
        // A fresh, randomly named file (created exclusively, mode 0600) renamed over the old
        // one: never a file someone else prepared, never a half-written login.
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let mut file = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("writing in {}", dir.display()))?;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(serde_json::to_string_pretty(&text)?.as_bytes())?;
        file.as_file().sync_all()?;
        file.persist(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }

    pub(super) fn load() -> anyhow::Result<Option<Login>> {
        let path = config_path()?;
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .with_context(|| format!("{} is not a podium login", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
}

/// The API refused a request: its status, and the error as one line.
#[derive(Debug, thiserror::Error)]
#[error("{line}")]
pub(super) struct Refused {
    pub(super) status: reqwest::StatusCode,
    line: String,
}

/// Whether `error` is the API's answer that what was asked for does not exist (404).
pub(super) fn not_found(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|e| e.downcast_ref::<Refused>())
        .any(|r| r.status == reqwest::StatusCode::NOT_FOUND)
}

/// A client of one Podium API.
pub(super) struct Client {
    base: String,
    token: Option<Secret>,
    http: reqwest::Client,
    /// Who the token is (`GET /v1/me`), asked once where a command depends on it.
    me: tokio::sync::OnceCell<MeView>,
}

impl Client {
    pub(super) fn new(base: &str, token: Option<Secret>) -> anyhow::Result<Client> {
        let base = base.trim_end_matches('/').to_owned();
        url::Url::parse(&base).with_context(|| format!("`{base}` is not a URL"))?;
        Ok(Client {
            base,
            token,
            http: reqwest::Client::builder()
                .user_agent(concat!("podium-cli/", env!("CARGO_PKG_VERSION")))
                .build()?,
            me: tokio::sync::OnceCell::new(),
        })
    }

    /// Who the token belongs to, asked of the API once.
    pub(super) async fn me(&self) -> anyhow::Result<&MeView> {
        self.me
            .get_or_try_init(|| async {
                self.get_view("/v1/me")
                    .await
                    .context("asking the API who the token is")
            })
            .await
    }

    /// Whether the token is a tenant's.
    pub(super) async fn is_tenant(&self) -> anyhow::Result<bool> {
        Ok(self.me().await?.role == Role::Tenant)
    }

    /// The client of `--url`/`PODIUM_URL` and `PODIUM_TOKEN`, falling back to the login.
    pub(super) fn from_env(url: Option<&str>) -> anyhow::Result<Client> {
        let login = Login::load()?;
        let token = std::env::var("PODIUM_TOKEN")
            .ok()
            .filter(|t| !t.is_empty())
            .map(Secret::new)
            .or_else(|| login.as_ref().map(|l| l.token.clone()));
        let url = match (url, &login) {
            (Some(url), _) => url.to_owned(),
            (None, Some(login)) => login.url.clone(),
            (None, None) => bail!("not logged in: run `podium login URL` (or set PODIUM_URL)"),
        };
        Client::new(&url, token)
    }

    pub(super) async fn send<B: serde::Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> anyhow::Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(body);
        }
        self.execute(request, &url).await
    }

    /// A POST of raw bytes (a plugin upload).
    pub(super) async fn post_bytes(
        &self,
        path: &str,
        content_type: &str,
        bytes: Vec<u8>,
    ) -> anyhow::Result<Value> {
        let url = format!("{}{path}", self.base);
        let request = self
            .http
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(bytes);
        self.execute(request, &url).await
    }

    async fn execute(&self, request: reqwest::RequestBuilder, url: &str) -> anyhow::Result<Value> {
        let response = self.respond(request).await?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if text.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text)
            .with_context(|| format!("{url} answered {status} with something that is not JSON"))
    }

    /// Sends a request with the token; a success, or the API's error as one line.
    async fn respond(
        &self,
        mut request: reqwest::RequestBuilder,
    ) -> anyhow::Result<reqwest::Response> {
        if let Some(token) = &self.token {
            request = request.bearer_auth(token.expose());
        }
        let (http, request) = request.build_split();
        let request = request.with_context(|| format!("a request to {}", self.base))?;
        // A read is sent again once when its connection broke before any answer came: a
        // kept-alive connection the server closed as the request went out (as when it restarts)
        // says nothing about the server, and a GET or HEAD changes nothing to send twice.
        let again = matches!(*request.method(), Method::GET | Method::HEAD)
            .then(|| request.try_clone())
            .flatten();
        let response = match (http.execute(request).await, again) {
            (Err(e), Some(again)) if e.is_request() && !e.is_timeout() => http.execute(again).await,
            (result, _) => result,
        }
        .with_context(|| format!("cannot reach {}", self.base))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let url = response.url().to_string();
        let text = response.text().await.unwrap_or_default();
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let error = &body["error"];
        match error["message"].as_str() {
            Some(message) => {
                let mut line = message.to_owned();
                if let Some(field) = error["field"].as_str() {
                    line = format!("{field}: {line}");
                }
                let code = error["code"].as_str().unwrap_or("error");
                Err(Refused {
                    status,
                    line: format!("{line} ({status}, {code})"),
                }
                .into())
            }
            None => Err(Refused {
                status,
                line: format!("{url} answered {status}"),
            }
            .into()),
        }
    }

    /// GETs `path` into the file `to`, written whole or not at all (a partial file beside it,
    /// linked under `to` at the end only if `check` accepts its first bytes); answers the bytes
    /// written. `to` must not exist, and is never overwritten.
    pub(super) async fn download(
        &self,
        path: &str,
        to: &std::path::Path,
        check: impl FnOnce(&[u8]) -> anyhow::Result<()>,
    ) -> anyhow::Result<u64> {
        use tokio::io::AsyncWriteExt;
        let url = format!("{}{path}", self.base);
        let mut response = self.respond(self.http.get(&url)).await?;
        let expected = response.content_length();
        let mut partial = to.as_os_str().to_owned();
        partial.push(".partial");
        let partial = std::path::PathBuf::from(partial);
        let mut file = tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
            .await
            .with_context(|| format!("cannot create {}", partial.display()))?;
        let written = async {
            let mut written = 0_u64;
            let mut head = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .with_context(|| format!("the download from {url} broke off"))?
            {
                if head.len() < 64 {
                    head.extend_from_slice(&chunk[..chunk.len().min(64 - head.len())]);
                }
                file.write_all(&chunk).await?;
                written += chunk.len() as u64;
            }
            check(&head)?;
            if let Some(expected) = expected {
                anyhow::ensure!(
                    written == expected,
                    "{url} sent {written} bytes of {expected}"
                );
            }
            file.sync_all().await?;
            // A link fails where `to` exists, even if it appeared meanwhile: never overwritten.
            tokio::fs::hard_link(&partial, to).await.with_context(|| {
                format!("cannot write {} (did it appear meanwhile?)", to.display())
            })?;
            Ok(written)
        }
        .await;
        let _ = tokio::fs::remove_file(&partial).await;
        written
    }

    pub(super) async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.send::<Value>(Method::GET, path, None).await
    }

    /// A GET whose answer is read as one of the model's views (`podium_types::views`).
    pub(super) async fn get_view<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
    ) -> anyhow::Result<T> {
        view(self.get(path).await?)
    }

    /// A POST of a request body (one of `podium_types::requests`, or JSON); other methods
    /// with a body go through `send`.
    pub(super) async fn post<B: serde::Serialize + ?Sized>(
        &self,
        path: &str,
        body: &B,
    ) -> anyhow::Result<Value> {
        self.send(Method::POST, path, Some(body)).await
    }

    pub(super) async fn delete(&self, path: &str) -> anyhow::Result<Value> {
        self.send::<Value>(Method::DELETE, path, None).await
    }

    /// Every item of a paged list, following `next`.
    pub(super) async fn list(&self, path: &str) -> anyhow::Result<Vec<Value>> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let sep = if path.contains('?') { '&' } else { '?' };
            let page = match &cursor {
                Some(c) => {
                    let c: String = url::form_urlencoded::byte_serialize(c.as_bytes()).collect();
                    self.get(&format!("{path}{sep}cursor={c}")).await?
                }
                None => self.get(path).await?,
            };
            if let Some(batch) = page["items"].as_array() {
                items.extend(batch.iter().cloned());
            }
            match page["next"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(items),
            }
        }
    }
}

/// How long a broken event stream is tried again before the watch gives up (a server restarting
/// is back well within it).
const RECONNECT_FOR: std::time::Duration = std::time::Duration::from_secs(120);

type SseStream = std::pin::Pin<
    Box<
        dyn futures::Stream<
                Item = Result<
                    eventsource_stream::Event,
                    eventsource_stream::EventStreamError<reqwest::Error>,
                >,
            > + Send,
    >,
>;

/// One server-sent event: its `event` name and its data as JSON.
#[derive(Debug)]
pub(super) struct ServerEvent {
    pub(super) name: String,
    pub(super) data: Value,
}

/// A stream of the API's server-sent events (`GET /v1/events?...`) that reconnects where it
/// broke off, with the last event's id, so that no event is missed across a dropped connection
/// or a server's restart.
pub(super) struct Events<'a> {
    client: &'a Client,
    path: String,
    last_id: Option<String>,
    stream: Option<SseStream>,
}

impl Client {
    /// Opens an event stream; it has started once this answers (a change after it is seen).
    pub(super) async fn events(&self, path: &str) -> anyhow::Result<Events<'_>> {
        let mut events = Events {
            client: self,
            path: path.to_owned(),
            last_id: None,
            stream: None,
        };
        events.connect().await?;
        Ok(events)
    }
}

impl Events<'_> {
    async fn connect(&mut self) -> anyhow::Result<()> {
        use eventsource_stream::Eventsource;
        let url = format!("{}{}", self.client.base, self.path);
        let mut request = self
            .client
            .http
            .get(&url)
            .header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some(id) = &self.last_id {
            request = request.header("Last-Event-ID", id);
        }
        let response = self.client.respond(request).await?;
        self.stream = Some(Box::pin(response.bytes_stream().eventsource()));
        Ok(())
    }

    /// The next event. A broken stream is opened again after the last event seen, for up to
    /// [`RECONNECT_FOR`] while the server cannot be reached; an `error` event (the token was
    /// revoked) or a refusal ends the watch with the server's message.
    pub(super) async fn next(&mut self) -> anyhow::Result<ServerEvent> {
        use futures::StreamExt;
        let mut broken_since: Option<std::time::Instant> = None;
        let mut backoff = std::time::Duration::from_millis(250);
        let mut backoff_used = false;
        loop {
            let item = match self.stream.as_mut() {
                Some(stream) => stream.next().await,
                None => None,
            };
            match item {
                Some(Ok(event)) => {
                    if !event.id.is_empty() {
                        self.last_id = Some(event.id.clone());
                    }
                    // Where the stream starts: only its id counts.
                    if event.event == "ready" {
                        continue;
                    }
                    let data = serde_json::from_str(&event.data).unwrap_or(Value::Null);
                    if event.event == "error" {
                        let message = data["error"]["message"].as_str().unwrap_or("an error");
                        bail!("the server ended the event stream: {message}");
                    }
                    return Ok(ServerEvent {
                        name: event.event,
                        data,
                    });
                }
                // Ended (the server shut down) or broken: open it again, after a pause when it
                // broke again before any event came.
                Some(Err(_)) | None => {
                    self.stream = None;
                    let since = *broken_since.get_or_insert_with(std::time::Instant::now);
                    if backoff_used {
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
                    }
                    backoff_used = true;
                    while let Err(e) = self.connect().await {
                        let unreachable = e
                            .chain()
                            .any(|c| c.downcast_ref::<reqwest::Error>().is_some());
                        if !unreachable || since.elapsed() > RECONNECT_FOR {
                            return Err(e.context("the event stream broke off"));
                        }
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
                    }
                }
            }
        }
    }
}

/// An answer of the API as one of the model's views; an answer that is not one names the type.
pub(super) fn view<T: serde::de::DeserializeOwned>(answer: Value) -> anyhow::Result<T> {
    serde_json::from_value(answer).map_err(|e| {
        let name = std::any::type_name::<T>()
            .rsplit("::")
            .next()
            .unwrap_or("view");
        anyhow::anyhow!("the server answered something that is not a {name}: {e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server whose first connection answers one request with keep-alive, then closes as the
    /// second request arrives, answering nothing: the race a restarted server leaves a client's
    /// pooled connection in. Every later connection answers each request.
    async fn closing_server() -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let mut first = true;
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let closes = std::mem::take(&mut first);
                tokio::spawn(async move {
                    let mut buf = vec![0; 4096];
                    let mut answered = 0;
                    loop {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        }
                        if closes && answered == 1 {
                            return;
                        }
                        let body = r#"{"ok":true}"#;
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                            body.len()
                        );
                        socket.write_all(head.as_bytes()).await.unwrap();
                        socket.write_all(body.as_bytes()).await.unwrap();
                        answered += 1;
                    }
                });
            }
        });
        (url, server)
    }

    #[tokio::test]
    async fn a_read_is_sent_again_when_its_kept_alive_connection_closes_unanswered() {
        let (url, server) = closing_server().await;
        let client = Client::new(&url, None).unwrap();
        assert_eq!(client.get("/a").await.unwrap()["ok"], true);
        let again = client.get("/b").await;
        assert_eq!(again.unwrap()["ok"], true);
        server.abort();
    }

    #[tokio::test]
    async fn a_change_is_never_sent_twice() {
        let (url, server) = closing_server().await;
        let client = Client::new(&url, None).unwrap();
        assert_eq!(client.get("/a").await.unwrap()["ok"], true);
        let error = client
            .send(Method::POST, "/b", Some(&serde_json::json!({})))
            .await
            .unwrap_err();
        assert!(
            format!("{error:#}").starts_with(&format!("cannot reach {url}")),
            "{error:#}"
        );
        server.abort();
    }
}
