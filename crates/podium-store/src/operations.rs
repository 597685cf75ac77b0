//! Stored operations: every driver action the API queued, and what came of it.

use podium_types::Timestamp;
use podium_types::{ClaimId, HostId, OperationId, PodManagerId};
use podium_types::{
    OperationKind, OperationProgress, OperationRequest, OperationResult, OperationStatus,
};
use sqlx::Row;

use crate::formats;

use super::{Datastore, StoreError, moment, moment_opt};
use podium_types::{OperationFilter, Page, Paged};

#[derive(Clone, Debug, PartialEq)]
pub struct OperationRow {
    pub id: OperationId,
    pub status: OperationStatus,
    pub pod_manager: PodManagerId,
    pub host_id: Option<HostId>,
    /// What it was asked to do (its kind with it), stored in the store's own format
    /// (`formats.rs`).
    pub request: OperationRequest,
    pub error: Option<String>,
    pub created_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    /// Tries so far (a lease is a try).
    pub attempts: i64,
    /// When a queued operation that failed transiently is tried again.
    pub next_attempt_at: Option<Timestamp>,
    /// The claim at whose tenant's request it runs, if any.
    pub claim_id: Option<ClaimId>,
    /// What it found or did (an inspection's inventory, a power action's state).
    pub result: Option<OperationResult>,
    /// How far it is while it runs (a firmware update's task), kept across takeovers.
    pub progress: Option<OperationProgress>,
}

impl OperationRow {
    /// A new operation, queued.
    pub fn queued(
        request: OperationRequest,
        pod_manager: &PodManagerId,
        host_id: Option<&HostId>,
    ) -> OperationRow {
        OperationRow {
            id: OperationId::generate(),
            status: OperationStatus::Queued,
            pod_manager: pod_manager.clone(),
            host_id: host_id.cloned(),
            request,
            error: None,
            created_at: Timestamp::now(),
            started_at: None,
            finished_at: None,
            attempts: 0,
            next_attempt_at: None,
            claim_id: None,
            result: None,
            progress: None,
        }
    }

    pub fn kind(&self) -> OperationKind {
        self.request.kind()
    }
}

const COLUMNS: &str = "id, kind, status, pod_manager, host_id, request, error, created_at, \
    started_at, finished_at, attempts, next_attempt_at, claim_id, result, progress";

/// Due: running under a lease that expired (its holder died), or queued and its time has come.
/// Two conditions, each tried alone and in `id` order, so that the index on `(status, id)` finds
/// the first without reading (and sorting) every queued operation: a lease costs the same with
/// ten thousand queued as with ten.
const DUE: [&str; 2] = [
    "o.status = 'running' AND o.lease_expires_at <= $3",
    "o.status = 'queued' AND COALESCE(o.next_attempt_at, o.created_at) <= $3",
];

/// Whether `o` runs at a host's own BMC (not at its pod manager's shared service): its
/// `own_bmc`, set when it is stored from its host's `bmc_url` (which never changes).
const OWN_BMC: &str = "o.own_bmc = 1";

/// The operations of one host run one at a time, in the order they were queued: none of `o`'s
/// host is running under a live lease, and none queued before it is still waiting. A host in
/// maintenance runs only the admin's own power, boot, media and firmware actions (ahead of
/// whatever else waits for the maintenance to end).
const HOST_FREE: &str = "(o.host_id IS NULL OR (NOT EXISTS (SELECT 1 FROM operations b \
    WHERE b.host_id = o.host_id AND b.id <> o.id AND b.status = 'running' AND b.lease_expires_at > $3) \
    AND (CASE WHEN EXISTS (SELECT 1 FROM hosts h WHERE h.id = o.host_id AND h.maintenance_since IS NOT NULL) \
         THEN o.claim_id IS NULL AND o.kind IN ('power', 'boot', 'media', 'bios', 'secure_boot', 'firmware_update') \
              AND NOT EXISTS (SELECT 1 FROM operations b WHERE b.host_id = o.host_id \
                  AND b.status = 'queued' AND b.id < o.id AND b.claim_id IS NULL \
                  AND b.kind IN ('power', 'boot', 'media', 'bios', 'secure_boot', 'firmware_update')) \
         ELSE NOT EXISTS (SELECT 1 FROM operations b WHERE b.host_id = o.host_id \
              AND b.status = 'queued' AND b.id < o.id) END)))";

