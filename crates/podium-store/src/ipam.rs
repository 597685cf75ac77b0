//! Stored IP pools and allocations.
//!
//! An allocation is one statement: an insert that only happens while the pool is still at the
//! generation the address was chosen under (on PostgreSQL it share-locks the pool row, so a
//! concurrent change of the pool's definition waits for it or makes it miss). The unique
//! constraints on `(pool_id, addr_key)` and `(pool_id, owner)` decide every race: a duplicate
//! address cannot be committed, by any number of processes.

use podium_types::Timestamp;
use podium_types::{IpClaimId, IpPoolId, PodManagerId};
use sqlx::Row;

use std::collections::BTreeMap;

use super::{Datastore, StoreError, decode, json, moment};
use podium_types::requests::IpRangeParams;
use podium_types::{Page, Paged};
use podium_types::{PluginBinding, TenantId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpPoolRow {
    pub id: IpPoolId,
    pub name: String,
    pub family: i64,
    pub subnet: String,
    pub prefix: i64,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
    pub ranges: Vec<IpRangeParams>,
    pub reserved: Vec<String>,
    /// Owner to address.
    pub pre_allocations: BTreeMap<String, String>,
    pub plugin: PluginBinding,
    pub pod_manager: Option<PodManagerId>,
    /// The tenants whose claims may take addresses from it; every tenant when empty.
    pub tenants: Vec<TenantId>,
    pub generation: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

const POOL_COLUMNS: &str = "id, name, family, subnet, prefix, gateway, dns_servers, ranges, reserved, \
     pre_allocations, plugin, pod_manager, tenants, generation, created_at, updated_at";

fn pool_row(r: &sqlx::any::AnyRow) -> Result<IpPoolRow, StoreError> {
    Ok(IpPoolRow {
        id: r.try_get::<String, _>("id")?.into(),
        name: r.try_get("name")?,
        family: r.try_get("family")?,
        subnet: r.try_get("subnet")?,
        prefix: r.try_get("prefix")?,
        gateway: r.try_get("gateway")?,
        dns_servers: decode("DNS servers", &r.try_get::<String, _>("dns_servers")?)?,
        ranges: decode("ranges", &r.try_get::<String, _>("ranges")?)?,
        reserved: decode("reserved addresses", &r.try_get::<String, _>("reserved")?)?,
        pre_allocations: decode(
            "pre-allocations",
            &r.try_get::<String, _>("pre_allocations")?,
        )?,
        plugin: decode("IPAM binding", &r.try_get::<String, _>("plugin")?)?,
        pod_manager: r
            .try_get::<Option<String>, _>("pod_manager")?
            .map(Into::into),
        tenants: decode("tenants", &r.try_get::<String, _>("tenants")?)?,
        generation: r.try_get("generation")?,
        created_at: moment(r, "created_at")?,
        updated_at: moment(r, "updated_at")?,
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpAllocationRow {
    pub id: IpClaimId,
    pub pool_id: IpPoolId,
    pub address: String,
    pub addr_key: Vec<u8>,
    pub owner: String,
    pub created_at: Timestamp,
}

const ALLOCATION_COLUMNS: &str = "id, pool_id, address, addr_key, owner, created_at";

fn allocation_row(r: &sqlx::any::AnyRow) -> Result<IpAllocationRow, StoreError> {
    Ok(IpAllocationRow {
        id: r.try_get::<String, _>("id")?.into(),
        pool_id: r.try_get::<String, _>("pool_id")?.into(),
        address: r.try_get("address")?,
        addr_key: r.try_get("addr_key")?,
        owner: r.try_get("owner")?,
        created_at: moment(r, "created_at")?,
    })
}

/// Why an allocation was not inserted.
#[derive(Debug)]
pub enum Missed {
    /// The owner already holds an address in this pool.
    OwnerHolds(IpAllocationRow),
    /// Someone holds the address.
    Taken(IpAllocationRow),
    /// The pool changed (or was deleted) since the address was chosen.
    PoolChanged,
}

fn be(value: u128) -> Vec<u8> {
    value.to_be_bytes().to_vec()
}

/// Binds a pool's id and definition, `id` to `tenants` in the order of `POOL_COLUMNS`, to the
/// next parameters of `q`.
fn bind_definition<'q>(
    q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    pool: &'q IpPoolRow,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    q.bind(pool.id.as_str())
        .bind(&pool.name)
        .bind(pool.family)
        .bind(&pool.subnet)
        .bind(pool.prefix)
        .bind(&pool.gateway)
        .bind(json(&pool.dns_servers))
        .bind(json(&pool.ranges))
        .bind(json(&pool.reserved))
        .bind(json(&pool.pre_allocations))
        .bind(json(&pool.plugin))
        .bind(pool.pod_manager.as_ref().map(|v| v.as_str()))
        .bind(json(&pool.tenants))
}

fn value(key: &[u8]) -> Result<u128, StoreError> {
    <[u8; 16]>::try_from(key)
        .map(u128::from_be_bytes)
        .map_err(|_| StoreError::Corrupt(format!("an address key of {} bytes", key.len())))
}

impl Datastore {
    pub async fn ip_pool_create(&self, pool: &IpPoolRow) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO ip_pools ({POOL_COLUMNS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
        );
        bind_definition(sqlx::query(&sql), pool)
            .bind(pool.generation)
            .bind(pool.created_at.to_string())
            .bind(pool.updated_at.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    pub async fn ip_pool_get(&self, id: &IpPoolId) -> Result<Option<IpPoolRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {POOL_COLUMNS} FROM ip_pools WHERE id = $1"
        ))
        .bind(id.as_str())
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(pool_row).transpose()
    }

    /// Whether another pool than `except` has this name.
    pub async fn ip_pool_name_taken(
        &self,
        name: &str,
        except: Option<&IpPoolId>,
    ) -> Result<bool, StoreError> {
        let r = sqlx::query("SELECT id FROM ip_pools WHERE name = $1 AND id <> $2")
            .bind(name)
            .bind(except.map_or("", IpPoolId::as_str))
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(r.is_some())
    }

    pub async fn ip_pool_list(
        &self,
        pod_manager: Option<&PodManagerId>,
        name: Option<&str>,
        page: &Page,
    ) -> Result<Paged<IpPoolRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {POOL_COLUMNS} FROM ip_pools WHERE ($1 = '' OR pod_manager = $1) AND id > $2 \
             AND ($4 = '' OR name = $4) ORDER BY id LIMIT $3"
        ))
        .bind(pod_manager.map_or("", PodManagerId::as_str))
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .bind(name.unwrap_or(""))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows.iter().map(pool_row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |p| p.id.to_string()))
    }

    /// The pools a pod manager may use: its own and those bound to no pod manager, by name.
    pub async fn ip_pools_serving(
        &self,
        pod_manager: &PodManagerId,
    ) -> Result<Vec<IpPoolRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {POOL_COLUMNS} FROM ip_pools WHERE pod_manager = $1 OR pod_manager IS NULL \
             ORDER BY name LIMIT 10000"
        ))
        .bind(pod_manager.as_str())
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(pool_row).collect()
    }

    /// Locks a pool's row (bumping its generation, which sticks only where it is replaced) in a
    /// transaction the answer holds: what
    /// allocates in the pool waits until it is dropped (rolled back) or used to replace the
    /// pool's definition ([`PoolLock::replace`]). `None` when the pool does not exist. It holds
    /// the writer: on SQLite, any other write of this process waits for it, so its holder
    /// writes nothing else meanwhile.
    pub async fn ip_pool_lock(&self, id: &IpPoolId) -> Result<Option<PoolLock>, StoreError> {
        let mut tx = self.writer().await?.begin_owned().await?;
        let locked = sqlx::query("UPDATE ip_pools SET generation = generation + 1 WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut **tx)
            .await?;
        if locked.rows_affected() == 0 {
            return Ok(None);
        }
        Ok(Some(PoolLock { tx, id: id.clone() }))
    }

    /// Deletes a pool that holds no allocation. `None` when it does not exist, `Some(n)` with
    /// the number of allocations that kept it.
    pub async fn ip_pool_delete(&self, id: &IpPoolId) -> Result<Option<i64>, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let locked = sqlx::query("UPDATE ip_pools SET generation = generation + 1 WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        if locked.rows_affected() == 0 {
            return Ok(None);
        }
        let r = sqlx::query("SELECT COUNT(*) AS n FROM ip_allocations WHERE pool_id = $1")
            .bind(id.as_str())
            .fetch_one(&mut *tx)
            .await?;
        let allocated: i64 = r.try_get("n")?;
        if allocated > 0 {
            return Ok(Some(allocated));
        }
        sqlx::query("DELETE FROM ip_pools WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(0))
    }

    /// In one query: how many addresses of a pool are held, and how many of those by one of
    /// `owners` (the owners it pre-allocates to).
    pub async fn ip_pool_counts(
        &self,
        pool_id: &IpPoolId,
        owners: &[&str],
    ) -> Result<(i64, i64), StoreError> {
        let sql = if owners.is_empty() {
            "SELECT COUNT(*) AS n, CAST(0 AS BIGINT) AS claimed FROM ip_allocations WHERE pool_id = $1".to_owned()
        } else {
            let list: Vec<String> = (2..owners.len() + 2).map(|i| format!("${i}")).collect();
            format!(
                "SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN owner IN ({}) THEN 1 ELSE 0 END), 0) \
                 AS claimed FROM ip_allocations WHERE pool_id = $1",
                list.join(", ")
            )
        };
        let mut q = sqlx::query(&sql).bind(pool_id.as_str());
        for owner in owners {
            q = q.bind(*owner);
        }
        let r = q.fetch_one(&mut *self.reader().await?).await?;
        Ok((r.try_get("n")?, r.try_get("claimed")?))
    }

    /// Every allocated address of a pool, for deriving its free space.
    pub async fn ip_allocated_values(&self, pool_id: &IpPoolId) -> Result<Vec<u128>, StoreError> {
        let rows = sqlx::query("SELECT addr_key FROM ip_allocations WHERE pool_id = $1")
            .bind(pool_id.as_str())
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| value(&r.try_get::<Vec<u8>, _>("addr_key")?))
            .collect()
    }

    /// Inserts a group of allocations `(row, value)` in one statement, if the pool is still at
    /// `generation`; rows whose address or owner is taken (also by an earlier row of the same
    /// group) are skipped. Answers the ids of the rows inserted.
    pub async fn ip_insert_many(
        &self,
        rows: &[(IpAllocationRow, u128)],
        generation: i64,
    ) -> Result<std::collections::HashSet<IpClaimId>, StoreError> {
        let mut inserted = std::collections::HashSet::new();
        let Some((first, _)) = rows.first() else {
            return Ok(inserted);
        };
        let lock = match self.backend() {
            super::Backend::Postgres => " FOR SHARE",
            super::Backend::Sqlite => "",
        };
        // Far below SQLite's 32766 and PostgreSQL's 65535 bound parameters.
        for chunk in rows.chunks(500) {
            let values = (0..chunk.len())
                .map(|i| {
                    let b = 3 + i * 5;
                    format!(
                        "(${}, $1, ${}, ${}, ${}, ${})",
                        b,
                        b + 1,
                        b + 2,
                        b + 3,
                        b + 4
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            // One row (a lone request) needs no `RETURNING`: the count of rows says it, and
            // saves a row's hand-over from SQLite's thread.
            let returning = if chunk.len() == 1 {
                ""
            } else {
                " RETURNING id"
            };
            let sql = format!(
                "INSERT INTO ip_allocations ({ALLOCATION_COLUMNS}) \
                 SELECT column1, column2, column3, column4, column5, column6 FROM (VALUES {values}) AS v \
                 WHERE EXISTS (SELECT 1 FROM ip_pools WHERE id = $1 AND generation = $2{lock}) \
                 ON CONFLICT DO NOTHING{returning}"
            );
            let mut query = sqlx::query(&sql)
                .bind(first.pool_id.as_str())
                .bind(generation);
            for (row, value) in chunk {
                query = query
                    .bind(row.id.as_str())
                    .bind(&row.address)
                    .bind(be(*value))
                    .bind(&row.owner)
                    .bind(row.created_at.to_string());
            }
            if let [(row, _)] = chunk {
                if query
                    .execute(&mut *self.writer().await?)
                    .await?
                    .rows_affected()
                    == 1
                {
                    inserted.insert(row.id.clone());
                }
                continue;
            }
            for r in query.fetch_all(&mut *self.writer().await?).await? {
                inserted.insert(r.try_get::<String, _>("id")?.into());
            }
        }
        Ok(inserted)
    }

    /// Why an insert of `value` for `owner` did not happen.
    pub async fn ip_missed(
        &self,
        pool_id: &IpPoolId,
        owner: &str,
        value: u128,
    ) -> Result<Missed, StoreError> {
        if let Some(existing) = self.ip_allocation_of_owner(pool_id, owner).await? {
            return Ok(Missed::OwnerHolds(existing));
        }
        if let Some(holder) = self.ip_allocation_at(pool_id, value).await? {
            return Ok(Missed::Taken(holder));
        }
        // The pool's generation moved on, or whatever was in the way was released meanwhile:
        // either way, worth choosing again.
        Ok(Missed::PoolChanged)
    }

    pub async fn ip_allocation_get(
        &self,
        pool_id: &IpPoolId,
        id: &IpClaimId,
    ) -> Result<Option<IpAllocationRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND id = $2"
        ))
        .bind(pool_id.as_str())
        .bind(id.as_str())
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(allocation_row).transpose()
    }

    /// Who holds `value` in a pool.
    pub async fn ip_allocation_at(
        &self,
        pool_id: &IpPoolId,
        value: u128,
    ) -> Result<Option<IpAllocationRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND addr_key = $2"
        ))
        .bind(pool_id.as_str())
        .bind(be(value))
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(allocation_row).transpose()
    }

    pub async fn ip_allocation_of_owner(
        &self,
        pool_id: &IpPoolId,
        owner: &str,
    ) -> Result<Option<IpAllocationRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND owner = $2"
        ))
        .bind(pool_id.as_str())
        .bind(owner)
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(allocation_row).transpose()
    }

    /// Allocations owned by hosts that no longer exist: `(pool_id, id)`.
    pub async fn ip_allocations_of_gone_hosts(
        &self,
    ) -> Result<Vec<(IpPoolId, IpClaimId)>, StoreError> {
        let rows = sqlx::query(
            "SELECT pool_id, id FROM ip_allocations WHERE owner LIKE 'host:%' \
             AND substr(owner, 6) NOT IN (SELECT id FROM hosts)",
        )
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get::<String, _>("pool_id")?.into(),
                    r.try_get::<String, _>("id")?.into(),
                ))
            })
            .collect()
    }

    /// Every allocation of an owner, in every pool.
    pub async fn ip_allocations_of_owner(
        &self,
        owner: &str,
    ) -> Result<Vec<IpAllocationRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE owner = $1 ORDER BY id"
        ))
        .bind(owner)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(allocation_row).collect()
    }

    pub async fn ip_allocation_list(
        &self,
        pool_id: &IpPoolId,
        page: &Page,
    ) -> Result<Paged<IpAllocationRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND id > $2 \
             ORDER BY id LIMIT $3"
        ))
        .bind(pool_id.as_str())
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows
            .iter()
            .map(allocation_row)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |a| a.id.to_string()))
    }

    /// Deletes an allocation; answers the address it held, `None` when there was none.
    pub async fn ip_release(
        &self,
        pool_id: &IpPoolId,
        id: &IpClaimId,
    ) -> Result<Option<u128>, StoreError> {
        let r = sqlx::query(
            "DELETE FROM ip_allocations WHERE pool_id = $1 AND id = $2 RETURNING addr_key",
        )
        .bind(pool_id.as_str())
        .bind(id.as_str())
        .fetch_optional(&mut *self.writer().await?)
        .await?;
        r.map(|r| value(&r.try_get::<Vec<u8>, _>("addr_key")?))
            .transpose()
    }
}

