//! Stored pod managers and their status history.

use podium_types::Timestamp;
use podium_types::{
    DeploySettings, FirmwareProfile, PodManagerId, PodManagerStatus, TenantFirmware,
};
use sqlx::Row;

use super::{Datastore, StoreError, decode, json, moment, moment_opt};
use podium_types::PluginBinding;
use podium_types::requests::NetworkConfigOwner;
use podium_types::{Page, Paged, PodManagerFilter};

/// A pod manager as stored. Plugin bindings are JSON text (`PluginBinding` in the app layer);
/// `auth_sealed` is the sealed credentials, never the password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodManagerRow {
    pub uuid: PodManagerId,
    pub name: String,
    pub url: String,
    pub auth_sealed: Option<String>,
    pub description: String,
    pub location: String,
    pub tls_verify: bool,
    pub tls_ca_bundle: Option<String>,
    pub tls_pinned_sha256: Option<String>,
    pub driver: PluginBinding,
    pub ipam: PluginBinding,
    pub renderer: Option<PluginBinding>,
    pub network_config_owner: NetworkConfigOwner,
    /// Operations at once at the site's shared service (`None`: the server's default).
    pub service_limit: Option<i64>,
    /// Operations at once at the whole site, hosts with their own BMC included (`None`: none).
    pub site_limit: Option<i64>,
    /// Requests one driver call sends the site's shared service at once (`None`: the
    /// server's default).
    pub request_limit: Option<i64>,
    /// The ramdisk's URL an inspection boots where the site has DHCP-less pools.
    pub preprovisioning_image: Option<String>,
    /// How the site's hosts take disk images and are cleaned after them.
    pub deploy: DeploySettings,
    /// How the site's hosts are powered off.
    pub power: podium_types::PowerSettings,
    /// What its tenants may change of the hosts they claim.
    pub tenant_firmware: TenantFirmware,
    /// The firmware settings its hosts are given before they are `available`.
    pub firmware_profile: FirmwareProfile,
    pub status: PodManagerStatus,
    pub status_message: Option<String>,
    pub last_probe_at: Option<Timestamp>,
    pub redfish_link: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusChange {
    pub status: PodManagerStatus,
    pub message: Option<String>,
    pub at: Timestamp,
}

const COLUMNS: &str = "uuid, name, url, auth_sealed, description, location, tls_verify, tls_ca_bundle, \
    driver, ipam, renderer, network_config_owner, status, status_message, last_probe_at, \
    redfish_link, created_at, updated_at, tls_pinned_sha256, service_limit, site_limit, preprovisioning_image, deploy, \
    request_limit, tenant_firmware, firmware_profile, power";

fn row(r: &sqlx::any::AnyRow) -> Result<PodManagerRow, StoreError> {
    Ok(PodManagerRow {
        uuid: r.try_get::<String, _>("uuid")?.into(),
        name: r.try_get("name")?,
        url: r.try_get("url")?,
        auth_sealed: r.try_get("auth_sealed")?,
        description: r.try_get("description")?,
        location: r.try_get("location")?,
        tls_verify: r.try_get::<i64, _>("tls_verify")? != 0,
        tls_ca_bundle: r.try_get("tls_ca_bundle")?,
        tls_pinned_sha256: r.try_get("tls_pinned_sha256")?,
        driver: decode("driver binding", &r.try_get::<String, _>("driver")?)?,
        ipam: decode("IPAM binding", &r.try_get::<String, _>("ipam")?)?,
        renderer: r
            .try_get::<Option<String>, _>("renderer")?
            .map(|text| decode("renderer binding", &text))
            .transpose()?,
        network_config_owner: r.try_get::<String, _>("network_config_owner")?.parse()?,
        service_limit: r.try_get("service_limit")?,
        site_limit: r.try_get("site_limit")?,
        request_limit: r.try_get("request_limit")?,
        preprovisioning_image: r.try_get("preprovisioning_image")?,
        // Absent: a pod manager from before the setting, with the defaults.
        deploy: r
            .try_get::<Option<String>, _>("deploy")?
            .map(|text| decode("deploy settings", &text))
            .transpose()?
            .unwrap_or_default(),
        // Absent: a pod manager from before the setting, with the defaults.
        power: r
            .try_get::<Option<String>, _>("power")?
            .map(|text| decode("power settings", &text))
            .transpose()?
            .unwrap_or_default(),
        // Absent: a pod manager from before the setting, whose tenants change nothing.
        tenant_firmware: r
            .try_get::<Option<String>, _>("tenant_firmware")?
            .map(|text| decode("tenant firmware settings", &text))
            .transpose()?
            .unwrap_or_default(),
        // Absent: a pod manager from before the setting, with no profile.
        firmware_profile: r
            .try_get::<Option<String>, _>("firmware_profile")?
            .map(|text| decode("firmware profile", &text))
            .transpose()?
            .unwrap_or_default(),
        status: r.try_get::<String, _>("status")?.parse()?,
        status_message: r.try_get("status_message")?,
        last_probe_at: moment_opt(r, "last_probe_at")?,
        redfish_link: r.try_get("redfish_link")?,
        created_at: moment(r, "created_at")?,
        updated_at: moment(r, "updated_at")?,
    })
}