fn row(r: &sqlx::any::AnyRow) -> Result<OperationRow, StoreError> {
    let id: OperationId = r.try_get::<String, _>("id")?.into();
    let kind: String = r.try_get("kind")?;
    let request: String = r.try_get("request")?;
    let request = formats::request_decode(&kind, &request)
        .map_err(|e| StoreError::Corrupt(format!("operation {id}: {e}")))?;
    let kind = request.kind();
    let result = r
        .try_get::<Option<String>, _>("result")?
        .map(|text| {
            crate::decode("operation result", &text)
                .map(|json| OperationResult::from_stored(kind, json))
        })
        .transpose()?;
    let progress = r
        .try_get::<Option<String>, _>("progress")?
        .map(|text| {
            crate::decode("operation progress", &text)
                .map(|json| OperationProgress::from_stored(kind, json))
        })
        .transpose()?
        .flatten();
    let status: String = r.try_get("status")?;
    let status = status
        .parse()
        .map_err(|e| StoreError::Corrupt(format!("operation {id}: {e}")))?;
    Ok(OperationRow {
        id,
        status,
        pod_manager: r.try_get::<String, _>("pod_manager")?.into(),
        host_id: r.try_get::<Option<String>, _>("host_id")?.map(Into::into),
        request,
        error: r.try_get("error")?,
        created_at: moment(r, "created_at")?,
        started_at: moment_opt(r, "started_at")?,
        finished_at: moment_opt(r, "finished_at")?,
        attempts: r.try_get("attempts")?,
        next_attempt_at: moment_opt(r, "next_attempt_at")?,
        claim_id: r.try_get::<Option<String>, _>("claim_id")?.map(Into::into),
        result,
        progress,
    })
}

/// The statement that stores a new operation, for a transaction that does more, on a writer
/// that wakes the operations worker once handed back.
pub(super) fn insert(
    op: &OperationRow,
    _queues: crate::Queues,
) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
    sqlx::query(INSERT)
        .bind(op.id.as_str())
        .bind(op.kind().as_str())
        .bind(op.status.as_str())
        .bind(op.pod_manager.as_str())
        .bind(op.host_id.as_ref().map(|v| v.as_str()))
        .bind(formats::request_encode(&op.request))
        .bind(&op.error)
        .bind(op.created_at.to_string())
        .bind(op.started_at.map(|t| t.to_string()))
        .bind(op.finished_at.map(|t| t.to_string()))
        .bind(op.attempts)
        .bind(op.next_attempt_at.map(|t| t.to_string()))
        .bind(op.claim_id.as_ref().map(|v| v.as_str()))
        .bind(op.result.as_ref().map(crate::json))
}

const INSERT: &str = "INSERT INTO operations (id, kind, status, pod_manager, host_id, request, \
    error, created_at, started_at, finished_at, attempts, next_attempt_at, claim_id, result, \
    own_bmc) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
    CASE WHEN EXISTS (SELECT 1 FROM hosts h WHERE h.id = $5 AND h.bmc_url IS NOT NULL) \
    THEN 1 ELSE 0 END)";

impl Datastore {
    pub async fn operation_create(&self, op: &OperationRow) -> Result<(), StoreError> {
        let mut writer = self.writer().await?;
        let queues = writer.queues(self);
        insert(op, queues).execute(&mut *writer).await?;
        Ok(())
    }