/// A pool's row locked, in a transaction: the pool's allocations cannot change until it is
/// dropped (which rolls it back) or the pool's definition is replaced under it.
pub struct PoolLock {
    tx: crate::OwnedTransaction,
    id: IpPoolId,
}

impl std::fmt::Debug for PoolLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolLock")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl PoolLock {
    /// Every address held in the pool.
    pub async fn allocations(&mut self) -> Result<Vec<IpAllocationRow>, StoreError> {
        sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1"
        ))
        .bind(self.id.as_str())
        .fetch_all(&mut **self.tx)
        .await?
        .iter()
        .map(allocation_row)
        .collect()
    }

    /// Replaces the locked pool's definition with `pool`'s (whatever id `pool` has) and commits.
    pub async fn replace(mut self, pool: &IpPoolRow) -> Result<(), StoreError> {
        let pool = IpPoolRow {
            id: self.id.clone(),
            ..pool.clone()
        };
        let pool = &pool;
        bind_definition(
            sqlx::query(
            "UPDATE ip_pools SET name = $2, family = $3, subnet = $4, prefix = $5, gateway = $6, \
             dns_servers = $7, ranges = $8, reserved = $9, pre_allocations = $10, plugin = $11, \
             pod_manager = $12, tenants = $13, updated_at = $14 WHERE id = $1",
            ),
            pool,
        )
        .bind(pool.updated_at.to_string())
        .execute(&mut **self.tx)
        .await?;
        self.tx.commit().await
    }
}
