//! Stored claims and the atomic binding of a claim to a host.

use podium_types::{ClaimId, HostId, PodManagerId, TenantId, TenantScope};
use std::collections::BTreeMap;

use podium_types::ClaimState;
use sqlx::Row;

use super::{Datastore, StoreError, decode, json};
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
    pub created_at: String,
    pub updated_at: String,
}

/// `user_data` is read from `user_data_bytes`, or from the text column of claims made before it.
const COLUMNS: &str = "id, tenant_id, pod_manager, selector, min_cpu, min_memory_mib, image, \
    user_data_bytes, meta_data, network_data, online, state, reason, host_id, created_at, updated_at";
const SELECT: &str = "id, tenant_id, pod_manager, selector, min_cpu, min_memory_mib, image, \
    user_data_bytes, user_data AS user_data_text, meta_data, network_data, online, state, reason, \
    host_id, created_at, updated_at";

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
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

/// Why a pending claim did not bind: the facts, for the application to judge and say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unbound {
    /// The claim no longer exists.
    Gone,
    /// It is no longer pending and holds no host; its stored reason says why.
    Settled(Option<String>),
    /// Its networkData changed while binding.
    NetworkDataChanged,
    /// The tenant has no grant for the claim's pod manager (any more).
    NoGrant,
    /// No host of the pod manager matches the claim and its grant, free or not.
    NoMatch,
    /// The grant's limit of hosts at once is reached.
    AtLimit { max: i64 },
    /// Matching hosts exist, but none is free (with the NICs `macs`, where the claim's
    /// networkData names some), or none of those tried fits its networkData (`unfit`: the
    /// last one's reason).
    NoneFree {
        macs: Vec<String>,
        unfit: Option<String>,
    },
    /// Its networkData fits none of the `tried` free matching hosts; `last` says why not.
    FitsNone { tried: usize, last: String },
    /// Other binds kept taking the hosts it found.
    Contended,
}

/// Whether a claim's own networkData fits a host, for a bind to skip the hosts it does not.
pub struct HostFit {
    /// Asked about a host (by id): `Ok(None)` when the claim fits it, `Ok(Some(why))` when not;
    /// an `Err` abandons the bind.
    #[allow(clippy::type_complexity)]
    pub check: Box<
        dyn Fn(HostId) -> futures::future::BoxFuture<'static, Result<Option<String>, StoreError>>
            + Send
            + Sync,
    >,
    /// The networkData `check` judges; a claim whose networkData changed meanwhile is not bound
    /// on its answers.
    pub network_data: String,
    /// MACs (lower-case) the networkData names: only hosts with a NIC of each are candidates.
    pub macs: Vec<String>,
}

impl std::fmt::Debug for HostFit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostFit")
            .field("macs", &self.macs)
            .finish_non_exhaustive()
    }
}

/// The most hosts one bind asks `HostFit` about.
const FIT_CHECKS: usize = 32;

/// `AND h.nics LIKE ...` for `n` MACs (bound as `%"mac":"<mac>"%`), binding from `$first`.
fn with_macs(n: usize, first: usize) -> String {
    (first..first + n)
        .map(|i| format!(" AND h.nics LIKE ${i}"))
        .collect()
}

/// `AND h.id NOT IN (...)` for `n` ids, binding from `$first`; nothing when `n` is 0.
fn excluding(n: usize, first: usize) -> String {
    if n == 0 {
        return String::new();
    }
    let params: Vec<String> = (first..first + n).map(|i| format!("${i}")).collect();
    format!(" AND h.id NOT IN ({})", params.join(", "))
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

fn matching_query<'q>(
    sql: &'q str,
    pod_manager: &PodManagerId,
    min_cpu: i64,
    min_memory_mib: i64,
    selector: &BTreeMap<String, String>,
) -> sqlx::query::QueryScalar<'q, sqlx::Any, String, sqlx::any::AnyArguments<'q>> {
    let mut q = sqlx::query_scalar::<_, String>(sql)
        .bind(pod_manager.as_str().to_owned())
        .bind(min_cpu)
        .bind(min_memory_mib);
    for (k, v) in selector {
        q = q.bind(k.clone()).bind(v.clone());
    }
    q
}

