//! `FaultProxy`: a proxy in front of a BMC that adds latency or faults, for the tests and
//! benchmarks of BMCs that answer slowly or badly.

use std::time::Duration;

use serde_json::Value;

/// An HTTP proxy on 127.0.0.1 in front of a real BMC (the emulator) that, while `failing` is
/// set, answers every request itself with `500 Internal Server Error` and a Redfish error body,
/// as a BMC whose service is wedged does (and so for one path while `failing_path` names it);
/// otherwise it forwards each request unchanged, and the answer's status, type, body and
/// `Location`. Each answer waits `delay_ms` first, plus up to `jitter_ms` more (uniformly at
/// random), as a slow BMC's does; `requests` counts what it was sent, `posted` keeps the path
/// and JSON body of each `POST` (the actions the BMC was asked for). Stopped when dropped.
#[derive(Debug)]
pub struct FaultProxy {
    port: u16,
    pub failing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Milliseconds every request waits before it is answered (or forwarded).
    pub delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// At most this many milliseconds more, drawn for each request.
    pub jitter_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// A path answered with that same `500` whatever `failing` says, while set.
    pub failing_path: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    /// Requests received so far.
    pub requests: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// The most requests it held at once (received, not yet answered) so far.
    pub most_at_once: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Each `POST` received so far: its path and its body (`null` where it is no JSON).
    pub posted: std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>,
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
        let failing_path = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
        let delay_ms = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let jitter_ms = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let most_at_once = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let at_once = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let posted = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let posts = posted.clone();
        let upstream = upstream.trim_end_matches('/').to_owned();
        let client = reqwest::Client::new();
        let (flag, delay, jitter, count) = (
            failing.clone(),
            delay_ms.clone(),
            jitter_ms.clone(),
            requests.clone(),
        );
        let (most, now) = (most_at_once.clone(), at_once.clone());
        let failing_at = failing_path.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (flag, client, upstream) = (flag.clone(), client.clone(), upstream.clone());
                let (delay, jitter, count) = (delay.clone(), jitter.clone(), count.clone());
                let (most, now) = (most.clone(), now.clone());
                let only_system = only_system.clone();
                let failing_at = failing_at.clone();
                let posts = posts.clone();
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
                    if method == "POST" {
                        posts.lock().expect("posted").push((
                            path.to_owned(),
                            serde_json::from_slice(&body).unwrap_or(Value::Null),
                        ));
                    }
                    count.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                    let held = now.fetch_add(1, std::sync::atomic::Ordering::AcqRel) + 1;
                    most.fetch_max(held, std::sync::atomic::Ordering::AcqRel);
                    // Counted out however this request ends.
                    let _held = counted_out(now.clone());
                    let wait = delay.load(std::sync::atomic::Ordering::Acquire)
                        + fastrand::u64(..=jitter.load(std::sync::atomic::Ordering::Acquire));
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    let fails_here = failing_at
                        .lock()
                        .expect("failing path")
                        .as_deref()
                        .is_some_and(|p| p == path);
                    let mut location = None;
                    let (status, content_type, answer) = if fails_here
                        || flag.load(std::sync::atomic::Ordering::Acquire)
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
                                location = r
                                    .headers()
                                    .get("location")
                                    .and_then(|v| v.to_str().ok())
                                    .map(str::to_owned);
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
                    let location = location
                        .map(|l| format!("Location: {l}\r\n"))
                        .unwrap_or_default();
                    let head = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n{location}\
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
            failing_path,
            delay_ms,
            jitter_ms,
            requests,
            most_at_once,
            posted,
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
