//! `ImageServer`: serves the images claims boot from, and counts what it answers.

/// An HTTP server on 127.0.0.1 (or another address of this machine's) that answers every
/// request with `body` (the "image" a BMC or a deploy agent downloads), stopped when dropped.
#[derive(Debug)]
pub struct ImageServer {
    address: std::net::IpAddr,
    port: u16,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl ImageServer {
    pub async fn start(body: Vec<u8>) -> ImageServer {
        ImageServer::start_on(std::net::Ipv4Addr::LOCALHOST.into(), body).await
    }

    /// Serves on `address` (one of this machine's), on a free port.
    pub async fn start_on(address: std::net::IpAddr, body: Vec<u8>) -> ImageServer {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind((address, 0))
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
        ImageServer {
            address,
            port,
            hits,
            task,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}:{}{path}", self.address, self.port)
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
