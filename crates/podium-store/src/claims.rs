//! Stored claims: the hosts a claim could take, and the conditional bind of a claim to one.

use podium_types::Timestamp;
use podium_types::{ChassisId, ClaimId, HostId, PodManagerId, TenantId, TenantScope};
use std::collections::BTreeMap;

use podium_types::ClaimState;
use sqlx::Row;

use super::{Datastore, StoreError, decode, json, moment};
use podium_types::requests::ImageParams;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimRow {
    pub id: ClaimId,
    pub tenant_id: TenantId,
    pub pod_manager: PodManagerId,
    /// Labels the host must carry.
    pub selector: BTreeMap<String, String>,
    pub min_cpu: i64,
    pub min_memory_mib: i64,
    pub image: ImageParams,
    /// Bytes, never parsed.
    pub user_data: Option<Vec<u8>>,
    /// JSON object of string values.
    pub meta_data: Option<String>,
    /// JSON text of the consumer's `network_data.json` (a whole document, or additions).
    pub network_data: Option<String>,
    pub online: bool,
    pub state: ClaimState,
    pub reason: Option<String>,
    pub host_id: Option<HostId>,
    /// The chassis (a rack) the host must stand in, or in a chassis within it.
    pub chassis: Option<ChassisId>,
    /// The claim's spread group: the claims of its tenant at its pod manager in the group hold
    /// hosts of different racks.
    pub spread: Option<String>,
    /// Where no free host matches, Podium composes a node for the claim.
    pub compose: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `user_data` is read from `user_data_bytes`, or from the text column of claims made before it.
const COLUMNS: &str = "id, tenant_id, pod_manager, selector, min_cpu, min_memory_mib, image, \
    user_data_bytes, meta_data, network_data, online, state, reason, host_id, created_at, updated_at, \
    chassis, spread, compose";
const SELECT: &str = "id, tenant_id, pod_manager, selector, min_cpu, min_memory_mib, image, \
    user_data_bytes, user_data AS user_data_text, meta_data, network_data, online, state, reason, \
    host_id, created_at, updated_at, chassis, spread, compose";

fn row(r: &sqlx::any::AnyRow) -> Result<ClaimRow, StoreError> {
    Ok(ClaimRow {
        id: r.try_get::<String, _>("id")?.into(),
        tenant_id: r.try_get::<String, _>("tenant_id")?.into(),
        pod_manager: r.try_get::<String, _>("pod_manager")?.into(),
        selector: decode("selector", &r.try_get::<String, _>("selector")?)?,
        min_cpu: r.try_get("min_cpu")?,
        min_memory_mib: r.try_get("min_memory_mib")?,
        image: decode("image", &r.try_get::<String, _>("image")?)?,
        user_data: match r.try_get::<Option<Vec<u8>>, _>("user_data_bytes")? {
            Some(bytes) => Some(bytes),
            None => r
                .try_get::<Option<String>, _>("user_data_text")?
                .map(String::into_bytes),
        },
        meta_data: r.try_get("meta_data")?,
        network_data: r.try_get("network_data")?,
        online: r.try_get::<i64, _>("online")? != 0,
        state: {
            let state: String = r.try_get("state")?;
            state
                .parse()
                .map_err(|e| StoreError::Corrupt(format!("a stored claim: {e}")))?
        },
        reason: r.try_get("reason")?,
        host_id: r.try_get::<Option<String>, _>("host_id")?.map(Into::into),
        chassis: r.try_get::<Option<String>, _>("chassis")?.map(Into::into),
        spread: r.try_get("spread")?,
        compose: r.try_get::<i64, _>("compose")? != 0,
        created_at: moment(r, "created_at")?,
        updated_at: moment(r, "updated_at")?,
    })
}

/// Hosts a claim could be bound to: a pod manager's systems with at least this CPU and memory,
/// every label of `labels` and a NIC of each MAC of `macs` (lower-case).
#[derive(Clone, Copy, Debug)]
pub struct HostCriteria<'a> {
    pub pod_manager: &'a PodManagerId,
    pub min_cpu: i64,
    pub min_memory_mib: i64,
    pub labels: &'a BTreeMap<String, String>,
    pub macs: &'a [String],
    /// Chassis the host must stand in (each, or in a chassis within it): the grant's, the
    /// claim's.
    pub chassis: &'a [ChassisId],
    /// The claim's spread group: a host of a known rack that no other claim of the group holds
    /// a host of.
    pub spread: Option<Spread<'a>>,
    /// The claim: a free host must not be a node composed for another claim, and a node
    /// composed for this one comes first.
    pub claim: &'a ClaimId,
}

