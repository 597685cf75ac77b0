//! Stored grants: which tenant may claim hosts of which pod manager.

use podium_types::Timestamp;
use podium_types::{ChassisId, GrantId, PodManagerId, TenantId};
use sqlx::Row;

use std::collections::BTreeMap;

use super::{Datastore, StoreError, decode, json, moment};
use podium_types::{Page, Paged};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantRow {
    pub id: GrantId,
    pub tenant_id: TenantId,
    pub pod_manager: PodManagerId,
    /// Labels a host must all carry.
    pub selector: BTreeMap<String, String>,
    pub max_hosts: Option<i64>,
    /// The chassis (a rack, an enclosure) whose hosts alone the grant gives; all when `None`.
    pub chassis: Option<ChassisId>,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "id, tenant_id, pod_manager, selector, max_hosts, created_at, chassis";

fn row(r: &sqlx::any::AnyRow) -> Result<GrantRow, StoreError> {
    Ok(GrantRow {
        id: r.try_get::<String, _>("id")?.into(),
        tenant_id: r.try_get::<String, _>("tenant_id")?.into(),
        pod_manager: r.try_get::<String, _>("pod_manager")?.into(),
        selector: decode("selector", &r.try_get::<String, _>("selector")?)?,
        max_hosts: r.try_get("max_hosts")?,
        chassis: r.try_get::<Option<String>, _>("chassis")?.map(Into::into),
        created_at: moment(r, "created_at")?,
    })
}

impl Datastore {
    pub async fn grant_create(&self, g: &GrantRow) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO grants ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        ))
        .bind(g.id.as_str())
        .bind(g.tenant_id.as_str())
        .bind(g.pod_manager.as_str())
        .bind(json(&g.selector))
        .bind(g.max_hosts)
        .bind(g.created_at.to_string())
        .bind(g.chassis.as_ref().map(ChassisId::as_str))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    pub async fn grant_get(&self, id: &GrantId) -> Result<Option<GrantRow>, StoreError> {
        let r = sqlx::query(&format!("SELECT {COLUMNS} FROM grants WHERE id = $1"))
            .bind(id.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        r.as_ref().map(row).transpose()
    }

    /// The grant of a tenant for a pod manager (a tenant has at most one for each).
    pub async fn grant_of(
        &self,
        tenant_id: &TenantId,
        pod_manager: &PodManagerId,
    ) -> Result<Option<GrantRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM grants WHERE tenant_id = $1 AND pod_manager = $2"
        ))
        .bind(tenant_id.as_str())
        .bind(pod_manager.as_str())
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(row).transpose()
    }

    /// Grants, optionally of one tenant or one pod manager.
    pub async fn grant_list(
        &self,
        tenant_id: Option<&TenantId>,
        pod_manager: Option<&PodManagerId>,
        page: &Page,
    ) -> Result<Paged<GrantRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM grants WHERE ($1 = '' OR tenant_id = $1) AND ($2 = '' OR pod_manager = $2) \
             AND id > $3 ORDER BY id LIMIT $4"
        ))
        .bind(tenant_id.map_or("", TenantId::as_str))
        .bind(pod_manager.map_or("", PodManagerId::as_str))
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |g| g.id.to_string()))
    }

    pub async fn grant_delete(&self, id: &GrantId) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM grants WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}