/// Binds what the admin sets of a pod manager, `uuid` to `network_config_owner` in the order of
/// `COLUMNS`, to the next parameters of `q`.
fn bind_settings<'q>(
    q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    pm: &'q PodManagerRow,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    q.bind(pm.uuid.as_str())
        .bind(&pm.name)
        .bind(&pm.url)
        .bind(&pm.auth_sealed)
        .bind(&pm.description)
        .bind(&pm.location)
        .bind(i64::from(pm.tls_verify))
        .bind(&pm.tls_ca_bundle)
        .bind(json(&pm.driver))
        .bind(json(&pm.ipam))
        .bind(pm.renderer.as_ref().map(json))
        .bind(pm.network_config_owner.as_str())
}

/// Which unique column a conflicting write collided with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodManagerConflict {
    Name,
    Url,
}

impl Datastore {
    /// The column another pod manager (not `except`) already holds this value in.
    pub async fn pod_manager_conflict(
        &self,
        name: &str,
        url: &str,
        except: Option<&PodManagerId>,
    ) -> Result<Option<PodManagerConflict>, StoreError> {
        let except = except.map_or("", PodManagerId::as_str);
        let r = sqlx::query(
            "SELECT name, url FROM pod_managers WHERE (name = $1 OR url = $2) AND uuid <> $3 LIMIT 1",
        )
        .bind(name)
        .bind(url)
        .bind(except)
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        Ok(match r {
            None => None,
            Some(r) if r.try_get::<String, _>("name")? == name => Some(PodManagerConflict::Name),
            Some(_) => Some(PodManagerConflict::Url),
        })
    }

