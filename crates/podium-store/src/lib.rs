//! The datastore: the only module that knows SQL.
//!
//! One code path serves SQLite (embedded, the default) and PostgreSQL through sqlx's `Any`
//! driver, with one set of migrations (`migrations/`, embedded by `migrations.rs`) in the SQL both accept: timestamps
//! are RFC 3339 text, flags are integers, bytes are `BYTEA` (which SQLite stores as a blob).
//!
//! **Architecture Invariant:** every function takes who is asking (or is crate-private and only
//! called after the application layer checked it); queries of tenant-owned rows filter by tenant
//! here, never in handlers.

mod agents;
mod audit;
mod backup;
mod chassis;
mod claims;
mod composed;
mod events;
mod formats;
mod grants;
mod hosts;
mod ipam;
mod migrations;
mod operations;
mod plugins;
mod pod_managers;
mod redfish_sessions;
mod rendering;
mod subscriptions;
mod tenants;
mod tokens;

pub use agents::{AgentRow, Heartbeat, LOOKUP_MACS_MAX};
pub use audit::AuditRow;
pub use chassis::{
    BadTree, CHASSIS_DEPTH_MAX, ChassisPlace, ChassisReport, ChassisRow, ChassisSummary, HostInUse,
};
pub use claims::{Bind, BindOutcome, ClaimRow, HostCriteria, Spread};
pub use composed::{Composed, ComposedNodeRow};
pub use events::{EventHorizon, EventRow};
pub use grants::GrantRow;
pub use hosts::{HostRow, Transition};
pub use ipam::{IpAllocationRow, IpPoolRow, Missed, PoolLock};
pub use operations::OperationRow;
pub use plugins::PluginRow;
pub use pod_managers::{PodManagerConflict, PodManagerRow, StatusChange};
pub use redfish_sessions::SessionRow;
pub use rendering::ConfigDriveRow;
pub use subscriptions::SubscriptionRow;
pub use tenants::TenantRow;
pub use tokens::TokenRow;

use std::path::Path;
use std::time::Duration;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{AnyConnection, AnyPool};

use podium_types::{Paged, Timestamp};

