//! What runs as processes of their own: `ProcessServer` (the real binary, for `kill -9`, its log
//! and its memory), `ConnectionCounter` (proof that a request never left), and a process's
//! usage read from `/proc`.

use std::net::Ipv4Addr;
use std::time::Duration;

use serde_json::Value;

use crate::{ADMIN_TOKEN, Client};

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
        let mut early = String::new();
        let url = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(line) = lines.next_line().await.expect("reading podium's log") {
                early.push_str(&line);
                early.push('\n');
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
        let log = std::sync::Arc::new(std::sync::Mutex::new(early));
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

    /// Everything the server logged so far.
    pub fn log(&self) -> String {
        self.log.lock().expect("log poisoned").clone()
    }

    /// A client with this token, or none.
    pub fn client(&self, token: Option<&str>) -> Client {
        Client::new(&self.url, token)
    }

    pub fn admin(&self) -> Client {
        self.client(Some(ADMIN_TOKEN))
    }

    /// A client with this token, or none, over `http` (one that trusts the server's
    /// certificate, for a server serving TLS).
    pub fn client_with(&self, http: reqwest::Client, token: Option<&str>) -> Client {
        Client::new(&self.url, token).with_http(http)
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
        process_peak_rss(self.child.id()?)
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

/// A process's peak resident memory in KiB (`VmHWM`), by its pid; `None` once it is gone.
pub fn process_peak_rss(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// A process's resident memory in KiB (`VmRSS`) and the CPU time (user and system) it used so
/// far, from `/proc`; `None` once it is gone.
pub fn process_usage(pid: u32) -> Option<(u64, Duration)> {
    let rss = status_kib(pid, "VmRSS:")?;
    // utime and stime, fields 14 and 15 of /proc/PID/stat, in clock ticks (100 per second on
    // Linux); the command name (field 2) may hold spaces, so count after its `)`.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((rss, Duration::from_millis(ticks * 10)))
}

/// The `key` line (`VmRSS:`, `VmHWM:`) of `/proc/PID/status`, in KiB.
fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