/// A claim of a spread group, and the group.
#[derive(Clone, Copy, Debug)]
pub struct Spread<'a> {
    pub tenant: &'a TenantId,
    pub claim: &'a ClaimId,
    pub group: &'a str,
}

/// The SQL condition "host `h`'s rack is known and holds no host of another claim of the
/// group", binding the pod manager from `$1` and the tenant, group and claim from `$first`.
fn spread_condition(first: usize) -> String {
    format!(
        " AND h.rack IS NOT NULL AND NOT EXISTS (SELECT 1 FROM claims c2 JOIN hosts h2 \
         ON h2.id = c2.host_id WHERE c2.tenant_id = ${} AND c2.pod_manager = $1 \
         AND c2.spread = ${} AND c2.id <> ${} AND h2.rack = h.rack)",
        first,
        first + 1,
        first + 2
    )
}

/// A bind of a claim to a host, made only if what it was decided on still holds.
#[derive(Clone, Copy, Debug)]
pub struct Bind<'a> {
    pub claim: &'a ClaimId,
    /// The claim's `updated_at` as read: a claim changed since (its networkData, or bound or
    /// released by another) is not bound.
    pub claim_read_at: Timestamp,
    pub tenant: &'a TenantId,
    pub pod_manager: &'a PodManagerId,
    pub host: &'a HostId,
    /// Bind only while fewer than this many claims of the tenant at the pod manager hold a host.
    pub max_held: Option<i64>,
    /// The claim's spread group: bind only while no other claim of the group holds a host of
    /// the host's rack.
    pub spread: Option<&'a str>,
}

/// What a [`Bind`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindOutcome {
    Bound,
    /// The host is no longer free.
    HostTaken,
    /// The claim is no longer pending as it was read.
    ClaimChanged,
    /// The tenant holds `max_held` hosts at the pod manager already.
    AtLimit,
    /// The tenant has no grant for the pod manager (any more).
    NoGrant,
    /// Another claim of the spread group took a host of the host's rack meanwhile.
    RackTaken,
}

/// What makes a host free for a claim to take: available, held by no claim, not in
/// maintenance, and no node composed for another claim. The one place the rule is written:
/// the search for candidates and the bind that takes one both use it. `host` names the hosts
/// table (its alias), `claim` the placeholder of the claim that would take it.
fn free_host(host: &str, claim: &str) -> String {
    format!(
        "{host}.state = 'available' AND {host}.claim_id IS NULL \
         AND {host}.maintenance_since IS NULL AND NOT EXISTS (SELECT 1 FROM composed_nodes r \
         WHERE r.host_id = {host}.id AND r.claim_id <> {claim})"
    )
}

/// A parameter of a query built from parts.
enum Param {
    Text(String),
    Int(i64),
}

