//! Stored IP pools, allocations and free extents.
//!
//! Every change to a pool's addresses happens in one write transaction that first bumps the
//! pool's row (`UPDATE ip_pools ... WHERE id = $1`): on PostgreSQL that row lock serialises the
//! allocations of one pool across processes, on SQLite the write lock does. The unique
//! constraints on `(pool_id, addr_key)` and `(pool_id, owner)` are the last line: a duplicate
//! address cannot be committed even by a buggy caller.

use sqlx::Row;

use super::{Datastore, Page, Paged, StoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpPoolRow {
    pub id: String,
    pub name: String,
    pub family: i64,
    pub subnet: String,
    pub prefix: i64,
    pub gateway: Option<String>,
    pub dns_servers: String,
    pub ranges: String,
    pub reserved: String,
    pub pre_allocations: String,
    pub plugin: String,
    pub pod_manager: Option<String>,
    pub tenants: String,
    pub total: String,
    pub allocated: i64,
    pub generation: i64,
    pub created_at: String,
    pub updated_at: String,
}

const POOL_COLUMNS: &str = "id, name, family, subnet, prefix, gateway, dns_servers, ranges, reserved, \
     pre_allocations, plugin, pod_manager, tenants, total, allocated, generation, created_at, updated_at";

fn pool_row(r: &sqlx::any::AnyRow) -> Result<IpPoolRow, StoreError> {
    Ok(IpPoolRow {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        family: r.try_get("family")?,
        subnet: r.try_get("subnet")?,
        prefix: r.try_get("prefix")?,
        gateway: r.try_get("gateway")?,
        dns_servers: r.try_get("dns_servers")?,
        ranges: r.try_get("ranges")?,
        reserved: r.try_get("reserved")?,
        pre_allocations: r.try_get("pre_allocations")?,
        plugin: r.try_get("plugin")?,
        pod_manager: r.try_get("pod_manager")?,
        tenants: r.try_get("tenants")?,
        total: r.try_get("total")?,
        allocated: r.try_get("allocated")?,
        generation: r.try_get("generation")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpAllocationRow {
    pub id: String,
    pub pool_id: String,
    pub address: String,
    pub addr_key: Vec<u8>,
    pub owner: String,
    pub created_at: String,
}

const ALLOCATION_COLUMNS: &str = "id, pool_id, address, addr_key, owner, created_at";

fn allocation_row(r: &sqlx::any::AnyRow) -> Result<IpAllocationRow, StoreError> {
    Ok(IpAllocationRow {
        id: r.try_get("id")?,
        pool_id: r.try_get("pool_id")?,
        address: r.try_get("address")?,
        addr_key: r.try_get("addr_key")?,
        owner: r.try_get("owner")?,
        created_at: r.try_get("created_at")?,
    })
}

/// Why an allocation was not committed.
#[derive(Debug)]
pub enum CommitOutcome {
    Committed(IpAllocationRow),
    /// The owner already holds an address in this pool (a concurrent request won).
    OwnerHolds(IpAllocationRow),
    /// The address is no longer free.
    Taken,
    /// The pool changed (or was deleted) since the proposal was made.
    PoolChanged,
}

type Tx = sqlx::Transaction<'static, sqlx::Any>;

/// The free extent that holds `key`, if any.
async fn extent_holding(
    tx: &mut Tx,
    pool_id: &str,
    key: &[u8],
) -> Result<Option<(Vec<u8>, Vec<u8>)>, StoreError> {
    let r = sqlx::query(
        "SELECT first_key, last_key FROM ip_free WHERE pool_id = $1 AND last_key >= $2 \
         ORDER BY last_key LIMIT 1",
    )
    .bind(pool_id)
    .bind(key)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(r) = r else { return Ok(None) };
    let first: Vec<u8> = r.try_get("first_key")?;
    let last: Vec<u8> = r.try_get("last_key")?;
    Ok((first.as_slice() <= key).then_some((first, last)))
}

fn be(value: u128) -> Vec<u8> {
    value.to_be_bytes().to_vec()
}

fn value(key: &[u8]) -> Result<u128, StoreError> {
    <[u8; 16]>::try_from(key)
        .map(u128::from_be_bytes)
        .map_err(|_| StoreError::Corrupt(format!("an address key of {} bytes", key.len())))
}

async fn insert_extent(
    tx: &mut Tx,
    pool_id: &str,
    first: u128,
    last: u128,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO ip_free (pool_id, first_key, last_key) VALUES ($1, $2, $3)")
        .bind(pool_id)
        .bind(be(first))
        .bind(be(last))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

impl Datastore {
    /// Stores a new pool and its free extents.
    pub async fn ip_pool_create(
        &self,
        pool: &IpPoolRow,
        extents: &[(u128, u128)],
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(&format!(
            "INSERT INTO ip_pools ({POOL_COLUMNS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)"
        ))
        .bind(&pool.id)
        .bind(&pool.name)
        .bind(pool.family)
        .bind(&pool.subnet)
        .bind(pool.prefix)
        .bind(&pool.gateway)
        .bind(&pool.dns_servers)
        .bind(&pool.ranges)
        .bind(&pool.reserved)
        .bind(&pool.pre_allocations)
        .bind(&pool.plugin)
        .bind(&pool.pod_manager)
        .bind(&pool.tenants)
        .bind(&pool.total)
        .bind(pool.allocated)
        .bind(pool.generation)
        .bind(&pool.created_at)
        .bind(&pool.updated_at)
        .execute(&mut *tx)
        .await?;
        for &(first, last) in extents {
            insert_extent(&mut tx, &pool.id, first, last).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn ip_pool_get(&self, id: &str) -> Result<Option<IpPoolRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {POOL_COLUMNS} FROM ip_pools WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(pool_row).transpose()
    }

    /// Whether another pool than `except` has this name.
    pub async fn ip_pool_name_taken(
        &self,
        name: &str,
        except: Option<&str>,
    ) -> Result<bool, StoreError> {
        let r = sqlx::query("SELECT id FROM ip_pools WHERE name = $1 AND id <> $2")
            .bind(name)
            .bind(except.unwrap_or(""))
            .fetch_optional(self.pool())
            .await?;
        Ok(r.is_some())
    }

    pub async fn ip_pool_list(
        &self,
        pod_manager: Option<&str>,
        page: &Page,
    ) -> Result<Paged<IpPoolRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {POOL_COLUMNS} FROM ip_pools WHERE ($1 = '' OR pod_manager = $1) AND id > $2 \
             ORDER BY id LIMIT $3"
        ))
        .bind(pod_manager.unwrap_or(""))
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .fetch_all(self.pool())
        .await?;
        let items = rows.iter().map(pool_row).collect::<Result<Vec<_>, _>>()?;
        Ok(Paged::from_rows(items, page.limit, |p| p.id.clone()))
    }

    /// Every pool, for lookups by owner or pod manager (pools are few).
    pub async fn ip_pools_all(&self) -> Result<Vec<IpPoolRow>, StoreError> {
        let rows = sqlx::query(&format!("SELECT {POOL_COLUMNS} FROM ip_pools ORDER BY id"))
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(pool_row).collect()
    }

    /// Replaces a pool's definition and its free extents, under the pool's lock. `check` sees the
    /// current allocations and refuses the change (its error is returned as `Err(Ok(e))`) or
    /// answers the new extents.
    pub async fn ip_pool_replace<E>(
        &self,
        pool: &IpPoolRow,
        check: impl FnOnce(&[IpAllocationRow]) -> Result<Vec<(u128, u128)>, E>,
    ) -> Result<Result<bool, E>, StoreError> {
        let mut tx = self.begin_write().await?;
        let locked = sqlx::query("UPDATE ip_pools SET generation = generation + 1 WHERE id = $1")
            .bind(&pool.id)
            .execute(&mut *tx)
            .await?;
        if locked.rows_affected() == 0 {
            return Ok(Ok(false));
        }
        let allocations = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1"
        ))
        .bind(&pool.id)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(allocation_row)
        .collect::<Result<Vec<_>, _>>()?;
        let extents = match check(&allocations) {
            Ok(extents) => extents,
            Err(e) => return Ok(Err(e)),
        };
        sqlx::query(
            "UPDATE ip_pools SET name = $2, family = $3, subnet = $4, prefix = $5, gateway = $6, \
             dns_servers = $7, ranges = $8, reserved = $9, pre_allocations = $10, plugin = $11, \
             pod_manager = $12, tenants = $13, total = $14, updated_at = $15 WHERE id = $1",
        )
        .bind(&pool.id)
        .bind(&pool.name)
        .bind(pool.family)
        .bind(&pool.subnet)
        .bind(pool.prefix)
        .bind(&pool.gateway)
        .bind(&pool.dns_servers)
        .bind(&pool.ranges)
        .bind(&pool.reserved)
        .bind(&pool.pre_allocations)
        .bind(&pool.plugin)
        .bind(&pool.pod_manager)
        .bind(&pool.tenants)
        .bind(&pool.total)
        .bind(&pool.updated_at)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM ip_free WHERE pool_id = $1")
            .bind(&pool.id)
            .execute(&mut *tx)
            .await?;
        for &(first, last) in &extents {
            insert_extent(&mut tx, &pool.id, first, last).await?;
        }
        tx.commit().await?;
        Ok(Ok(true))
    }

    /// Deletes a pool that holds no allocation. `None` when it does not exist, `Some(n)` with
    /// the number of allocations that kept it.
    pub async fn ip_pool_delete(&self, id: &str) -> Result<Option<i64>, StoreError> {
        let mut tx = self.begin_write().await?;
        let Some(r) = sqlx::query("SELECT allocated FROM ip_pools WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(None);
        };
        let allocated: i64 = r.try_get("allocated")?;
        if allocated > 0 {
            return Ok(Some(allocated));
        }
        sqlx::query("DELETE FROM ip_pools WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(0))
    }

    /// The lowest free address in `[start, end]` of a pool, as committed now.
    pub async fn ip_first_free(
        &self,
        pool_id: &str,
        start: u128,
        end: u128,
    ) -> Result<Option<u128>, StoreError> {
        let r = sqlx::query(
            "SELECT first_key, last_key FROM ip_free WHERE pool_id = $1 AND last_key >= $2 \
             ORDER BY last_key LIMIT 1",
        )
        .bind(pool_id)
        .bind(be(start))
        .fetch_optional(self.pool())
        .await?;
        let Some(r) = r else { return Ok(None) };
        let first = value(&r.try_get::<Vec<u8>, _>("first_key")?)?;
        let candidate = first.max(start);
        Ok((candidate <= end).then_some(candidate))
    }

    /// Commits `value` for `owner`, if it is still free and the pool is still at `generation`.
    pub async fn ip_commit(
        &self,
        allocation: &IpAllocationRow,
        value: u128,
        generation: i64,
        from_free: bool,
    ) -> Result<CommitOutcome, StoreError> {
        let mut tx = self.begin_write().await?;
        let locked = sqlx::query(
            "UPDATE ip_pools SET allocated = allocated + 1 WHERE id = $1 AND generation = $2",
        )
        .bind(&allocation.pool_id)
        .bind(generation)
        .execute(&mut *tx)
        .await?;
        if locked.rows_affected() == 0 {
            return Ok(CommitOutcome::PoolChanged);
        }
        if let Some(existing) = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND owner = $2"
        ))
        .bind(&allocation.pool_id)
        .bind(&allocation.owner)
        .fetch_optional(&mut *tx)
        .await?
        {
            return Ok(CommitOutcome::OwnerHolds(allocation_row(&existing)?));
        }
        let key = be(value);
        if from_free {
            // Take the address out of its extent: shrink, split or drop it.
            let Some((first, last)) = extent_holding(&mut tx, &allocation.pool_id, &key).await?
            else {
                return Ok(CommitOutcome::Taken);
            };
            let (first, last) = (self::value(&first)?, self::value(&last)?);
            if value < last {
                sqlx::query(
                    "UPDATE ip_free SET first_key = $3 WHERE pool_id = $1 AND last_key = $2",
                )
                .bind(&allocation.pool_id)
                .bind(be(last))
                .bind(be(value + 1))
                .execute(&mut *tx)
                .await?;
            } else {
                sqlx::query("DELETE FROM ip_free WHERE pool_id = $1 AND last_key = $2")
                    .bind(&allocation.pool_id)
                    .bind(be(last))
                    .execute(&mut *tx)
                    .await?;
            }
            if first < value {
                insert_extent(&mut tx, &allocation.pool_id, first, value - 1).await?;
            }
        }
        let inserted = sqlx::query(&format!(
            "INSERT INTO ip_allocations ({ALLOCATION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
        ))
        .bind(&allocation.id)
        .bind(&allocation.pool_id)
        .bind(&allocation.address)
        .bind(&key)
        .bind(&allocation.owner)
        .bind(&allocation.created_at)
        .execute(&mut *tx)
        .await;
        match inserted {
            Ok(_) => {}
            // A pre-allocated address already held: not free.
            Err(e) => match StoreError::from(e) {
                StoreError::Conflict(_) => return Ok(CommitOutcome::Taken),
                other => return Err(other),
            },
        }
        tx.commit().await?;
        Ok(CommitOutcome::Committed(IpAllocationRow {
            addr_key: key,
            ..allocation.clone()
        }))
    }

    pub async fn ip_allocation_get(
        &self,
        pool_id: &str,
        id: &str,
    ) -> Result<Option<IpAllocationRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND id = $2"
        ))
        .bind(pool_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(allocation_row).transpose()
    }

    /// Who holds `value` in a pool.
    pub async fn ip_allocation_at(
        &self,
        pool_id: &str,
        value: u128,
    ) -> Result<Option<IpAllocationRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND addr_key = $2"
        ))
        .bind(pool_id)
        .bind(be(value))
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(allocation_row).transpose()
    }

    pub async fn ip_allocation_of_owner(
        &self,
        pool_id: &str,
        owner: &str,
    ) -> Result<Option<IpAllocationRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND owner = $2"
        ))
        .bind(pool_id)
        .bind(owner)
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(allocation_row).transpose()
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
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(allocation_row).collect()
    }

    pub async fn ip_allocation_list(
        &self,
        pool_id: &str,
        page: &Page,
    ) -> Result<Paged<IpAllocationRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {ALLOCATION_COLUMNS} FROM ip_allocations WHERE pool_id = $1 AND id > $2 \
             ORDER BY id LIMIT $3"
        ))
        .bind(pool_id)
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .fetch_all(self.pool())
        .await?;
        let items = rows
            .iter()
            .map(allocation_row)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Paged::from_rows(items, page.limit, |a| a.id.clone()))
    }

    /// Releases an allocation; its address goes back to the free extents unless `to_free`, asked
    /// with the pool as it is under the lock, says it does not belong there (a pre-allocated
    /// address). `false` when there was none.
    pub async fn ip_release(
        &self,
        pool_id: &str,
        id: &str,
        to_free: impl FnOnce(&IpPoolRow, u128) -> bool,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        // Lock the pool first, then read its definition under the lock.
        sqlx::query("UPDATE ip_pools SET generation = generation WHERE id = $1")
            .bind(pool_id)
            .execute(&mut *tx)
            .await?;
        let Some(pool) = sqlx::query(&format!(
            "SELECT {POOL_COLUMNS} FROM ip_pools WHERE id = $1"
        ))
        .bind(pool_id)
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(false);
        };
        let pool = pool_row(&pool)?;
        let Some(r) =
            sqlx::query("SELECT addr_key FROM ip_allocations WHERE pool_id = $1 AND id = $2")
                .bind(pool_id)
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?
        else {
            return Ok(false);
        };
        let v = value(&r.try_get::<Vec<u8>, _>("addr_key")?)?;
        sqlx::query("DELETE FROM ip_allocations WHERE pool_id = $1 AND id = $2")
            .bind(pool_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE ip_pools SET allocated = allocated - 1 WHERE id = $1")
            .bind(pool_id)
            .execute(&mut *tx)
            .await?;
        if to_free(&pool, v) {
            // Merge with the extents ending right before and starting right after it.
            let mut first = v;
            let mut last = v;
            if let Some(before) = v.checked_sub(1)
                && let Some(r) = sqlx::query(
                    "SELECT first_key FROM ip_free WHERE pool_id = $1 AND last_key = $2",
                )
                .bind(pool_id)
                .bind(be(before))
                .fetch_optional(&mut *tx)
                .await?
            {
                first = value(&r.try_get::<Vec<u8>, _>("first_key")?)?;
                sqlx::query("DELETE FROM ip_free WHERE pool_id = $1 AND last_key = $2")
                    .bind(pool_id)
                    .bind(be(before))
                    .execute(&mut *tx)
                    .await?;
            }
            if let Some(after) = v.checked_add(1)
                && let Some((after_first, after_last)) =
                    extent_holding(&mut tx, pool_id, &be(after)).await?
                && value(&after_first)? == after
            {
                last = value(&after_last)?;
                sqlx::query("DELETE FROM ip_free WHERE pool_id = $1 AND last_key = $2")
                    .bind(pool_id)
                    .bind(&after_last)
                    .execute(&mut *tx)
                    .await?;
            }
            insert_extent(&mut tx, pool_id, first, last).await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}