    pub async fn pod_manager_create(&self, pm: &PodManagerRow) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO pod_managers ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)"
        );
        bind_settings(sqlx::query(&sql), pm)
            .bind(pm.status.as_str())
            .bind(&pm.status_message)
            .bind(pm.last_probe_at.map(|t| t.to_string()))
            .bind(&pm.redfish_link)
            .bind(pm.created_at.to_string())
            .bind(pm.updated_at.to_string())
            .bind(&pm.tls_pinned_sha256)
            .bind(pm.service_limit)
            .bind(pm.site_limit)
            .bind(&pm.preprovisioning_image)
            .bind(json(&pm.deploy))
            .bind(pm.request_limit)
            .bind(json(&pm.tenant_firmware))
            .bind(json(&pm.firmware_profile))
            .bind(json(&pm.power))
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// Writes the admin-settable fields of `pm` (not its status).
    pub async fn pod_manager_update(&self, pm: &PodManagerRow) -> Result<bool, StoreError> {
        let done = bind_settings(
            sqlx::query(
                "UPDATE pod_managers SET name = $2, url = $3, auth_sealed = $4, description = $5, \
             location = $6, tls_verify = $7, tls_ca_bundle = $8, driver = $9, ipam = $10, \
             renderer = $11, network_config_owner = $12, updated_at = $13, tls_pinned_sha256 = $14, \
             service_limit = $15, site_limit = $16, preprovisioning_image = $17, \
             deploy = $18, request_limit = $19, tenant_firmware = $20, firmware_profile = $21, \
             power = $22 WHERE uuid = $1",
            ),
            pm,
        )
        .bind(pm.updated_at.to_string())
        .bind(&pm.tls_pinned_sha256)
        .bind(pm.service_limit)
        .bind(pm.site_limit)
        .bind(&pm.preprovisioning_image)
        .bind(json(&pm.deploy))
        .bind(pm.request_limit)
        .bind(json(&pm.tenant_firmware))
        .bind(json(&pm.firmware_profile))
        .bind(json(&pm.power))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn pod_manager_get(
        &self,
        uuid: &PodManagerId,
    ) -> Result<Option<PodManagerRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM pod_managers WHERE uuid = $1"
        ))
        .bind(uuid.as_str())
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(row).transpose()
    }

    pub async fn pod_manager_list(
        &self,
        filter: &PodManagerFilter,
        page: &Page,
    ) -> Result<Paged<PodManagerRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM pod_managers \
             WHERE ($1 = '' OR name = $1) AND ($2 = '' OR location = $2) AND ($3 = '' OR status = $3) \
             AND uuid > $4 ORDER BY uuid LIMIT $5"
        ))
        .bind(filter.name.as_deref().unwrap_or(""))
        .bind(filter.location.as_deref().unwrap_or(""))
        .bind(filter.status.as_deref().unwrap_or(""))
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |pm| pm.uuid.to_string()))
    }

    /// Every pod manager's uuid, for the background tasks.
    pub async fn pod_manager_uuids(&self) -> Result<Vec<PodManagerId>, StoreError> {
        let rows = sqlx::query("SELECT uuid FROM pod_managers ORDER BY uuid")
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| Ok(r.try_get::<String, _>("uuid")?.into()))
            .collect()
    }

    /// Deletes a pod manager and its hosts, unless one of them is claimed: then nothing is
    /// deleted and the number of claimed hosts is returned.
    pub async fn pod_manager_delete(
        &self,
        uuid: &PodManagerId,
    ) -> Result<Result<bool, i64>, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let claimed: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM hosts WHERE pod_manager = $1 AND claim_id IS NOT NULL",
        )
        .bind(uuid.as_str())
        .fetch_one(&mut *tx)
        .await?
        .try_get("n")?;
        if claimed > 0 {
            return Ok(Err(claimed));
        }
        // Children first: SQLite enforces foreign keys only where the connection enabled them.
        for sql in [
            "DELETE FROM host_labels WHERE host_id IN (SELECT id FROM hosts WHERE pod_manager = $1)",
            "DELETE FROM operations WHERE pod_manager = $1",
            "DELETE FROM grants WHERE pod_manager = $1",
            "DELETE FROM hosts WHERE pod_manager = $1",
            "DELETE FROM pod_manager_status_history WHERE pod_manager = $1",
        ] {
            sqlx::query(sql)
                .bind(uuid.as_str())
                .execute(&mut *tx)
                .await?;
        }
        let done = sqlx::query("DELETE FROM pod_managers WHERE uuid = $1")
            .bind(uuid.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Ok(done.rows_affected() == 1))
    }

    /// Records a probe. A change of status is also appended to the history.
    pub async fn pod_manager_set_status(
        &self,
        uuid: &PodManagerId,
        status: PodManagerStatus,
        message: Option<&str>,
        redfish_link: Option<&str>,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let previous: Option<String> =
            sqlx::query("SELECT status FROM pod_managers WHERE uuid = $1")
                .bind(uuid.as_str())
                .fetch_optional(&mut *tx)
                .await?
                .map(|r| r.try_get("status"))
                .transpose()?;
        let Some(previous) = previous else {
            return Ok(());
        };
        sqlx::query(
            "UPDATE pod_managers SET status = $2, status_message = $3, last_probe_at = $4, \
             redfish_link = COALESCE($5, redfish_link) WHERE uuid = $1",
        )
        .bind(uuid.as_str())
        .bind(status.as_str())
        .bind(message)
        .bind(at.to_string())
        .bind(redfish_link)
        .execute(&mut *tx)
        .await?;
        if previous != status.as_str() {
            sqlx::query(
                "INSERT INTO pod_manager_status_history (id, pod_manager, status, message, at) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(super::new_id())
            .bind(uuid.as_str())
            .bind(status.as_str())
            .bind(message)
            .bind(at.to_string())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Status changes, newest first.
    pub async fn pod_manager_status_history(
        &self,
        uuid: &PodManagerId,
    ) -> Result<Vec<StatusChange>, StoreError> {
        let rows = sqlx::query(
            "SELECT status, message, at FROM pod_manager_status_history WHERE pod_manager = $1 \
             ORDER BY at DESC, id DESC LIMIT 1000",
        )
        .bind(uuid.as_str())
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(StatusChange {
                    status: r.try_get::<String, _>("status")?.parse()?,
                    message: r.try_get("message")?,
                    at: moment(r, "at")?,
                })
            })
            .collect()
    }
}