/// `SELECT h.id FROM hosts h` where `criteria` hold (and, for `free`, the host is available,
/// unclaimed, not in maintenance and not a node composed for another claim), but `excluding`,
/// in id order (for `free`, a node composed for the claim first), at most `limit`.
fn matching(
    criteria: HostCriteria<'_>,
    free: bool,
    excluding: &[HostId],
    limit: u32,
) -> (String, Vec<Param>) {
    let mut params = vec![
        Param::Text(criteria.pod_manager.to_string()),
        Param::Int(criteria.min_cpu),
        Param::Int(criteria.min_memory_mib),
    ];
    let mut sql = String::from(
        "SELECT h.id FROM hosts h WHERE h.pod_manager = $1 AND h.kind IN ('system', 'composed') \
         AND h.cpu_count >= $2 AND h.memory_mib >= $3",
    );
    let mut reserved_first = None;
    if free {
        params.push(Param::Text(criteria.claim.to_string()));
        let claim = format!("${}", params.len());
        sql.push_str(&format!(" AND {}", free_host("h", &claim)));
        reserved_first = Some(params.len());
    }
    sql.push_str(&label_conditions(criteria.labels, params.len() + 1));
    for (k, v) in criteria.labels {
        params.push(Param::Text(k.clone()));
        params.push(Param::Text(v.clone()));
    }
    for mac in criteria.macs {
        params.push(Param::Text(mac.clone()));
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM host_nics n WHERE n.host_id = h.id AND n.mac = ${})",
            params.len()
        ));
    }
    if let Some(spread) = criteria.spread {
        sql.push_str(&spread_condition(params.len() + 1));
        params.push(Param::Text(spread.tenant.to_string()));
        params.push(Param::Text(spread.group.to_owned()));
        params.push(Param::Text(spread.claim.to_string()));
    }
    for chassis in criteria.chassis {
        params.push(Param::Text(chassis.to_string()));
        sql.push_str(&format!(
            " AND h.chassis IN ({})",
            super::chassis::within_sql(params.len())
        ));
    }
    if !excluding.is_empty() {
        let first = params.len() + 1;
        let list: Vec<String> = (first..first + excluding.len())
            .map(|i| format!("${i}"))
            .collect();
        sql.push_str(&format!(" AND h.id NOT IN ({})", list.join(", ")));
        params.extend(excluding.iter().map(|id| Param::Text(id.to_string())));
    }
    params.push(Param::Int(i64::from(limit)));
    let order = match reserved_first {
        Some(claim) => format!(
            "CASE WHEN EXISTS (SELECT 1 FROM composed_nodes r WHERE r.host_id = h.id \
             AND r.claim_id = ${claim}) THEN 0 ELSE 1 END, h.id"
        ),
        None => "h.id".to_owned(),
    };
    sql.push_str(&format!(" ORDER BY {order} LIMIT ${}", params.len()));
    (sql, params)
}

/// The SQL condition "host `h` carries every label of `selector`", binding from `$first`.
fn label_conditions(selector: &BTreeMap<String, String>, first: usize) -> String {
    (0..selector.len())
        .map(|i| {
            format!(
                " AND EXISTS (SELECT 1 FROM host_labels l WHERE l.host_id = h.id AND l.key = ${} AND l.value = ${})",
                first + 2 * i,
                first + 2 * i + 1
            )
        })
        .collect()
}

