//! `Client`: a small JSON client of the API (and of its event stream), whose answers the tests
//! read as `Reply`s.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::eventually;
use podium_types::HostKind;
use podium_types::views::{
    EventView, HostView, List, PodManagerView, TenantView, TokenCreatedView,
};

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
                if matches!(event.name.as_str(), "claim" | "host" | "operation") {
                    // Each change event reads as the model's `EventView`, as a client compiled
                    // against it reads it: a renamed or retyped field fails here.
                    let view: EventView = serde_json::from_value(event.data.clone())
                        .unwrap_or_else(|e| panic!("not an EventView: {e}: {event:?}"));
                    assert_eq!(view.kind.as_str(), event.name, "{event:?}");
                    assert_eq!(view.seq.to_string(), event.id, "{event:?}");
                }
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

    /// Asserts a 422 naming `field` whose message says `says` (the whole answer in the panic).
    #[track_caller]
    pub fn assert_invalid(&self, field: &str, says: &str) {
        assert_eq!(
            self.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            self.text
        );
        assert_eq!(self.field(), field, "{}", self.text);
        assert!(self.message().contains(says), "{}", self.text);
    }

    /// The body as one of the API's views (`podium_types::views`), the type a client compiled
    /// against the model reads: a field renamed or retyped fails here, naming it.
    pub fn view<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_value(self.body.clone())
            .unwrap_or_else(|e| panic!("not a {}: {e}\n{}", std::any::type_name::<T>(), self.text))
    }
}

impl Client {
    /// The URL the client sends to (`http://127.0.0.1:PORT`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The same client, sending through `http` (one that trusts a test's certificate, or
    /// keeps connections otherwise).
    pub(crate) fn with_http(mut self, http: reqwest::Client) -> Client {
        self.http = http;
        self
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
        let tenant = self.tenant_named(name).await;
        self.created(
            "/v1/grants",
            serde_json::json!({"tenant": tenant, "pod_manager": pm}),
        )
        .await;
        let token = self.token_for(&tenant).await;
        (tenant, token)
    }

    /// Asks host `host` to power `action` (`on`, `off`, ...): the operation it queued.
    pub async fn power(&self, host: &str, action: &str) -> podium_types::OperationId {
        let reply = self
            .post(
                &format!("/v1/hosts/{host}/power"),
                serde_json::json!({ "action": action }),
            )
            .await;
        assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
        reply.view::<podium_types::views::OperationView>().id
    }

    /// A new tenant called `name`, with no grant: its id.
    pub async fn tenant_named(&self, name: &str) -> String {
        self.created("/v1/tenants", serde_json::json!({ "name": name }))
            .await
            .view::<TenantView>()
            .id
            .to_string()
    }

    /// A new token of tenant `tenant`.
    pub async fn token_for(&self, tenant: &str) -> String {
        self.created(
            &format!("/v1/tenants/{tenant}/tokens"),
            serde_json::json!({}),
        )
        .await
        .view::<TokenCreatedView>()
        .token
    }

    /// Every host `query` selects (`&state=available`, or empty for all), page after page.
    pub async fn hosts_all(&self, query: &str) -> Vec<HostView> {
        let mut all = Vec::new();
        let mut cursor = String::new();
        loop {
            let reply = self
                .get(&format!("/v1/hosts?limit=1000{query}{cursor}"))
                .await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
            let page: List<HostView> = reply.view();
            all.extend(page.items);
            match page.next {
                Some(next) => cursor = format!("&cursor={next}"),
                None => return all,
            }
        }
    }

    /// Syncs every pod manager of `uuids` at once and waits, without a deadline (benchmarks run
    /// for as long as they take), until every sync has succeeded; a failed sync panics.
    pub async fn sync_all(&self, uuids: &[String]) {
        let mut syncs = Vec::new();
        for uuid in uuids {
            let sync = self
                .post(
                    &format!("/v1/pod_managers/{uuid}/sync"),
                    serde_json::json!({}),
                )
                .await;
            assert!(sync.status.is_success(), "{}", sync.text);
            syncs.push(sync.body["id"].as_str().unwrap().to_owned());
        }
        for op in &syncs {
            loop {
                let op = self.get(&format!("/v1/operations/{op}")).await;
                assert_ne!(op.body["status"], "failed", "a sync failed: {}", op.text);
                if op.body["status"] == "succeeded" {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }

    /// Waits (up to 60 s) until pod manager `uuid` has `n` hosts of kind `system` in `state`,
    /// and answers them.
    pub async fn systems_in_state(&self, uuid: &str, n: usize, state: &str) -> Vec<HostView> {
        eventually(
            Duration::from_secs(60),
            &format!("{n} hosts {state}"),
            || async {
                let hosts: Vec<_> = self
                    .hosts_all(&format!("&pod_manager={uuid}"))
                    .await
                    .into_iter()
                    .filter(|h| h.kind == HostKind::System)
                    .collect();
                (hosts.len() == n && hosts.iter().all(|h| h.state.as_str() == state))
                    .then_some(hosts)
            },
        )
        .await
    }

    /// Registers a pod manager named `site` at `url`; answers its uuid.
    pub async fn create_site(&self, url: &str) -> String {
        let pm = self
            .created(
                "/v1/pod_managers",
                serde_json::json!({"name": "site", "url": url}),
            )
            .await;
        pm.view::<PodManagerView>().uuid.to_string()
    }

    /// Registers a pod manager named `site` at `url` and syncs it (see [`Client::sync_all`]);
    /// answers its uuid.
    pub async fn synced_site(&self, url: &str) -> String {
        let pm = self.create_site(url).await;
        self.sync_all(std::slice::from_ref(&pm)).await;
        pm
    }

    /// Registers a pod manager at `url` whose `systems` systems are all to be available, syncs
    /// it, and answers the first of its hosts once they are.
    pub async fn available_host(&self, url: &str, systems: usize) -> HostView {
        let pm = self.synced_site(url).await;
        self.systems_in_state(&pm, systems, "available")
            .await
            .remove(0)
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