/// Which database a datastore runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the database: {0}")]
    Open(#[source] sqlx::Error),
    #[error("migrating the database failed: {0}")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    #[error("unique constraint violated")]
    Conflict(#[source] sqlx::Error),
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
    /// The database could not take the query in time: every connection stayed busy for
    /// `ACQUIRE_TIMEOUT`, or SQLite's lock was held past its `busy_timeout`. Worth trying again.
    #[error("the database is busy: {0}")]
    Busy(#[source] sqlx::Error),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A backup was asked of a database with no file (an in-memory one).
    #[error("an in-memory database has no file to back up")]
    NoFile,
    /// The copy a backup made could not be opened.
    #[error("cannot open the backup {}", path.display())]
    BackupFile {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A stored name (a state, a role, a source) that is none of its type's.
impl From<podium_types::UnknownName> for StoreError {
    fn from(e: podium_types::UnknownName) -> StoreError {
        StoreError::Corrupt(e.to_string())
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        if let sqlx::Error::WorkerCrashed = e {
            WORKER_CRASHES.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict(e),
            sqlx::Error::PoolTimedOut => StoreError::Busy(e),
            sqlx::Error::Database(db) if busy(db.as_ref()) => StoreError::Busy(e),
            _ => StoreError::Database(e),
        }
    }
}

/// Whether the database refused a query only for now: SQLite's `SQLITE_BUSY` and `SQLITE_LOCKED`
/// (the low byte of an extended code), PostgreSQL's `lock_not_available` (its `lock_timeout`
/// passed), `too_many_connections` and `cannot_connect_now`.
fn busy(db: &dyn sqlx::error::DatabaseError) -> bool {
    let Some(code) = db.code() else {
        return false;
    };
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        code.parse::<u32>().is_ok_and(|c| matches!(c & 0xff, 5 | 6))
    } else {
        matches!(code.as_ref(), "55P03" | "53300" | "57P03")
    }
}

/// The datastore, shared by every request and worker.
#[derive(Clone, Debug)]
pub struct Datastore {
    /// Where reads go: on SQLite eight held connections, on PostgreSQL a sqlx pool of 16.
    reader: Connections,
    /// Where writes go: on SQLite one held connection, so writers queue for it here instead of
    /// spinning on the database lock, and its page cache stays warm because nobody else writes;
    /// on PostgreSQL the same pool as reads.
    writer: Connections,
    backend: Backend,
    /// Tokens found by their hash in the last second (`tokens::TOKEN_CACHE_TTL`): a request's
    /// authentication then costs no round trip. Emptied by every change to tokens here.
    tokens: std::sync::Arc<tokens::TokenCache>,
    /// Woken each time a writer connection is handed back (after its statement or its
    /// transaction ended): what watches the events table reads it then, not only on its tick.
    written: std::sync::Arc<tokio::sync::Notify>,
    /// Woken each time a writer that stored an operation is handed back: the operations
    /// worker leases it at once, whichever feature queued it.
    queued: std::sync::Arc<tokio::sync::Notify>,
}

/// How long a PostgreSQL connection may sit idle in the pool before it is pinged on its way out.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);

/// How long a query waits for a connection before it fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// What SQLite's connections run first.
const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                              PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;";

/// What PostgreSQL's connections run first.
const POSTGRES_LOCK_TIMEOUT: &str = "SET lock_timeout = '10s'";

/// Counts the queries that found their SQLite connection's thread gone (sqlx's
/// `WorkerCrashed`): a held connection checked before this count rose is pinged before its next
/// use, and opened anew if it is the one.
static WORKER_CRASHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A set of connections to one database.
#[derive(Clone)]
enum Connections {
    /// SQLite: connections opened at start and held for the life of the process. Not a sqlx
    /// pool: that pings every connection handed back to it, a second round trip to SQLite's
    /// thread after every query (40 of the 105 µs a lone insert cost).
    Held {
        pool: deadpool::unmanaged::Pool<HeldConnection>,
        url: std::sync::Arc<str>,
    },
    /// PostgreSQL: sqlx's pool, which reconnects after a server restart.
    Pooled(AnyPool),
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Connections::Held { pool, .. } => f
                .debug_struct("Held")
                .field("size", &pool.status().size)
                .finish(),
            Connections::Pooled(pool) => f.debug_tuple("Pooled").field(pool).finish(),
        }
    }
}

pub(crate) struct HeldConnection {
    conn: AnyConnection,
    /// `WORKER_CRASHES` when this connection was last known to work.
    checked: u64,
}

impl Connections {
    async fn open_sqlite(url: &str, size: usize) -> Result<Connections, sqlx::Error> {
        let pool = deadpool::unmanaged::Pool::from_config(&deadpool::unmanaged::PoolConfig {
            max_size: size,
            timeout: Some(ACQUIRE_TIMEOUT),
            runtime: Some(deadpool::Runtime::Tokio1),
        });
        for _ in 0..size {
            let conn = connect_sqlite(url).await?;
            pool.try_add(HeldConnection { conn, checked: 0 })
                .map_err(|_| sqlx::Error::Configuration("the connection pool is full".into()))?;
        }
        Ok(Connections::Held {
            pool,
            url: url.into(),
        })
    }

    /// A connection, for as long as the answer is held.
    async fn get(&self) -> Result<Conn, StoreError> {
        let (pool, url) = match self {
            Connections::Pooled(pool) => return Ok(Conn::Pooled(pool.acquire().await?)),
            Connections::Held { pool, url } => (pool, url),
        };
        let mut held = pool
            .get()
            .await
            .map_err(|_| StoreError::Busy(sqlx::Error::PoolTimedOut))?;
        // A connection is handed out outside any transaction, with its thread alive. Checked
        // (one ping) only when in doubt: some query found a thread gone since this one was last
        // checked, or it is inside a transaction. A dropped transaction has its rollback queued,
        // which the ping lets run; one still open after it was left by a `BEGIN` cancelled
        // between its answer and sqlx's check of it, which nothing would ever roll back.
        use sqlx::Connection;
        let crashes = WORKER_CRASHES.load(std::sync::atomic::Ordering::Acquire);
        if held.checked != crashes || held.conn.is_in_transaction() {
            let trouble = match held.conn.ping().await {
                Err(error) => Some(format!("is gone ({error})")),
                Ok(()) if held.conn.is_in_transaction() => {
                    Some("was left inside a transaction".to_owned())
                }
                Ok(()) => None,
            };
            if let Some(trouble) = trouble {
                tracing::warn!("a database connection {trouble}; opening another");
                held.conn = connect_sqlite(url).await?;
            }
            held.checked = crashes;
        }
        Ok(Conn::Held(held))
    }
}

/// A connection to run queries on, or a transaction (`Conn::begin`); back to its set when dropped.
pub(crate) enum Conn {
    Held(deadpool::unmanaged::Object<HeldConnection>),
    Pooled(sqlx::pool::PoolConnection<sqlx::Any>),
}

impl std::ops::Deref for Conn {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match self {
            Conn::Held(held) => &held.conn,
            Conn::Pooled(conn) => conn,
        }
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match self {
            Conn::Held(held) => &mut held.conn,
            Conn::Pooled(conn) => conn,
        }
    }
}