impl Datastore {
    pub async fn claim_create(&self, c: &ClaimRow) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO claims ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
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
        .bind(&c.created_at)
        .bind(&c.updated_at)
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
        now: &str,
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
        .bind(now)
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
        now: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE claims SET state = $2, reason = $3, updated_at = $4 WHERE id = $1")
            .bind(id.as_str())
            .bind(state.as_str())
            .bind(reason)
            .bind(now)
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
        now: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE claims SET state = $2, reason = $3, updated_at = $4 \
             WHERE id = $1 AND state = 'pending' AND host_id IS NULL",
        )
        .bind(id.as_str())
        .bind(state.as_str())
        .bind(reason)
        .bind(now)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// Frees the claim's host (it moves to `to`, underneath a `missing`) and deletes the claim,
    /// in one transaction.
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
        sqlx::query("DELETE FROM claims WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Binds a pending claim to a free matching host, atomically: the host's `claim_id` is set
    /// only where it is still empty, so two claims racing for the last host never both get it.
    ///
    /// `fits`, where given, is asked (outside any transaction) about each free host the claim
    /// could take before it takes it: `Ok(None)` when the claim fits the host, `Ok(Some(why))`
    /// when it does not (the host is skipped). At most `FIT_CHECKS` hosts are asked per bind.
    pub async fn claim_bind(
        &self,
        claim_id: &ClaimId,
        now: &str,
        fits: Option<&HostFit>,
    ) -> Result<Result<HostId, Unbound>, StoreError> {
        let macs: Vec<String> = fits.map(|f| f.macs.clone()).unwrap_or_default();
        let mut unfit: Vec<String> = Vec::new();
        let mut fit: Option<String> = None;
        let mut why_unfit = None;
        let mut attempts = 0;
        while attempts < 5 {
            attempts += 1;
            let mut writer = self.writer().await?;
            let mut tx = writer.begin().await?;
            let Some(claim) = sqlx::query(&format!("SELECT {SELECT} FROM claims WHERE id = $1"))
                .bind(claim_id.as_str())
                .fetch_optional(&mut *tx)
                .await?
                .as_ref()
                .map(row)
                .transpose()?
            else {
                return Ok(Err(Unbound::Gone));
            };
            if fits.is_some_and(|f| claim.network_data.as_deref() != Some(f.network_data.as_str()))
            {
                return Ok(Err(Unbound::NetworkDataChanged));
            }
            if claim.state != ClaimState::Pending {
                return Ok(match claim.host_id {
                    Some(h) => Ok(h),
                    None => Err(Unbound::Settled(claim.reason)),
                });
            }
            // Serializes the claims of one grant (a row lock on PostgreSQL; SQLite's write lock
            // is already held).
            let locked = sqlx::query(
                "UPDATE grants SET max_hosts = max_hosts WHERE tenant_id = $1 AND pod_manager = $2",
            )
            .bind(claim.tenant_id.as_str())
            .bind(claim.pod_manager.as_str())
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if locked == 0 {
                return Ok(Err(Unbound::NoGrant));
            }
            let grant = sqlx::query(
                "SELECT selector, max_hosts FROM grants WHERE tenant_id = $1 AND pod_manager = $2",
            )
            .bind(claim.tenant_id.as_str())
            .bind(claim.pod_manager.as_str())
            .fetch_one(&mut *tx)
            .await?;
            let grant_selector: BTreeMap<String, String> =
                decode("selector", &grant.try_get::<String, _>("selector")?)?;
            let max_hosts: Option<i64> = grant.try_get("max_hosts")?;
            let mut selector = grant_selector;
            selector.extend(claim.selector.clone());

            let matching = |only_free: bool| {
                format!(
                    "SELECT h.id FROM hosts h WHERE h.pod_manager = $1 AND h.kind = 'system' \
                     AND h.cpu_count >= $2 AND h.memory_mib >= $3{}{}{} ORDER BY h.id LIMIT 1",
                    if only_free {
                        " AND h.state = 'available' AND h.claim_id IS NULL AND h.maintenance_since IS NULL"
                    } else {
                        ""
                    },
                    label_conditions(&selector, 4),
                    if only_free {
                        excluding(unfit.len(), 4 + 2 * selector.len())
                            + &with_macs(macs.len(), 4 + 2 * selector.len() + unfit.len())
                    } else {
                        String::new()
                    },
                )
            };
            let (any_sql, free_sql) = (matching(false), matching(true));
            let bind = |sql, exclude: &[String], macs: &[String]| {
                let mut q = matching_query(
                    sql,
                    &claim.pod_manager,
                    claim.min_cpu,
                    claim.min_memory_mib,
                    &selector,
                );
                for id in exclude {
                    q = q.bind(id.clone());
                }
                for mac in macs {
                    q = q.bind(format!("%\"mac\":\"{mac}\"%"));
                }
                q
            };
            if bind(&any_sql, &[], &[])
                .fetch_optional(&mut *tx)
                .await?
                .is_none()
            {
                return Ok(Err(Unbound::NoMatch));
            }
            if let Some(max) = max_hosts {
                let held: i64 = sqlx::query(
                    "SELECT COUNT(*) AS n FROM claims WHERE tenant_id = $1 AND pod_manager = $2 AND host_id IS NOT NULL",
                )
                .bind(claim.tenant_id.as_str())
                .bind(claim.pod_manager.as_str())
                .fetch_one(&mut *tx)
                .await?
                .try_get("n")?;
                if held >= max {
                    return Ok(Err(Unbound::AtLimit { max }));
                }
            }
            let Some(host) = bind(&free_sql, &unfit, &macs)
                .fetch_optional(&mut *tx)
                .await?
            else {
                return Ok(Err(Unbound::NoneFree {
                    macs,
                    unfit: why_unfit,
                }));
            };
            if let Some(fits) = fits
                && fit.as_ref() != Some(&host)
            {
                // Asked outside the transaction, and without the writer (SQLite's only one):
                // the answer may take a plugin call.
                tx.rollback().await?;
                drop(writer);
                attempts -= 1;
                match (fits.check)(HostId::from(host.clone())).await? {
                    None => fit = Some(host),
                    Some(why) => {
                        why_unfit = Some(why);
                        unfit.push(host);
                        if unfit.len() >= FIT_CHECKS {
                            return Ok(Err(Unbound::FitsNone {
                                tried: FIT_CHECKS,
                                last: why_unfit.unwrap_or_default(),
                            }));
                        }
                    }
                }
                continue;
            }
            let taken = sqlx::query(
                "UPDATE hosts SET claim_id = $1, updated_at = $3 WHERE id = $2 AND claim_id IS NULL \
                 AND state = 'available' AND maintenance_since IS NULL",
            )
            .bind(claim_id.as_str())
            .bind(&host)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if taken == 0 {
                // Another claim won this host meanwhile: look again.
                tx.rollback().await?;
                continue;
            }
            // Only a claim that is still pending binds: a concurrent bind of the same claim
            // (which read it as pending before this one) must not bind it twice. Dropping the
            // transaction undoes the host's update.
            let bound = sqlx::query(
                "UPDATE claims SET state = 'bound', reason = NULL, host_id = $2, updated_at = $3 \
                 WHERE id = $1 AND state = 'pending' AND host_id IS NULL",
            )
            .bind(claim_id.as_str())
            .bind(&host)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if bound == 0 {
                tx.rollback().await?;
                continue;
            }
            tx.commit().await?;
            return Ok(Ok(host.into()));
        }
        Ok(Err(Unbound::Contended))
    }
}
