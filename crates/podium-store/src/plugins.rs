//! Stored plugins: metadata and the component bytes.

use podium_types::Timestamp;
use sqlx::Row;

use super::{Datastore, StoreError, moment};

use podium_types::PluginSource;

/// A plugin's stored metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginRow {
    pub sha256: String,
    pub name: String,
    pub version: String,
    pub world: String,
    pub description: String,
    pub size: i64,
    pub source: PluginSource,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "sha256, name, version, world, description, size, source, created_at";

fn row(r: &sqlx::any::AnyRow) -> Result<PluginRow, StoreError> {
    Ok(PluginRow {
        sha256: r.try_get("sha256")?,
        name: r.try_get("name")?,
        version: r.try_get("version")?,
        world: r.try_get("world")?,
        description: r.try_get("description")?,
        size: r.try_get("size")?,
        source: r.try_get::<String, _>("source")?.parse::<PluginSource>()?,
        created_at: moment(r, "created_at")?,
    })
}

impl Datastore {
    /// Stores a plugin. The same bytes again are a no-op returning the stored row; another
    /// plugin with the same name and version is a `Conflict`.
    pub async fn plugin_create(
        &self,
        plugin: &PluginRow,
        wasm: &[u8],
    ) -> Result<PluginRow, StoreError> {
        if let Some(existing) = self.plugin_get(&plugin.sha256).await? {
            return Ok(existing);
        }
        sqlx::query(
            "INSERT INTO plugins (sha256, name, version, world, description, size, source, wasm, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&plugin.sha256)
        .bind(&plugin.name)
        .bind(&plugin.version)
        .bind(&plugin.world)
        .bind(&plugin.description)
        .bind(plugin.size)
        .bind(plugin.source.as_str())
        .bind(wasm.to_vec())
        .bind(plugin.created_at.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(plugin.clone())
    }

    pub async fn plugin_get(&self, sha256: &str) -> Result<Option<PluginRow>, StoreError> {
        let r = sqlx::query(&format!("SELECT {COLUMNS} FROM plugins WHERE sha256 = $1"))
            .bind(sha256)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        r.as_ref().map(row).transpose()
    }

    pub async fn plugin_by_name_version(
        &self,
        name: &str,
        version: &str,
    ) -> Result<Option<PluginRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM plugins WHERE name = $1 AND version = $2"
        ))
        .bind(name)
        .bind(version)
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(row).transpose()
    }

    /// Every plugin, by name then version.
    pub async fn plugin_list(&self) -> Result<Vec<PluginRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM plugins ORDER BY name, version, sha256"
        ))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(row).collect()
    }

    pub async fn plugin_wasm(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let r = sqlx::query("SELECT wasm FROM plugins WHERE sha256 = $1")
            .bind(sha256)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(match r {
            Some(r) => Some(r.try_get("wasm")?),
            None => None,
        })
    }
}