impl Conn {
    /// Begins a transaction that will write. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`, waiting up to the busy timeout): a deferred transaction that read
    /// first would fail with "database is locked" when another process committed meanwhile.
    pub(crate) async fn begin(&mut self) -> Result<sqlx::Transaction<'_, sqlx::Any>, StoreError> {
        use sqlx::Connection;
        let statement = self.begin_statement();
        Ok((**self).begin_with(statement).await?)
    }

    fn begin_statement(&self) -> &'static str {
        match self {
            Conn::Held(_) => "BEGIN IMMEDIATE",
            Conn::Pooled(_) => "BEGIN",
        }
    }
}

/// The writer connection: a `Conn` that, handed back, wakes what waits for writes (and, where
/// it stored an operation, what waits for operations).
pub(crate) struct Writer {
    conn: Conn,
    written: std::sync::Arc<tokio::sync::Notify>,
    queued: Option<std::sync::Arc<tokio::sync::Notify>>,
}

/// Proof that the writer at hand wakes the operations worker once handed back: what stores an
/// operation (`operations::insert`) takes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queues(());

impl std::ops::Deref for Writer {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for Writer {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}

impl Writer {
    /// Says that this writer stores an operation: handed back, it wakes the operations worker
    /// (after the commit; a rollback only wakes it for nothing).
    pub(crate) fn queues(&mut self, datastore: &Datastore) -> Queues {
        self.queued = Some(datastore.queued.clone());
        Queues(())
    }

    /// `Conn::begin` on the writer.
    pub(crate) async fn begin(&mut self) -> Result<sqlx::Transaction<'_, sqlx::Any>, StoreError> {
        self.conn.begin().await
    }

    /// `Conn::begin`, as a transaction that owns the writer: one a caller may hold across
    /// calls (a lock it answers with), rolled back when dropped uncommitted.
    pub(crate) async fn begin_owned(mut self) -> Result<OwnedTransaction, StoreError> {
        use sqlx::TransactionManager;
        let statement = self.conn.begin_statement();
        <sqlx::Any as sqlx::Database>::TransactionManager::begin(&mut self, Some(statement.into()))
            .await?;
        Ok(OwnedTransaction {
            writer: self,
            open: true,
        })
    }
}

/// A transaction on the writer that owns it (`Writer::begin_owned`): as `sqlx::Transaction`,
/// rolled back when dropped uncommitted, but with no borrow to keep it beside.
pub(crate) struct OwnedTransaction {
    writer: Writer,
    open: bool,
}

impl OwnedTransaction {
    pub(crate) async fn commit(mut self) -> Result<(), StoreError> {
        use sqlx::TransactionManager;
        <sqlx::Any as sqlx::Database>::TransactionManager::commit(&mut self.writer).await?;
        self.open = false;
        Ok(())
    }
}

