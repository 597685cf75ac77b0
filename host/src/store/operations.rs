//! Stored operations: every driver action the API queued, and what came of it.

use sqlx::Row;

use super::{Datastore, Page, Paged, StoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationRow {
    pub id: String,
    pub kind: String,
    pub status: String,
    pub pod_manager: String,
    pub host_id: Option<String>,
    /// The action's body, JSON text.
    pub request: String,
    pub error: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct OperationFilter {
    pub host: Option<String>,
    pub pod_manager: Option<String>,
}

const COLUMNS: &str =
    "id, kind, status, pod_manager, host_id, request, error, created_at, started_at, finished_at";

fn row(r: &sqlx::any::AnyRow) -> Result<OperationRow, StoreError> {
    Ok(OperationRow {
        id: r.try_get("id")?,
        kind: r.try_get("kind")?,
        status: r.try_get("status")?,
        pod_manager: r.try_get("pod_manager")?,
        host_id: r.try_get("host_id")?,
        request: r.try_get("request")?,
        error: r.try_get("error")?,
        created_at: r.try_get("created_at")?,
        started_at: r.try_get("started_at")?,
        finished_at: r.try_get("finished_at")?,
    })
}

impl Datastore {
    pub async fn operation_create(&self, op: &OperationRow) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO operations ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ))
        .bind(&op.id)
        .bind(&op.kind)
        .bind(&op.status)
        .bind(&op.pod_manager)
        .bind(&op.host_id)
        .bind(&op.request)
        .bind(&op.error)
        .bind(&op.created_at)
        .bind(&op.started_at)
        .bind(&op.finished_at)
        .execute(self.writer())
        .await?;
        Ok(())
    }

    pub async fn operation_get(&self, id: &str) -> Result<Option<OperationRow>, StoreError> {
        let r = sqlx::query(&format!("SELECT {COLUMNS} FROM operations WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        r.as_ref().map(row).transpose()
    }

    /// Newest first.
    pub async fn operation_list(
        &self,
        filter: &OperationFilter,
        page: &Page,
    ) -> Result<Paged<OperationRow>, StoreError> {
        let cursor = page.cursor.clone().unwrap_or_else(|| "~".into());
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM operations WHERE ($1 = '' OR host_id = $1) AND ($2 = '' OR pod_manager = $2) \
             AND id < $3 ORDER BY id DESC LIMIT $4"
        ))
        .bind(filter.host.as_deref().unwrap_or(""))
        .bind(filter.pod_manager.as_deref().unwrap_or(""))
        .bind(cursor)
        .bind(i64::from(page.limit) + 1)
        .fetch_all(self.pool())
        .await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(Paged::from_rows(items, page.limit, |o| o.id.clone()))
    }

    pub async fn operation_start(&self, id: &str, now: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE operations SET status = 'running', started_at = $2 WHERE id = $1")
            .bind(id)
            .bind(now)
            .execute(self.writer())
            .await?;
        Ok(())
    }

    pub async fn operation_finish(
        &self,
        id: &str,
        error: Option<&str>,
        now: &str,
    ) -> Result<(), StoreError> {
        let status = if error.is_some() {
            "failed"
        } else {
            "succeeded"
        };
        sqlx::query(
            "UPDATE operations SET status = $2, error = $3, finished_at = $4 WHERE id = $1",
        )
        .bind(id)
        .bind(status)
        .bind(error)
        .bind(now)
        .execute(self.writer())
        .await?;
        Ok(())
    }
}
