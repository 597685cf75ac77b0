//! IPAM allocations per second through the plugin: a /16 (and an IPv6 /64), sequential (one
//! client) and with 64 concurrent clients, on the database `PODIUM_TEST_DATABASE` selects
//! (SQLite by default, `postgres` for PostgreSQL).
//!
//! Each allocation is a full `POST /v1/ip_pools/{id}/claims` minus HTTP: the caller check, the
//! pool load, the bundled `ipam-static` component proposing through the host's `allocations`
//! import, and the committing transaction. The HTTP figure is measured beside it, with the same
//! clients going through the running server.
//!
//! `cargo bench -p podium-tests --bench ipam [-- COUNT]`; figures go into BENCHMARKS.md.

use std::sync::Arc;
use std::time::{Duration, Instant};

use podium_app::auth::Caller;
use podium_tests::TestServer;
use podium_types::requests::{IpClaimCreate, IpPoolCreate, IpRangeParams};
use serde_json::json;

fn admin() -> Caller {
    Caller::Admin {
        token_id: "bench".into(),
        read_only: false,
    }
}

async fn make_pool(server: &TestServer, name: &str, range: IpRangeParams, prefix: u8) -> String {
    let pool = server
        .podium
        .ip_pool_create(
            &admin(),
            IpPoolCreate {
                name: name.into(),
                ranges: vec![range],
                prefix,
                gateway: None,
                dns_servers: Vec::new(),
                reserved: Vec::new(),
                pre_allocations: Default::default(),
                plugin: None,
                pod_manager: None,
                tenants: Vec::new(),
            },
        )
        .await
        .expect("pool");
    pool.id.into_string()
}

fn subnet(s: &str) -> IpRangeParams {
    IpRangeParams {
        subnet: Some(s.into()),
        ..Default::default()
    }
}

/// Runs `allocate(i)` for `i` in `0..count` on `clients` concurrent tasks; calls per second.
async fn drive<F, Fut>(count: usize, clients: usize, allocate: F) -> f64
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let next = next.clone();
            let allocate = allocate.clone();
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    allocate(i).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    count as f64 / started.elapsed().as_secs_f64()
}

/// Through the library: `Podium::ip_claim_create`.
async fn library(server: &TestServer, pool: &str, count: usize, clients: usize) -> f64 {
    let podium = server.podium.clone();
    let pool = podium_types::IpPoolId::from(pool);
    drive(count, clients, move |i| {
        let podium = podium.clone();
        let pool = pool.clone();
        async move {
            let params = IpClaimCreate {
                owner: format!("owner-{i}"),
                address: None,
            };
            podium
                .ip_claim_create(&admin(), &pool, params)
                .await
                .expect("allocation");
        }
    })
    .await
}

/// The same through the HTTP API.
async fn http(server: &TestServer, pool: &str, count: usize, clients: usize) -> f64 {
    let admin = server.admin();
    let path = format!("/v1/ip_pools/{pool}/claims");
    drive(count, clients, move |i| {
        let admin = admin.clone();
        let path = path.clone();
        async move {
            let reply = admin
                .post(&path, json!({"owner": format!("http-{i}")}))
                .await;
            assert_eq!(reply.status, 201, "{}", reply.text);
        }
    })
    .await
}

/// The baseline: the database alone, one `INSERT` of an (pool, address, owner) row per
/// allocation into a table with the same unique constraints, through sqlx like Podium: on SQLite
/// one connection in WAL mode with `synchronous = NORMAL`, held (not pooled) like Podium's
/// writer; on PostgreSQL a pool of 8 on a fresh database that, like Podium's, pings no
/// connection before a query.
async fn database_alone(count: usize, clients: usize, run: &str) -> f64 {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let dir = tempfile::tempdir().unwrap();
    let postgres = podium_tests::PostgresDatabase::for_this_run().await;
    const TABLE: &str = "CREATE TABLE IF NOT EXISTS allocations (pool TEXT NOT NULL, \
         address TEXT NOT NULL, owner TEXT NOT NULL, UNIQUE (pool, address), UNIQUE (pool, owner))";
    /// The `i`th allocation's row.
    fn insert(
        run: &str,
        i: usize,
    ) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
        sqlx::query("INSERT INTO allocations (pool, address, owner) VALUES ($1, $2, $3)")
            .bind(run)
            .bind(format!(
                "10.{}.{}.{}",
                i >> 16 & 0xff,
                i >> 8 & 0xff,
                i & 0xff
            ))
            .bind(format!("owner-{i}"))
    }
    let run = run.to_owned();
    let rate = match &postgres {
        Some(db) => {
            let pool = sqlx::any::AnyPoolOptions::new()
                .max_connections(8)
                .test_before_acquire(false)
                .connect(&db.url)
                .await
                .unwrap();
            pool.execute(TABLE).await.unwrap();
            drive(count, clients, move |i| {
                let (pool, run) = (pool.clone(), run.clone());
                async move {
                    insert(&run, i).execute(&pool).await.expect("insert");
                }
            })
            .await
        }
        None => {
            let url = format!(
                "sqlite://{}?mode=rwc",
                dir.path().join("alone.db").display()
            );
            let mut conn = sqlx::AnyConnection::connect(&url).await.unwrap();
            conn.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
                .await
                .unwrap();
            conn.execute(TABLE).await.unwrap();
            let conn = Arc::new(tokio::sync::Mutex::new(conn));
            drive(count, clients, move |i| {
                let (conn, run) = (conn.clone(), run.clone());
                async move {
                    let mut conn = conn.lock().await;
                    insert(&run, i).execute(&mut *conn).await.expect("insert");
                }
            })
            .await
        }
    };
    drop(postgres);
    rate
}

fn main() {
    let [count] = podium_tests::bench_args([10_000]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = TestServer::start_with(|c| {
            c.probe_interval = Duration::from_secs(3600);
            c.sync_interval = Duration::from_secs(3600);
        })
        .await;
        let database = std::env::var("PODIUM_TEST_DATABASE").unwrap_or_else(|_| "sqlite".into());
        println!(
            "{database}: {count} allocations per run, bundled ipam-static (sequential); \
             allocations per second"
        );
        println!();
        println!("| pool | clients | library | HTTP | the database alone (one INSERT) | library / alone |");
        println!("|---|---|---|---|---|---|");
        for (label, range, prefix) in [
            ("IPv4 /16", subnet("10.0.0.0/16"), 16),
            ("IPv6 /64", subnet("2001:db8::/64"), 64),
        ] {
            for clients in [1, 64] {
                let name = format!("{}-{clients}", label.replace([' ', '/'], "-"));
                let pool = make_pool(&server, &format!("lib-{name}"), range.clone(), prefix).await;
                let library = library(&server, &pool, count, clients).await;
                let pool = make_pool(&server, &format!("http-{name}"), range.clone(), prefix).await;
                let http = http(&server, &pool, count, clients).await;
                let alone = database_alone(count, clients, &name).await;
                println!(
                    "| {label} | {clients} | {library:.0} | {http:.0} | {alone:.0} | {:.2} |",
                    library / alone
                );
            }
        }
        server.stop().await;
    });
}