impl std::ops::Deref for OwnedTransaction {
    type Target = Writer;

    fn deref(&self) -> &Writer {
        &self.writer
    }
}

impl std::ops::DerefMut for OwnedTransaction {
    fn deref_mut(&mut self) -> &mut Writer {
        &mut self.writer
    }
}

impl Drop for OwnedTransaction {
    fn drop(&mut self) {
        use sqlx::TransactionManager;
        if self.open {
            // As sqlx's own transactions do: sent at once on SQLite (to the connection's
            // thread), before the connection's next use on PostgreSQL.
            <sqlx::Any as sqlx::Database>::TransactionManager::start_rollback(&mut self.writer);
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.written.notify_one();
        if let Some(queued) = &self.queued {
            queued.notify_one();
        }
    }
}

async fn connect_sqlite(url: &str) -> Result<AnyConnection, sqlx::Error> {
    use sqlx::{Connection, Executor};
    let mut conn = AnyConnection::connect(url).await?;
    conn.execute(SQLITE_PRAGMAS).await?;
    Ok(conn)
}

impl Datastore {
    /// Opens (creating if needed) the embedded SQLite database in `data_dir`.
    pub async fn open_sqlite(data_dir: &Path) -> Result<Datastore, StoreError> {
        let path = data_dir.join("podium.db");
        let url = format!("sqlite://{}?mode=rwc", path.display());
        Datastore::open(&url).await
    }

    /// Opens a database by URL (`sqlite://...` or `postgres://...`) and migrates it.
    pub async fn open(url: &str) -> Result<Datastore, StoreError> {
        install_default_drivers();
        let backend = if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            return Err(StoreError::Open(sqlx::Error::Configuration(
                "the database URL must start with sqlite: or postgres:".into(),
            )));
        };
        let (reader, writer) = match backend {
            Backend::Sqlite => {
                // The writer first: it creates the file and switches it to WAL.
                let writer = Connections::open_sqlite(url, 1)
                    .await
                    .map_err(StoreError::Open)?;
                let reader = Connections::open_sqlite(url, 8)
                    .await
                    .map_err(StoreError::Open)?;
                (reader, writer)
            }
            Backend::Postgres => {
                let pool = AnyPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(ACQUIRE_TIMEOUT)
                    // sqlx pings every connection it hands out by default: a round trip before
                    // each query. A connection that sat idle may have been closed by the server
                    // (PostgreSQL restarted, a proxy's timeout), so that one is checked; one in
                    // steady use proves itself by its last query.
                    .test_before_acquire(false)
                    // A statement waits for a lock as long as a SQLite one does (its
                    // `busy_timeout`), then fails as busy: not for ever behind a stuck session.
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            sqlx::query(POSTGRES_LOCK_TIMEOUT).execute(conn).await?;
                            Ok(())
                        })
                    })
                    .before_acquire(|conn, meta| {
                        Box::pin(async move {
                            if meta.idle_for < IDLE_BEFORE_PING {
                                return Ok(true);
                            }
                            use sqlx::Connection;
                            match conn.ping().await {
                                Ok(()) => Ok(true),
                                Err(error) => {
                                    tracing::info!(%error, "an idle database connection is gone; using another");
                                    Ok(false)
                                }
                            }
                        })
                    })
                    .connect(url)
                    .await
                    .map_err(StoreError::Open)?;
                (Connections::Pooled(pool.clone()), Connections::Pooled(pool))
            }
        };
        let store = Datastore {
            reader,
            writer,
            backend,
            tokens: Default::default(),
            written: Default::default(),
            queued: Default::default(),
        };
        store.migrate().await?;
        if backend == Backend::Postgres {
            store.check_vacuuming().await?;
        }
        Ok(store)
    }

    /// Warns where PostgreSQL's autovacuum is off: every lease and end of an operation leaves a
    /// dead row in `operations` (and its indexes) that only a vacuum reclaims, and leasing reads
    /// them all, slower and slower. Seen on a server configured for tests: 100,000 operations
    /// ran 6 times slower than on SQLite, each lease walking 76,000 dead index entries.
    async fn check_vacuuming(&self) -> Result<(), StoreError> {
        let autovacuum: String = sqlx::query_scalar("SELECT current_setting('autovacuum')")
            .fetch_one(&mut *self.reader().await?)
            .await?;
        if autovacuum == "off" {
            tracing::warn!(
                "PostgreSQL's autovacuum is off: the operation queue's dead rows are never \
                 reclaimed and leasing slows as they pile up; turn autovacuum on, or VACUUM \
                 the operations, hosts and events tables often"
            );
        }
        Ok(())
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let mut writer = self.writer().await?;
        migrations::migrator(self.backend)
            .await
            .map_err(StoreError::Migrate)?
            .run(&mut *writer)
            .await
            .map_err(StoreError::Migrate)
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Checks the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1")
            .execute(&mut *self.reader().await?)
            .await?;
        Ok(())
    }

    /// A connection for reads.
    pub(crate) async fn reader(&self) -> Result<Conn, StoreError> {
        self.reader.get().await
    }

    /// The connection for a write, or for a transaction that writes (`Conn::begin`). On SQLite
    /// there is one: other writes wait until it is dropped.
    pub(crate) async fn writer(&self) -> Result<Writer, StoreError> {
        Ok(Writer {
            conn: self.writer.get().await?,
            written: self.written.clone(),
            queued: None,
        })
    }

    /// Resolves after this process stored an operation (or at once, if one was stored since the
    /// last call): one waiter, the operations worker.
    pub async fn queued(&self) {
        self.queued.notified().await
    }

    /// Resolves after a write of this process ended (or at once, if one ended since the last
    /// call): one waiter, the event clock.
    pub async fn written(&self) {
        self.written.notified().await
    }
}

