//! The audit log (`audit_events`): written once per authenticated request that asks for a
//! change, read newest first, forgotten after the retention.

use super::moment;
use podium_types::Timestamp;
use sqlx::Row;

use crate::{Datastore, StoreError};
use podium_types::{AuditFilter, Page, Paged, Role, TenantId, TokenId};

/// One audit event, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRow {
    pub id: String,
    pub at: Timestamp,
    pub token_id: TokenId,
    pub role: Role,
    pub tenant_id: Option<TenantId>,
    pub method: String,
    pub route: String,
    pub path: String,
    pub resource_id: Option<String>,
    pub status: i64,
    pub error_code: Option<String>,
}

const COLUMNS: &str = "id, at, token_id, role, tenant_id, method, route, path, resource_id, \
                       status, error_code";

fn row(r: &sqlx::any::AnyRow) -> Result<AuditRow, StoreError> {
    Ok(AuditRow {
        id: r.try_get("id")?,
        at: moment(r, "at")?,
        token_id: r.try_get::<String, _>("token_id")?.into(),
        role: r.try_get::<String, _>("role")?.parse::<Role>()?,
        tenant_id: r
            .try_get::<Option<String>, _>("tenant_id")?
            .map(TenantId::from),
        method: r.try_get("method")?,
        route: r.try_get("route")?,
        path: r.try_get("path")?,
        resource_id: r.try_get("resource_id")?,
        status: r.try_get("status")?,
        error_code: r.try_get("error_code")?,
    })
}

impl Datastore {
    /// Writes `events` in one transaction: every one or none.
    pub async fn audit_insert(&self, events: &[AuditRow]) -> Result<(), StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        // A statement of many rows (11 parameters each, well under either database's limit).
        for chunk in events.chunks(256) {
            let values: Vec<String> = (0..chunk.len())
                .map(|i| {
                    let p: Vec<String> = (1..=11).map(|k| format!("${}", i * 11 + k)).collect();
                    format!("({})", p.join(", "))
                })
                .collect();
            let sql = format!(
                "INSERT INTO audit_events ({COLUMNS}) VALUES {}",
                values.join(", ")
            );
            let mut q = sqlx::query(&sql);
            for event in chunk {
                q = q
                    .bind(event.id.as_str())
                    .bind(event.at.to_string())
                    .bind(event.token_id.as_str())
                    .bind(event.role.as_str())
                    .bind(event.tenant_id.as_ref().map(TenantId::as_str))
                    .bind(event.method.as_str())
                    .bind(event.route.as_str())
                    .bind(event.path.as_str())
                    .bind(event.resource_id.as_deref())
                    .bind(event.status)
                    .bind(event.error_code.as_deref());
            }
            q.execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Newest first. A `resource` matches the resource recorded or any segment of the path
    /// (it holds no `%`, `_` or `/`: the application checks).
    pub async fn audit_list(
        &self,
        filter: &AuditFilter,
        page: &Page,
    ) -> Result<Paged<AuditRow>, StoreError> {
        // No cursor: from the newest (`''`, not a sentinel, which sorts by collation).
        let cursor = page.cursor.clone().unwrap_or_default();
        let resource = filter.resource.as_deref().unwrap_or("");
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM audit_events WHERE ($1 = '' OR id < $1) \
             AND ($2 = '' OR tenant_id = $2) \
             AND ($3 = '' OR resource_id = $3 OR path LIKE $4 OR path LIKE $5) \
             AND ($6 = '' OR at >= $6) AND ($7 = '' OR at < $7) \
             ORDER BY id DESC LIMIT $8"
        ))
        .bind(cursor)
        .bind(filter.tenant.as_ref().map_or("", |t| t.as_str()))
        .bind(resource)
        .bind(format!("%/{resource}"))
        .bind(format!("%/{resource}/%"))
        .bind(filter.since.map_or(String::new(), |t| t.to_string()))
        .bind(filter.until.map_or(String::new(), |t| t.to_string()))
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |e| e.id.clone()))
    }

    /// Forgets the events older than `before`, a few thousand at a time (other writers go
    /// between the batches); answers how many.
    pub async fn audit_forget_before(&self, before: Timestamp) -> Result<u64, StoreError> {
        let mut forgotten = 0;
        loop {
            let n = sqlx::query(
                "DELETE FROM audit_events WHERE id IN \
                 (SELECT id FROM audit_events WHERE at < $1 LIMIT 5000)",
            )
            .bind(before.to_string())
            .execute(&mut *self.writer().await?)
            .await?
            .rows_affected();
            forgotten += n;
            if n < 5000 {
                return Ok(forgotten);
            }
        }
    }
}
