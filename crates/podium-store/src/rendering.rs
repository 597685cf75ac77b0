//! Stored network templates (a column of the pod manager) and config drives.

use podium_types::Timestamp;
use podium_types::{ClaimId, ConfigDriveId, HostId, PodManagerId};
use sqlx::Row;

use super::{Datastore, StoreError, moment};

/// A config drive served at an unguessable URL until it expires. The image is rebuilt from
/// these documents on every download; `sha256` and `size` are the image's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigDriveRow {
    pub id: ConfigDriveId,
    /// sha256 of the URL's token.
    pub token_hash: String,
    pub host_id: HostId,
    pub claim_id: Option<ClaimId>,
    /// `preprovisioning` or `provisioning`.
    pub phase: String,
    pub meta_data: String,
    pub network_data: String,
    pub user_data: Option<Vec<u8>>,
    /// The deploy agent's settings (`etc/ironic-python-agent.d/podium.conf` on the drive), on a
    /// preprovisioning drive.
    pub agent_config: Option<String>,
    pub sha256: String,
    pub size: i64,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
}

const COLUMNS: &str = "id, token_hash, host_id, claim_id, phase, meta_data, network_data, \
    user_data, sha256, size, created_at, expires_at, agent_config";

fn row(r: &sqlx::any::AnyRow) -> Result<ConfigDriveRow, StoreError> {
    Ok(ConfigDriveRow {
        id: r.try_get::<String, _>("id")?.into(),
        token_hash: r.try_get("token_hash")?,
        host_id: r.try_get::<String, _>("host_id")?.into(),
        claim_id: r.try_get::<Option<String>, _>("claim_id")?.map(Into::into),
        phase: r.try_get("phase")?,
        meta_data: r.try_get("meta_data")?,
        network_data: r.try_get("network_data")?,
        user_data: r.try_get("user_data")?,
        agent_config: r.try_get("agent_config")?,
        sha256: r.try_get("sha256")?,
        size: r.try_get("size")?,
        created_at: moment(r, "created_at")?,
        expires_at: moment(r, "expires_at")?,
    })
}

impl Datastore {
    /// A pod manager's network template (JSON text), `None` where the admin set none.
    /// `Err` only on storage errors; a missing pod manager is `Ok(None)` too.
    pub async fn network_template_get(
        &self,
        uuid: &PodManagerId,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar::<_, Option<String>>(
            "SELECT network_template FROM pod_managers WHERE uuid = $1",
        )
        .bind(uuid.as_str())
        .fetch_optional(&mut *self.reader().await?)
        .await?
        .flatten())
    }

    /// Sets (or, with `None`, removes) a pod manager's template; `false` when it does not exist.
    pub async fn network_template_set(
        &self,
        uuid: &PodManagerId,
        template: Option<&str>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE pod_managers SET network_template = $2, updated_at = $3 WHERE uuid = $1",
        )
        .bind(uuid.as_str())
        .bind(template)
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected();
        Ok(done == 1)
    }

    /// Stores a config drive, and forgets the ones that expired before `now`.
    pub async fn config_drive_create(
        &self,
        d: &ConfigDriveRow,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        sqlx::query("DELETE FROM config_drives WHERE expires_at <= $1")
            .bind(now.to_string())
            .execute(&mut *tx)
            .await?;
        sqlx::query(&format!(
            "INSERT INTO config_drives ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        ))
        .bind(d.id.as_str())
        .bind(&d.token_hash)
        .bind(d.host_id.as_str())
        .bind(d.claim_id.as_ref().map(|v| v.as_str()))
        .bind(&d.phase)
        .bind(&d.meta_data)
        .bind(&d.network_data)
        .bind(&d.user_data)
        .bind(&d.sha256)
        .bind(d.size)
        .bind(d.created_at.to_string())
        .bind(d.expires_at.to_string())
        .bind(&d.agent_config)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The config drive a token opens, unless it expired by `now` or its claim is no longer
    /// bound to its host (a release ends it at once, whatever else raced with it).
    pub async fn config_drive_by_token(
        &self,
        token_hash: &str,
        now: Timestamp,
    ) -> Result<Option<ConfigDriveRow>, StoreError> {
        sqlx::query(&format!(
            "SELECT {COLUMNS} FROM config_drives d WHERE token_hash = $1 AND expires_at > $2 \
             AND (claim_id IS NULL OR EXISTS (SELECT 1 FROM claims c WHERE c.id = d.claim_id \
                  AND c.state = 'bound' AND c.host_id = d.host_id))"
        ))
        .bind(token_hash)
        .bind(now.to_string())
        .fetch_optional(&mut *self.reader().await?)
        .await?
        .as_ref()
        .map(row)
        .transpose()
    }

    /// Forgets the config drives that expired before `now` (their documents with them).
    pub async fn config_drives_expire(&self, now: Timestamp) -> Result<u64, StoreError> {
        Ok(
            sqlx::query("DELETE FROM config_drives WHERE expires_at <= $1")
                .bind(now.to_string())
                .execute(&mut *self.writer().await?)
                .await?
                .rows_affected(),
        )
    }

    /// Forgets every config drive of a claim (its host is being released) or of a host.
    pub async fn config_drives_delete(
        &self,
        host_id: &HostId,
        claim_id: Option<&ClaimId>,
    ) -> Result<u64, StoreError> {
        Ok(sqlx::query(
            "DELETE FROM config_drives WHERE host_id = $1 AND ($2 = '' OR claim_id = $2)",
        )
        .bind(host_id.as_str())
        .bind(claim_id.map_or("", ClaimId::as_str))
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected())
    }
}