/// A moment column, read back.
fn moment(r: &sqlx::any::AnyRow, column: &str) -> Result<Timestamp, StoreError> {
    use sqlx::Row;
    let text: String = r.try_get(column)?;
    text.parse()
        .map_err(|e| StoreError::Corrupt(format!("stored {column}: {e}")))
}

/// A moment column that may be empty, read back.
fn moment_opt(r: &sqlx::any::AnyRow, column: &str) -> Result<Option<Timestamp>, StoreError> {
    use sqlx::Row;
    let text: Option<String> = r.try_get(column)?;
    text.map(|text| {
        text.parse()
            .map_err(|e| StoreError::Corrupt(format!("stored {column}: {e}")))
    })
    .transpose()
}

/// A new row id: a UUID v7, so ids sort by creation time and keyset pages are stable.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The JSON text a column keeps of a value (a selector, an image, a host's NICs, ...): the
/// store's own format of it, decoded by `decode` when read.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("stored values serialize")
}

/// A JSON text column, decoded; `what` names it in the error.
fn decode<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("stored {what}: {e}")))
}

/// From `limit + 1` fetched rows: the extra row only says that there is a next page.
fn paged<T>(mut items: Vec<T>, limit: u32, key: impl Fn(&T) -> String) -> Paged<T> {
    let next = if items.len() > limit as usize {
        items.truncate(limit as usize);
        items.last().map(&key)
    } else {
        None
    };
    Paged { items, next }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transaction whose `BEGIN` was answered but which no `Transaction` rolls back (a
    /// `begin` cancelled at the wrong moment; `forget` here) must not swallow later writes.
    #[tokio::test]
    async fn a_connection_left_in_a_transaction_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let store = Datastore::open_sqlite(dir.path()).await.unwrap();
        {
            let mut writer = store.writer().await.unwrap();
            let tx = writer.begin().await.unwrap();
            std::mem::forget(tx);
        }
        sqlx::query("CREATE TABLE probe (x INTEGER)")
            .execute(&mut *store.writer().await.unwrap())
            .await
            .unwrap();
        let seen: i64 =
            sqlx::query_scalar("SELECT count(*) FROM sqlite_master WHERE name = 'probe'")
                .fetch_one(&mut *store.reader().await.unwrap())
                .await
                .unwrap();
        assert_eq!(
            seen, 1,
            "the write is committed, not held in the forgotten transaction"
        );
    }
}