    /// How many operations of each kind are queued and running.
    pub async fn operation_counts(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        sqlx::query(
            "SELECT kind, status, COUNT(*) AS n FROM operations \
             WHERE status IN ('queued', 'running') GROUP BY kind, status",
        )
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("kind")?, r.try_get("status")?, r.try_get("n")?)))
        .collect()
    }

    pub async fn operation_get(
        &self,
        id: &OperationId,
    ) -> Result<Option<OperationRow>, StoreError> {
        let r = sqlx::query(&format!("SELECT {COLUMNS} FROM operations WHERE id = $1"))
            .bind(id.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        r.as_ref().map(row).transpose()
    }

    /// Newest first.
    pub async fn operation_list(
        &self,
        filter: &OperationFilter,
        page: &Page,
    ) -> Result<Paged<OperationRow>, StoreError> {
        // No cursor: from the newest (`''`, not a sentinel, which sorts by collation).
        let cursor = page.cursor.clone().unwrap_or_default();
        // The names of the states and kinds asked for, each a parameter after the first five.
        let names: Vec<&str> = filter
            .statuses
            .iter()
            .map(|s| s.as_str())
            .chain(filter.kinds.iter().map(|k| k.as_str()))
            .collect();
        let placeholders = |from: usize, count: usize| {
            (from..from + count)
                .map(|n| format!("${n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut condition = String::new();
        if !filter.statuses.is_empty() {
            let list = placeholders(6, filter.statuses.len());
            condition.push_str(&format!(" AND status IN ({list})"));
        }
        if !filter.kinds.is_empty() {
            let list = placeholders(6 + filter.statuses.len(), filter.kinds.len());
            condition.push_str(&format!(" AND kind IN ({list})"));
        }
        let sql = format!(
            "SELECT {COLUMNS} FROM operations WHERE ($1 = '' OR host_id = $1) AND ($2 = '' OR pod_manager = $2) \
             AND ($5 = '' OR claim_id = $5) AND ($3 = '' OR id < $3){condition} ORDER BY id DESC LIMIT $4"
        );
        let mut query = sqlx::query(&sql)
            .bind(filter.host.as_ref().map_or("", HostId::as_str))
            .bind(filter.pod_manager.as_ref().map_or("", PodManagerId::as_str))
            .bind(cursor)
            .bind(i64::from(page.limit) + 1)
            .bind(filter.claim.as_ref().map_or("", ClaimId::as_str));
        for name in names {
            query = query.bind(name);
        }
        let rows = query.fetch_all(&mut *self.reader().await?).await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |o| o.id.to_string()))
    }

    /// Leases the operation due first for `owner` until `until`: it is `running`, its attempt
    /// counted. Concurrency is limited where the bottleneck is, the BMC endpoint: a pod
    /// manager's shared Redfish service runs at most its `service_limit` operations at once
    /// (`per_pod_manager` where the admin set none; under a live lease, in any process),
    /// counting those of its hosts without a BMC of their own and its own (a sync); a host with
    /// its own BMC runs one operation at a time (as every host does) and is not counted against
    /// the service, so a site of independent BMCs runs as wide as it has hosts, or as its
    /// `site_limit` allows where the admin set one (every operation of the site counted). What
    /// is due at a pod manager running nothing goes first (oldest first), then what is due at a
    /// host with its own BMC, then at the pod managers with room left. `None` when nothing may
    /// run.
    ///
    /// Leasing is serialized across processes (SQLite's write lock; on PostgreSQL, an advisory
    /// lock held for the transaction), so the count of running operations a lease reads is the
    /// one it commits against: the limits hold across every process on the database.
    pub async fn operation_lease(
        &self,
        owner: &str,
        lease: std::time::Duration,
        per_pod_manager: i64,
    ) -> Result<Option<OperationRow>, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        if self.backend == super::Backend::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock(7001726)")
                .execute(&mut *tx)
                .await?;
        }
        // The pod managers running operations now: how many at their shared service, how many
        // in all, and their limits.
        let running: Vec<(String, i64, i64, i64, Option<i64>)> = sqlx::query_as(&format!(
            "SELECT o.pod_manager, \
             CAST(SUM(CASE WHEN {OWN_BMC} THEN 0 ELSE 1 END) AS BIGINT), CAST(COUNT(*) AS BIGINT), \
             CAST(COALESCE(MAX(p.service_limit), $2) AS BIGINT), CAST(MAX(p.site_limit) AS BIGINT) \
             FROM operations o JOIN pod_managers p ON p.uuid = o.pod_manager \
             WHERE o.status = 'running' AND o.lease_expires_at > $1 GROUP BY o.pod_manager"
        ))
        .bind(Timestamp::now().to_string())
        .bind(per_pod_manager)
        .fetch_all(&mut *tx)
        .await?;
        // The lease's time is read after the count: it begins after every end the count saw.
        let now = Timestamp::now();
        let until = now.after(lease).to_string();
        let now = now.to_string();
        // Fair across pod managers: after a lease that expired (its holder died), what is due at
        // a pod manager running nothing at its service, oldest first; only then what is due at
        // one with room left. However much one site queues, the first due operation of a site
        // with nothing running is leased next.
        let pms = |keep: &dyn Fn(i64, i64, i64, Option<i64>) -> bool| -> Vec<&str> {
            running
                .iter()
                .filter(|(_, shared, all, service, site)| keep(*shared, *all, *service, *site))
                .map(|(pm, ..)| pm.as_str())
                .collect()
        };
        let site_full = pms(&|_, all, _, site| site.is_some_and(|site| all >= site));
        // Busy at its service, or with no room left at the site.
        let busy = pms(&|shared, all, _, site| shared > 0 || site.is_some_and(|site| all >= site));
        // No room left at its service, or at the site.
        let full = pms(&|shared, all, service, site| {
            shared >= service || site.is_some_and(|site| all >= site)
        });
        // `column NOT IN` the pod managers `excluded`, their parameters numbered from `first`.
        let not_in = |column: &str, excluded: &[&str], first: usize| {
            if excluded.is_empty() {
                String::new()
            } else {
                let params: Vec<String> = (first..first + excluded.len())
                    .map(|i| format!("${i}"))
                    .collect();
                format!(" AND {column} NOT IN ({})", params.join(", "))
            }
        };
        // A pod manager full at its service still runs what is due at its hosts with their own
        // BMC, unless its site is full too.
        let not_full = || {
            let service = not_in("o.pod_manager", &full, 4);
            let service = match service.strip_prefix(" AND ") {
                Some(clause) => format!(" AND ({OWN_BMC} OR {clause})"),
                None => String::new(),
            };
            service + &not_in("o.pod_manager", &site_full, 4 + full.len())
        };
        let [expired, queued] = DUE;
        // The oldest due operation of the pod managers not `excluded`, found through each one's
        // `operations_pm_queue`: one index seek per pod manager, never a walk past the queue of
        // another (a site with 50,000 queued costs the others nothing).
        let oldest_of = |excluded: &[&str]| {
            format!(
                "SELECT MIN(first) FROM (SELECT (SELECT o.id FROM operations o \
                 WHERE o.pod_manager = p.uuid AND {queued} AND {HOST_FREE} ORDER BY o.id LIMIT 1) AS first \
                 FROM pod_managers p WHERE TRUE{}) firsts",
                not_in("p.uuid", excluded, 4)
            )
        };
        let expired_binds: Vec<&str> = full.iter().chain(&site_full).copied().collect();
        let mut candidates = vec![
            (
                format!(
                    "SELECT o.id FROM operations o WHERE {expired}{} AND {HOST_FREE} ORDER BY o.id LIMIT 1",
                    not_full()
                ),
                &expired_binds,
            ),
            (oldest_of(&busy), &busy),
            // Walks the queue in id order past what waits at shared services and at full sites.
            (
                format!(
                    "SELECT o.id FROM operations o WHERE {queued} AND {OWN_BMC}{} AND {HOST_FREE} \
                     ORDER BY o.id LIMIT 1",
                    not_in("o.pod_manager", &site_full, 4)
                ),
                &site_full,
            ),
        ];
        if !busy.is_empty() {
            candidates.push((oldest_of(&full), &full));
        }
        let mut leased = None;
        for (candidate, excluded) in candidates {
            let sql = format!(
                "UPDATE operations SET status = 'running', lease_owner = $1, lease_expires_at = $2, \
                 attempts = attempts + 1, started_at = COALESCE(started_at, $3), error = NULL \
                 WHERE id = ({candidate}) RETURNING {COLUMNS}"
            );
            let mut q = sqlx::query(&sql).bind(owner).bind(&until).bind(&now);
            for pm in excluded.iter() {
                q = q.bind(*pm);
            }
            leased = q.fetch_optional(&mut *tx).await?;
            if leased.is_some() {
                break;
            }
        }
        tx.commit().await?;
        leased.as_ref().map(row).transpose()
    }

    /// Fails what is still queued for a claim (it was released), with `why`.
    pub async fn operations_cancel_for_claim(
        &self,
        claim_id: &ClaimId,
        why: &str,
        now: Timestamp,
    ) -> Result<u64, StoreError> {
        Ok(sqlx::query(
            "UPDATE operations SET status = 'failed', error = $2, finished_at = $3 \
             WHERE claim_id = $1 AND status = 'queued'",
        )
        .bind(claim_id.as_str())
        .bind(why)
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected())
    }

    /// Extends a lease; `false` when `owner` no longer holds it (it expired and was taken).
    pub async fn operation_renew(
        &self,
        id: &OperationId,
        owner: &str,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        Ok(sqlx::query(
            "UPDATE operations SET lease_expires_at = $3 \
             WHERE id = $1 AND lease_owner = $2 AND status = 'running'",
        )
        .bind(id.as_str())
        .bind(owner)
        .bind(until.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected()
            == 1)
    }

    /// Ends an operation `owner` holds: `succeeded`, or `failed` with `error`, with what it
    /// found or did. `false` when the lease was lost (another worker runs it now and will record
    /// its end).
    pub async fn operation_finish(
        &self,
        id: &OperationId,
        owner: &str,
        error: Option<&str>,
        result: Option<&OperationResult>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let status = if error.is_some() {
            "failed"
        } else {
            "succeeded"
        };
        Ok(sqlx::query(
            "UPDATE operations SET status = $3, error = $4, finished_at = $5, lease_owner = NULL, \
             lease_expires_at = NULL, result = $6 WHERE id = $1 AND lease_owner = $2 AND status = 'running'",
        )
        .bind(id.as_str())
        .bind(owner)
        .bind(status)
        .bind(error)
        .bind(now.to_string())
        .bind(result.map(crate::json))
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected()
            == 1)
    }

    /// Records how far an operation is (`None`: nothing), where `owner` still holds the lease
    /// of attempt `attempt` (a lease taken again, by this process or another, is a new attempt);
    /// with `first`, only where nothing is recorded yet. `false` when it was not written.
    pub async fn operation_progress(
        &self,
        id: &OperationId,
        owner: &str,
        attempt: i64,
        progress: Option<&OperationProgress>,
        first: bool,
    ) -> Result<bool, StoreError> {
        let unset = if first { " AND progress IS NULL" } else { "" };
        Ok(sqlx::query(&format!(
            "UPDATE operations SET progress = $4 \
             WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'running'{unset}"
        ))
        .bind(id.as_str())
        .bind(owner)
        .bind(attempt)
        .bind(progress.map(crate::json))
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected()
            == 1)
    }

    /// Puts an operation `owner` holds back in the queue after a transient failure, to be tried
    /// again at `next`; `error` says what happened this time.
    pub async fn operation_retry_later(
        &self,
        id: &OperationId,
        owner: &str,
        error: &str,
        next: Timestamp,
    ) -> Result<bool, StoreError> {
        Ok(sqlx::query(
            "UPDATE operations SET status = 'queued', error = $3, next_attempt_at = $4, \
             lease_owner = NULL, lease_expires_at = NULL \
             WHERE id = $1 AND lease_owner = $2 AND status = 'running'",
        )
        .bind(id.as_str())
        .bind(owner)
        .bind(error)
        .bind(next.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected()
            == 1)
    }

    /// Hands back every operation `owner` still runs (its process is shutting down): each goes
    /// back to the queue as it was before this attempt, due at once, for any process to lease
    /// without waiting for the lease to expire. Answers the ids handed back.
    pub async fn operations_hand_back(&self, owner: &str) -> Result<Vec<OperationId>, StoreError> {
        let ids: Vec<(String,)> = sqlx::query_as(
            "UPDATE operations SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, \
             attempts = attempts - 1 WHERE lease_owner = $1 AND status = 'running' RETURNING id",
        )
        .bind(owner)
        .fetch_all(&mut *self.writer().await?)
        .await?;
        Ok(ids.into_iter().map(|(id,)| id.into()).collect())
    }
}
