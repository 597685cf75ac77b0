//! `EventReceiver`: the destination of Redfish event subscriptions in tests, an axum server on
//! 127.0.0.1 that records what is POSTed to it, and can refuse the next posts with a 503.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use serde_json::Value;

/// One POST the receiver took: its path, headers and JSON body.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Debug, Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    /// Posts still to refuse.
    refuse: AtomicUsize,
    /// Posts refused so far.
    refused: AtomicUsize,
}

/// Stopped when dropped.
#[derive(Debug)]
pub struct EventReceiver {
    port: u16,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl EventReceiver {
    pub async fn start() -> EventReceiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the event receiver");
        let port = listener.local_addr().expect("addr").port();
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new()
            .fallback(axum::routing::post(take))
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        EventReceiver { port, shared, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every post taken so far (not those refused), oldest first.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().expect("not poisoned").clone()
    }

    /// Forgets what it received.
    pub fn clear(&self) {
        self.shared.received.lock().expect("not poisoned").clear();
    }

    /// Refuses the next `n` posts with a 503.
    pub fn refuse_next(&self, n: usize) {
        self.shared.refuse.store(n, Ordering::SeqCst);
    }

    /// Posts refused so far.
    pub fn refused(&self) -> usize {
        self.shared.refused.load(Ordering::SeqCst)
    }
}

async fn take(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> StatusCode {
    let refuse = shared
        .refuse
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    if refuse {
        shared.refused.fetch_add(1, Ordering::SeqCst);
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared
        .received
        .lock()
        .expect("not poisoned")
        .push(Received {
            path: uri.path().to_owned(),
            headers,
            body,
        });
    StatusCode::NO_CONTENT
}

impl Drop for EventReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}
