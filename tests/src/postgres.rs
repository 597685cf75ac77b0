//! `PostgresDatabase`: a fresh PostgreSQL database per test where `PODIUM_TEST_DATABASE=postgres`,
//! dropped afterwards.

use anyhow::{Context, Result};

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