impl Datastore {
    pub async fn claim_create(&self, c: &ClaimRow) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO claims ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)"
        ))
        .bind(c.id.as_str())
        .bind(c.tenant_id.as_str())
        .bind(c.pod_manager.as_str())
        .bind(json(&c.selector))
        .bind(c.min_cpu)
        .bind(c.min_memory_mib)
        .bind(json(&c.image))
        .bind(&c.user_data)
        .bind(&c.meta_data)
        .bind(&c.network_data)
        .bind(i64::from(c.online))
        .bind(c.state.as_str())
        .bind(&c.reason)
        .bind(c.host_id.as_ref().map(|v| v.as_str()))
        .bind(c.created_at.to_string())
        .bind(c.updated_at.to_string())
        .bind(c.chassis.as_ref().map(ChassisId::as_str))
        .bind(&c.spread)
        .bind(i64::from(c.compose))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// A claim, where it is in `scope`.
    pub async fn claim_get(
        &self,
        scope: TenantScope<'_>,
        id: &ClaimId,
    ) -> Result<Option<ClaimRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {SELECT} FROM claims WHERE id = $1 AND ($2 = '' OR tenant_id = $2)"
        ))
        .bind(id.as_str())
        .bind(scope.tenant().map_or("", TenantId::as_str))
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(row).transpose()
    }

    /// The claims in `scope`, oldest first.
    pub async fn claim_list(&self, scope: TenantScope<'_>) -> Result<Vec<ClaimRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {SELECT} FROM claims WHERE ($1 = '' OR tenant_id = $1) ORDER BY id LIMIT 10000"
        ))
        .bind(scope.tenant().map_or("", TenantId::as_str))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(row).collect()
    }

    /// Ids of pending claims, oldest first.
    pub async fn claims_pending(&self) -> Result<Vec<ClaimId>, StoreError> {
        let rows = sqlx::query("SELECT id FROM claims WHERE state = 'pending' ORDER BY id")
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| Ok(r.try_get::<String, _>("id")?.into()))
            .collect()
    }

    /// Changes what a tenant may change of its claim; `None` keeps a field. Only while the
    /// claim is still as it was checked (`state`, `host_id`): `false` when it changed meanwhile
    /// (it was bound, or released).
    #[allow(clippy::too_many_arguments)]
    pub async fn claim_update_fields(
        &self,
        id: &ClaimId,
        online: bool,
        user_data: Option<&[u8]>,
        meta_data: Option<&str>,
        network_data: Option<&str>,
        now: Timestamp,
        checked: (ClaimState, Option<&HostId>),
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE claims SET online = $2, user_data_bytes = COALESCE($3, user_data_bytes), \
             user_data = CASE WHEN $3 IS NULL THEN user_data END, \
             meta_data = COALESCE($4, meta_data), network_data = COALESCE($5, network_data), \
             updated_at = $6 WHERE id = $1 AND state = $7 AND COALESCE(host_id, '') = $8",
        )
        .bind(id.as_str())
        .bind(i64::from(online))
        .bind(user_data.map(<[u8]>::to_vec))
        .bind(meta_data)
        .bind(network_data)
        .bind(now.to_string())
        .bind(checked.0.as_str())
        .bind(checked.1.map_or("", HostId::as_str))
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected();
        Ok(done == 1)
    }

    pub async fn claim_set_state(
        &self,
        id: &ClaimId,
        state: ClaimState,
        reason: Option<&str>,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE claims SET state = $2, reason = $3, updated_at = $4 WHERE id = $1")
            .bind(id.as_str())
            .bind(state.as_str())
            .bind(reason)
            .bind(now.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// Records why a pending claim still waits (or can never bind), only while it is pending:
    /// a concurrent bind or release that changed it meanwhile wins.
    pub async fn claim_set_unbound(
        &self,
        id: &ClaimId,
        state: ClaimState,
        reason: &str,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE claims SET state = $2, reason = $3, updated_at = $4 \
             WHERE id = $1 AND state = 'pending' AND host_id IS NULL",
        )
        .bind(id.as_str())
        .bind(state.as_str())
        .bind(reason)
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// Fails a bound claim whose provisioning failed for good, only while it is still bound to
    /// `host`: `false` when a release or another end changed it meanwhile.
    pub async fn claim_fail_bound(
        &self,
        id: &ClaimId,
        host: &HostId,
        reason: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE claims SET state = 'failed', reason = $3, updated_at = $4 \
             WHERE id = $1 AND state = 'bound' AND host_id = $2",
        )
        .bind(id.as_str())
        .bind(host.as_str())
        .bind(reason)
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected();
        Ok(done == 1)
    }

    /// Frees the claim's host (it moves to `to`, underneath a `missing`) and deletes the claim,
    /// in one transaction; a `failed` claim (its provisioning failed for good, and this freed
    /// its host) stays, unbound, with its reason, until its tenant deletes it.
    pub async fn claim_finish_release(
        &self,
        id: &ClaimId,
        to: podium_types::HostState,
    ) -> Result<(), StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        // Deprovisioned (a host that vanished meanwhile stays missing).
        sqlx::query(
            "UPDATE hosts SET claim_id = NULL, \
             missing_from = CASE WHEN state = 'missing' THEN $2 ELSE missing_from END, \
             state = CASE WHEN state = 'missing' THEN state ELSE $2 END, \
             error_type = NULL, error_message = NULL, error_at = NULL, error_from = NULL \
             WHERE claim_id = $1",
        )
        .bind(id.as_str())
        .bind(to.as_str())
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM claims WHERE id = $1 AND state <> 'failed'")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE claims SET host_id = NULL WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Whether any system of the pod manager matches `criteria`, free or not.
    pub async fn hosts_matching_any(&self, criteria: HostCriteria<'_>) -> Result<bool, StoreError> {
        Ok(!self
            .hosts_matching(criteria, false, &[], 1)
            .await?
            .is_empty())
    }

    /// Up to `limit` free systems (available, unclaimed, not in maintenance) that match
    /// `criteria`, but those of `excluding`, in id order.
    pub async fn hosts_free_matching(
        &self,
        criteria: HostCriteria<'_>,
        excluding: &[HostId],
        limit: u32,
    ) -> Result<Vec<HostId>, StoreError> {
        self.hosts_matching(criteria, true, excluding, limit).await
    }

    async fn hosts_matching(
        &self,
        criteria: HostCriteria<'_>,
        free: bool,
        excluding: &[HostId],
        limit: u32,
    ) -> Result<Vec<HostId>, StoreError> {
        let (sql, params) = matching(criteria, free, excluding, limit);
        let mut query = sqlx::query_scalar::<_, String>(&sql);
        for param in params {
            query = match param {
                Param::Text(text) => query.bind(text),
                Param::Int(n) => query.bind(n),
            };
        }
        let ids = query.fetch_all(&mut *self.reader().await?).await?;
        Ok(ids.into_iter().map(HostId::from).collect())
    }

    /// How many claims of a tenant at a pod manager hold a host.
    pub async fn claims_holding_hosts(
        &self,
        tenant: &TenantId,
        pod_manager: &PodManagerId,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM claims WHERE tenant_id = $1 AND pod_manager = $2 AND host_id IS NOT NULL",
        )
        .bind(tenant.as_str())
        .bind(pod_manager.as_str())
        .fetch_one(&mut *self.reader().await?)
        .await?)
    }

    /// Binds a claim to a host in one transaction, only if the claim is still pending as it was
    /// read, the host still free, the tenant still granted the pod manager and, with
    /// `max_held`, holding fewer hosts there than that. The binds of one grant are serialized
    /// (a row lock on PostgreSQL; SQLite's write lock is held anyway), so the limit holds
    /// whatever the number of processes, and two binds racing for one host never both get it.
    pub async fn claim_bind_host(
        &self,
        bind: &Bind<'_>,
        now: Timestamp,
    ) -> Result<BindOutcome, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let locked = sqlx::query(
            "UPDATE grants SET max_hosts = max_hosts WHERE tenant_id = $1 AND pod_manager = $2",
        )
        .bind(bind.tenant.as_str())
        .bind(bind.pod_manager.as_str())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if locked == 0 {
            return Ok(BindOutcome::NoGrant);
        }
        if let Some(max) = bind.max_held {
            let held: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM claims WHERE tenant_id = $1 AND pod_manager = $2 AND host_id IS NOT NULL",
            )
            .bind(bind.tenant.as_str())
            .bind(bind.pod_manager.as_str())
            .fetch_one(&mut *tx)
            .await?;
            if held >= max {
                return Ok(BindOutcome::AtLimit);
            }
        }
        // Binds of one tenant at one pod manager are one at a time from here (the grant's row
        // is locked), so no other claim of the group takes the rack between this check and
        // the commit.
        if let Some(group) = bind.spread {
            let sql = format!(
                "SELECT COUNT(*) FROM hosts h WHERE h.id = $5 AND h.pod_manager = $1 {}",
                spread_condition(2)
            );
            let free: i64 = sqlx::query_scalar(&sql)
                .bind(bind.pod_manager.as_str())
                .bind(bind.tenant.as_str())
                .bind(group)
                .bind(bind.claim.as_str())
                .bind(bind.host.as_str())
                .fetch_one(&mut *tx)
                .await?;
            if free == 0 {
                return Ok(BindOutcome::RackTaken);
            }
        }
        let taken = sqlx::query(&format!(
            "UPDATE hosts SET claim_id = $1, updated_at = $3 WHERE id = $2 AND {}",
            free_host("hosts", "$1")
        ))
        .bind(bind.claim.as_str())
        .bind(bind.host.as_str())
        .bind(now.to_string())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if taken == 0 {
            return Ok(BindOutcome::HostTaken);
        }
        // Dropping the transaction undoes the host's update.
        let bound = sqlx::query(
            "UPDATE claims SET state = 'bound', reason = NULL, host_id = $2, updated_at = $3 \
             WHERE id = $1 AND state = 'pending' AND host_id IS NULL AND updated_at = $4",
        )
        .bind(bind.claim.as_str())
        .bind(bind.host.as_str())
        .bind(now.to_string())
        .bind(bind.claim_read_at.to_string())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if bound == 0 {
            return Ok(BindOutcome::ClaimChanged);
        }
        tx.commit().await?;
        Ok(BindOutcome::Bound)
    }
}
