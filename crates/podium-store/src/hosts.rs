//! Stored hosts (the machines behind a pod manager) and their labels.

use podium_types::Timestamp;
use podium_types::{ChassisId, ClaimId, HostId, PodManagerId, SyncSummary};
use std::collections::BTreeMap;
use std::sync::LazyLock;

use podium_types::{BootSettings, HostErrorKind, HostKind, HostState, MediaSlot, Nic, PowerState};
use sqlx::Row;

use super::{Datastore, StoreError, json};
use podium_types::requests::RootDeviceHints;
use podium_types::{HostFilter, Page, Paged};

/// A host as the store reads and writes it. Its NICs, media slots and boot override are kept as
/// JSON text (the store's own format, which `host_with_mac` and the claim binding search); they
/// cross the store's edge decoded. (Read from JSON: a page of hosts comes as one JSON array.)
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub struct HostRow {
    pub id: HostId,
    pub pod_manager: PodManagerId,
    pub system_id: String,
    pub kind: HostKind,
    pub name: String,
    pub uuid: Option<String>,
    pub manufacturer: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub cpu_count: i64,
    pub memory_mib: i64,
    #[serde(deserialize_with = "json_text")]
    pub nics: Vec<Nic>,
    #[serde(deserialize_with = "json_text")]
    pub media_slots: Vec<MediaSlot>,
    #[serde(deserialize_with = "json_text_or_null")]
    pub boot: Option<BootSettings>,
    pub power_state: PowerState,
    pub state: HostState,
    pub claim_id: Option<ClaimId>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub labels: BTreeMap<String, String>,
    /// The host's own BMC, where it has one; `None` when its pod manager's endpoint serves it.
    pub bmc_url: Option<String>,
    pub bmc_auth_sealed: Option<String>,
    #[serde(deserialize_with = "int_as_bool")]
    pub bmc_tls_verify: bool,
    pub bmc_tls_ca_bundle: Option<String>,
    pub bmc_tls_pinned_sha256: Option<String>,
    /// The NIC the host boots from, as the admin set it; the first NIC when `None`.
    pub boot_mac: Option<String>,
    /// While `state` is `error`: which (`registration`, `inspection`, `provisioning`,
    /// `deprovisioning`, `power_management`), why, since when, and the state it interrupted.
    pub error_type: Option<HostErrorKind>,
    pub error_message: Option<String>,
    pub error_at: Option<Timestamp>,
    pub error_from: Option<HostState>,
    /// While `state` is `missing`: the state it returns to when it is seen again.
    pub missing_from: Option<HostState>,
    /// Set while the host is in maintenance (the admin's reason, possibly empty).
    pub maintenance_since: Option<Timestamp>,
    pub maintenance_reason: Option<String>,
    /// The disk a disk image is written to when the claim names none, as the admin set it.
    #[serde(default, deserialize_with = "json_text_or_null")]
    pub root_device: Option<RootDeviceHints>,
    /// The chassis the host stands in, outermost first, as the last sync of its pod manager's
    /// chassis found them (`Datastore::chassis_sync` writes it; nothing else does).
    #[serde(default, deserialize_with = "json_text_or_null")]
    pub chassis_path: Option<Vec<podium_types::views::ChassisRef>>,
    /// The BIOS's and the BMC's firmware versions as the last firmware read found them
    /// (`Datastore::host_set_firmware_versions` writes them; nothing else does).
    #[serde(default)]
    pub bios_version: Option<String>,
    #[serde(default)]
    pub bmc_version: Option<String>,
    /// The claim whose data the disks may hold: written for it (or booted by its tenant), not
    /// cleaned since (`Datastore::host_disks_written` and `host_cleaned` write it).
    #[serde(default)]
    pub disks_written_for: Option<ClaimId>,
    /// The last cleaning of the disks (`Datastore::host_cleaned` writes it; nothing else does).
    #[serde(default, deserialize_with = "json_text_or_null")]
    pub last_cleaning: Option<podium_types::CleaningRecord>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub last_seen_at: Timestamp,
}

/// A change of a host's state: from any of `from` to `to`, only while no claim holds it where
/// `unclaimed` says so (`lifecycle.rs` names them).
#[derive(Clone, Copy, Debug)]
pub struct Transition<'a> {
    pub from: &'a [HostState],
    pub to: HostState,
    pub unclaimed: bool,
}

/// The columns a sync writes.
const SYNC_COLUMNS: &str = "id, pod_manager, system_id, kind, name, uuid, manufacturer, model, serial, \
    cpu_count, memory_mib, nics, media_slots, boot, power_state, state, claim_id, created_at, \
    updated_at, last_seen_at";

const COLUMNS: &str = "id, pod_manager, system_id, kind, name, uuid, manufacturer, model, serial, \
    cpu_count, memory_mib, nics, media_slots, boot, power_state, state, claim_id, created_at, \
    updated_at, last_seen_at, bmc_url, bmc_auth_sealed, bmc_tls_verify, bmc_tls_ca_bundle, \
    bmc_tls_pinned_sha256, boot_mac, error_type, error_message, error_at, error_from, missing_from, \
    maintenance_since, maintenance_reason, root_device";

/// Hosts a sync writes per transaction.
const SYNC_BATCH: usize = 256;

impl Datastore {
    /// Makes the stored hosts of `pod_manager` match what a discovery reported, in batches of
    /// [`SYNC_BATCH`] hosts a transaction: new systems are added (`registering`, each with
    /// an operation `for_new` queued for it), known ones updated (a `missing` one returns to the state it had), and hosts
    /// not reported are marked `missing`, never deleted; a host in maintenance keeps its state.
    /// `hosts` carry their inventory; their `id` is used only for new rows. `discovered_at` is
    /// when the discovery began: a host changed since (a power action that finished meanwhile)
    /// keeps its newer power state, boot settings and media.
    pub async fn hosts_sync(
        &self,
        pod_manager: &PodManagerId,
        hosts: &[HostRow],
        discovered_at: Timestamp,
        now: Timestamp,
        for_new: &podium_types::OperationRequest,
    ) -> Result<SyncSummary, StoreError> {
        let mut added = 0;
        // A batch per transaction: the writer is given back between batches, so a site of
        // 50,000 systems delays another site's writes (its operations' leases) by one batch,
        // not by the whole sync. A sync stopped halfway is finished by the next one; hosts are
        // marked missing only after every batch, against `now`, which precedes them all. Two
        // syncs of one pod manager at once may both find a host new: only the one whose row was
        // written (its id is the one `RETURNING` answers) queues its `register`. A host's `last_seen_at` only
        // moves forward: a sync that began earlier but writes later must not make the later
        // sync's missing-mark take a host both saw.
        for batch in hosts.chunks(SYNC_BATCH) {
            let mut writer = self.writer().await?;
            let queues = writer.queues(self);
            let mut tx = writer.begin().await?;
            for h in batch {
                let row = upsert_discovered(pod_manager, h, now, discovered_at)
                    .fetch_one(&mut *tx)
                    .await?;
                // The row keeps the id of whoever inserted it (`h.id` is fresh for each sync):
                // the host is new, and this sync's, only if the row answers with `h.id`. Another
                // sync of the pod manager at the same time may have added it first, with its own
                // id and `register`.
                let id: String = row.try_get("id")?;
                if id == h.id.as_str() {
                    let queued =
                        super::OperationRow::queued(for_new.clone(), pod_manager, Some(&h.id));
                    super::operations::insert(&queued, queues)
                        .execute(&mut *tx)
                        .await?;
                    added += 1;
                }
            }
            tx.commit().await?;
        }
        let missing = sqlx::query(
            "UPDATE hosts SET missing_from = state, state = 'missing', updated_at = $2 \
             WHERE pod_manager = $1 AND last_seen_at < $2 AND state <> 'missing' AND bmc_url IS NULL \
             AND maintenance_since IS NULL",
        )
        .bind(pod_manager.as_str())
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected();
        Ok(SyncSummary {
            seen: hosts.len(),
            added,
            missing: missing as usize,
        })
    }

    /// Adds a host that has its own BMC, with the operation that registers it, in one
    /// transaction. A `Conflict` if its pod manager already has a host with this system id at
    /// this BMC.
    pub async fn host_create(
        &self,
        h: &HostRow,
        register: &super::OperationRow,
    ) -> Result<(), StoreError> {
        let mut writer = self.writer().await?;
        let queues = writer.queues(self);
        let mut tx = writer.begin().await?;
        bind_inventory(
            sqlx::query(&format!(
                "INSERT INTO hosts ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34)"
            ))
            .bind(h.id.as_str())
            .bind(h.pod_manager.as_str())
            .bind(&h.system_id),
            h,
        )
        .bind(h.state.as_str())
        .bind(h.claim_id.as_ref().map(|v| v.as_str()))
        .bind(h.created_at.to_string())
        .bind(h.updated_at.to_string())
        .bind(h.last_seen_at.to_string())
        .bind(&h.bmc_url)
        .bind(&h.bmc_auth_sealed)
        .bind(i64::from(h.bmc_tls_verify))
        .bind(&h.bmc_tls_ca_bundle)
        .bind(&h.bmc_tls_pinned_sha256)
        .bind(&h.boot_mac)
        .bind(h.error_type.map(HostErrorKind::as_str))
        .bind(&h.error_message)
        .bind(h.error_at.map(|t| t.to_string()))
        .bind(h.error_from.map(HostState::as_str))
        .bind(h.missing_from.map(HostState::as_str))
        .bind(h.maintenance_since.map(|t| t.to_string()))
        .bind(&h.maintenance_reason)
        .bind(h.root_device.as_ref().map(json))
        .execute(&mut *tx)
        .await?;
        super::operations::insert(register, queues)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Hosts of a pod manager that have their own BMC and no operation queued or running (what
    /// it will do reads or changes the host anyway).
    pub async fn hosts_with_bmc_idle(
        &self,
        pod_manager: &PodManagerId,
    ) -> Result<Vec<HostRow>, StoreError> {
        let docs: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT {} AS doc FROM hosts WHERE pod_manager = $1 AND bmc_url IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.host_id = hosts.id \
                 AND o.status IN ('queued', 'running')) ORDER BY id",
            self.host_doc()
        ))
        .bind(pod_manager.as_str())
        .fetch_all(&mut *self.reader().await?)
        .await?;
        docs.iter().map(String::as_str).map(host_from_doc).collect()
    }

    /// How many hosts have their own BMC (of online pod managers or not).
    pub async fn hosts_with_bmc_count(&self) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM hosts WHERE bmc_url IS NOT NULL")
            .fetch_one(&mut *self.reader().await?)
            .await?;
        Ok(n as u64)
    }

    /// Takes up to `limit` hosts with their own BMC whose periodic refresh is due (never begun,
    /// or begun before `due_before`), oldest turn first, skipping hosts with an operation queued
    /// or running and hosts of pod managers that are not `online`; marks them begun at `now`.
    /// Two processes never take one host: the mark is re-checked on the row it writes.
    pub async fn hosts_refresh_take(
        &self,
        due_before: Timestamp,
        limit: u64,
        now: Timestamp,
    ) -> Result<Vec<HostRow>, StoreError> {
        let due = "bmc_url IS NOT NULL AND (refreshed_at IS NULL OR refreshed_at < $2)";
        let taken: Vec<String> = sqlx::query_scalar(&format!(
            "UPDATE hosts SET refreshed_at = $1 WHERE {due} AND id IN (\
                 SELECT h.id FROM hosts h JOIN pod_managers p ON p.uuid = h.pod_manager \
                 WHERE h.bmc_url IS NOT NULL AND (h.refreshed_at IS NULL OR h.refreshed_at < $2) \
                 AND p.status = 'online' \
                 AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.host_id = h.id \
                     AND o.status IN ('queued', 'running')) \
                 ORDER BY COALESCE(h.refreshed_at, ''), h.id LIMIT $3) \
             RETURNING id"
        ))
        .bind(now.to_string())
        .bind(due_before.to_string())
        .bind(limit as i64)
        .fetch_all(&mut *self.writer().await?)
        .await?;
        let mut hosts = Vec::with_capacity(taken.len());
        for ids in taken.chunks(ID_LIST_CHUNK) {
            let sql = format!(
                "SELECT {} AS doc FROM hosts WHERE id IN ({})",
                self.host_doc(),
                placeholders(1, ids.len())
            );
            let mut q = sqlx::query_scalar::<_, String>(&sql);
            for id in ids {
                q = q.bind(id);
            }
            for doc in q.fetch_all(&mut *self.reader().await?).await? {
                hosts.push(host_from_doc(&doc)?);
            }
        }
        Ok(hosts)
    }

    /// Records that the BMCs of `ids` answered at `now` (a few statements, whatever the
    /// number of hosts).
    pub async fn hosts_seen(&self, ids: &[HostId], now: Timestamp) -> Result<(), StoreError> {
        for ids in ids.chunks(ID_LIST_CHUNK) {
            let sql = format!(
                "UPDATE hosts SET last_seen_at = $1 WHERE id IN ({}) AND last_seen_at < $1",
                placeholders(2, ids.len())
            );
            let mut q = sqlx::query(&sql).bind(now.to_string());
            for id in ids {
                q = q.bind(id.as_str());
            }
            q.execute(&mut *self.writer().await?).await?;
        }
        Ok(())
    }

    /// Updates the inventory of one host from what its BMC reported (a `missing` host returns to
    /// the state it had, unless it is in maintenance), only where something changed: a refresh
    /// of an unchanged fleet writes nothing here (`hosts_seen` records that it answered).
    /// Whether it wrote.
    pub async fn host_refresh(
        &self,
        id: &HostId,
        h: &HostRow,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let written = refresh(id, h, now)
            .execute(&mut *self.writer().await?)
            .await?
            .rows_affected();
        Ok(written > 0)
    }

    /// Takes one host's power reading for a reader that found it older than `due_before`: marks
    /// its turn taken (as [`Datastore::hosts_refresh_take`] does), unless it was seen or taken
    /// since, an operation of it is queued or running (which reads it back itself), or its pod
    /// manager is not online. Whether the caller reads it; of several processes, one does.
    pub async fn host_refresh_take_one(
        &self,
        id: &HostId,
        due_before: Timestamp,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let taken = sqlx::query(
            "UPDATE hosts SET refreshed_at = $1 WHERE id = $2 AND last_seen_at < $3 \
             AND (refreshed_at IS NULL OR refreshed_at < $3) \
             AND EXISTS (SELECT 1 FROM pod_managers p WHERE p.uuid = hosts.pod_manager \
                 AND p.status = 'online') \
             AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.host_id = hosts.id \
                 AND o.status IN ('queued', 'running'))",
        )
        .bind(now.to_string())
        .bind(id.as_str())
        .bind(due_before.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected();
        Ok(taken == 1)
    }

    /// Records a host's power state as its BMC reported it in a read begun at `read_from`, only
    /// where it changed (or the host was `missing`: it returns to the state it had, unless in
    /// maintenance), and never over a write made since the read began (an operation that acted
    /// meanwhile knows better). Whether it wrote.
    pub async fn host_power_read(
        &self,
        id: &HostId,
        power_state: PowerState,
        read_from: Timestamp,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let written = sqlx::query(
            "UPDATE hosts SET power_state = $2, \
             state = CASE WHEN state = 'missing' AND maintenance_since IS NULL \
                 THEN COALESCE(missing_from, 'available') ELSE state END, \
             missing_from = CASE WHEN state = 'missing' AND maintenance_since IS NULL \
                 THEN NULL ELSE missing_from END, \
             updated_at = $4, last_seen_at = $4 \
             WHERE id = $1 AND updated_at <= $3 \
             AND (state = 'missing' OR power_state IS DISTINCT FROM $2)",
        )
        .bind(id.as_str())
        .bind(power_state.as_str())
        .bind(read_from.to_string())
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected();
        Ok(written > 0)
    }

    /// Marks a host `missing` (its BMC no longer reports it), unless it is in maintenance.
    pub async fn host_set_missing(&self, id: &HostId, now: Timestamp) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE hosts SET missing_from = state, state = 'missing', updated_at = $2 \
             WHERE id = $1 AND state <> 'missing' AND maintenance_since IS NULL",
        )
        .bind(id.as_str())
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// Sets (or clears) the NIC a host boots from. `false` when there is no such host.
    pub async fn host_set_boot_mac(
        &self,
        id: &HostId,
        boot_mac: Option<&str>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE hosts SET boot_mac = $2, updated_at = $3 WHERE id = $1")
            .bind(id.as_str())
            .bind(boot_mac)
            .bind(now.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Sets (or, `None`, removes) the disk a disk image is written to when a claim names none.
    pub async fn host_set_root_device(
        &self,
        id: &HostId,
        hints: Option<&RootDeviceHints>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE hosts SET root_device = $2, updated_at = $3 WHERE id = $1")
            .bind(id.as_str())
            .bind(hints.map(json))
            .bind(now.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Keeps the BIOS's and the BMC's firmware versions a read of the host's firmware found
    /// (not a change of the host: its `updated_at` stays); nothing is written where they are
    /// the ones kept. Whether they changed.
    pub async fn host_set_firmware_versions(
        &self,
        id: &HostId,
        bios: Option<&str>,
        bmc: Option<&str>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE hosts SET bios_version = $2, bmc_version = $3 WHERE id = $1 \
             AND (bios_version IS DISTINCT FROM $2 OR bmc_version IS DISTINCT FROM $3)",
        )
        .bind(id.as_str())
        .bind(bios)
        .bind(bmc)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// How many hosts of each kind show each state (`maintenance` over any) with each power
    /// state: `(kind, state, power state, count)`.
    pub async fn host_counts(&self) -> Result<Vec<(String, String, String, i64)>, StoreError> {
        sqlx::query(
            "SELECT kind, CASE WHEN maintenance_since IS NULL THEN state ELSE 'maintenance' END \
             AS shown, power_state, COUNT(*) AS n FROM hosts GROUP BY 1, 2, 3",
        )
        .fetch_all(&mut *self.reader().await?)
        .await?
        .iter()
        .map(|r| {
            Ok((
                r.try_get("kind")?,
                r.try_get("shown")?,
                r.try_get("power_state")?,
                r.try_get("n")?,
            ))
        })
        .collect()
    }

    /// A host with its labels, in one round trip: one row and one column, the host as a JSON
    /// document (the hand-over of each row and value from SQLite's thread is what a read costs).
    pub async fn host_get(&self, id: &HostId) -> Result<Option<HostRow>, StoreError> {
        let doc: Option<String> = sqlx::query_scalar(&format!(
            "SELECT {} AS doc FROM hosts WHERE id = $1",
            self.host_doc()
        ))
        .bind(id.as_str())
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        doc.as_deref().map(host_from_doc).transpose()
    }

    /// A host and its labels as one JSON document (text), the shape `HostRow` deserializes.
    /// Built once per backend: it is on the path of every host read.
    fn host_doc(&self) -> &'static str {
        static SQLITE: LazyLock<String> = LazyLock::new(|| {
            host_doc_sql(
                "json_object",
                "json((SELECT json_group_object(l.key, l.value) FROM host_labels l WHERE l.host_id = hosts.id))",
                "",
            )
        });
        static POSTGRES: LazyLock<String> = LazyLock::new(|| {
            host_doc_sql(
                "json_build_object",
                "(SELECT json_object_agg(l.key, l.value) FROM host_labels l WHERE l.host_id = hosts.id)",
                "::text",
            )
        });
        match self.backend {
            super::Backend::Sqlite => &SQLITE,
            super::Backend::Postgres => &POSTGRES,
        }
    }

    pub async fn host_list(
        &self,
        filter: &HostFilter,
        page: &Page,
    ) -> Result<Paged<HostRow>, StoreError> {
        // One row, the page as a JSON array (with each host's labels): a page costs one round
        // trip, where a row each would cost one hand-over from SQLite's thread each.
        let array = match self.backend {
            super::Backend::Sqlite => {
                "SELECT COALESCE(json_group_array(json(doc)), '[]') AS page FROM"
            }
            super::Backend::Postgres => {
                "SELECT COALESCE(json_agg(doc::json), '[]')::text AS page FROM"
            }
        };
        let mut sql = format!(
            "SELECT {} AS doc FROM hosts WHERE ($1 = '' OR pod_manager = $1) \
             AND ($2 = '' OR (CASE WHEN maintenance_since IS NULL THEN state ELSE 'maintenance' END) = $2) \
             AND ($3 = '' OR power_state = $3) AND id > $4 AND ($6 = '' OR name = $6) \
             AND ($7 = '' OR chassis IN ({}))",
            self.host_doc(),
            super::chassis::within_sql(7)
        );
        let mut n = 8;
        for _ in &filter.labels {
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM host_labels l WHERE l.host_id = hosts.id AND l.key = ${} AND l.value = ${})",
                n,
                n + 1
            ));
            n += 2;
        }
        sql.push_str(" ORDER BY id LIMIT $5");
        let sql = format!("{array} ({sql}) AS page_rows");
        let mut query = sqlx::query(&sql)
            .bind(filter.pod_manager.as_ref().map_or("", PodManagerId::as_str))
            .bind(filter.state.as_deref().unwrap_or(""))
            .bind(filter.power_state.as_deref().unwrap_or(""))
            .bind(page.cursor.as_deref().unwrap_or(""))
            .bind(i64::from(page.limit) + 1)
            .bind(filter.name.as_deref().unwrap_or(""))
            .bind(filter.chassis.as_ref().map_or("", ChassisId::as_str));
        for (k, v) in &filter.labels {
            query = query.bind(k).bind(v);
        }
        let page_json: String = query
            .fetch_one(&mut *self.reader().await?)
            .await?
            .try_get("page")?;
        let mut items: Vec<HostRow> = serde_json::from_str(&page_json)
            .map_err(|e| StoreError::Corrupt(format!("a page of hosts: {e}")))?;
        items.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(super::paged(items, page.limit, |h| h.id.to_string()))
    }

    /// Replaces a host's labels. False if there is no such host.
    pub async fn host_set_labels(
        &self,
        id: &HostId,
        labels: &BTreeMap<String, String>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let found = sqlx::query("UPDATE hosts SET updated_at = $2 WHERE id = $1")
            .bind(id.as_str())
            .bind(now.to_string())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if found == 0 {
            return Ok(false);
        }
        sqlx::query("DELETE FROM host_labels WHERE host_id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        for (k, v) in labels {
            sqlx::query("INSERT INTO host_labels (host_id, key, value) VALUES ($1, $2, $3)")
                .bind(id.as_str())
                .bind(k)
                .bind(v)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Binds a host to a claim, or frees it (`None`).
    pub async fn host_set_claim(
        &self,
        id: &HostId,
        claim_id: Option<&ClaimId>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE hosts SET claim_id = $2, updated_at = $3 WHERE id = $1")
            .bind(id.as_str())
            .bind(claim_id.map(|v| v.as_str()))
            .bind(now.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Moves a host from one of the states `from` to `to` (clearing any error): `false` when it
    /// is in none of them. The state under a maintenance changes too.
    pub async fn host_transition(
        &self,
        id: &HostId,
        t: Transition<'_>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let moved = transition(&mut tx, id, t.from, t.to, t.unclaimed, now).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// Moves a host as `host_transition` does and, only if it moved, stores the operation that
    /// carries the new state out, in one transaction: a crash leaves both or neither.
    pub async fn host_transition_queue(
        &self,
        id: &HostId,
        t: Transition<'_>,
        op: &super::OperationRow,
    ) -> Result<bool, StoreError> {
        let mut writer = self.writer().await?;
        let queues = writer.queues(self);
        let mut tx = writer.begin().await?;
        let moved = transition_queue(&mut tx, id, t, op, queues).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// A registration's end: records the power state its BMC reported and moves the host as
    /// `host_transition_queue` does, with the inspection that follows, in one transaction.
    /// Whether it moved (the power state is recorded either way).
    pub async fn host_registered(
        &self,
        id: &HostId,
        power_state: PowerState,
        t: Transition<'_>,
        inspect: &super::OperationRow,
    ) -> Result<bool, StoreError> {
        let mut writer = self.writer().await?;
        let queues = writer.queues(self);
        let mut tx = writer.begin().await?;
        sqlx::query("UPDATE hosts SET power_state = $2, updated_at = $3 WHERE id = $1")
            .bind(id.as_str())
            .bind(power_state.as_str())
            .bind(inspect.created_at.to_string())
            .execute(&mut *tx)
            .await?;
        let moved = transition_queue(&mut tx, id, t, inspect, queues).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// An inspection's end: records the inventory as `host_refresh` does (or only that the BMC
    /// answered, where nothing changed) and moves the host as `host_transition` does, in one
    /// transaction. Whether it moved.
    pub async fn host_inspected(
        &self,
        id: &HostId,
        h: &HostRow,
        t: Transition<'_>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        if refresh(id, h, now).execute(&mut *tx).await?.rows_affected() == 0 {
            sqlx::query("UPDATE hosts SET last_seen_at = $1 WHERE id = $2 AND last_seen_at < $1")
                .bind(now.to_string())
                .bind(id.as_str())
                .execute(&mut *tx)
                .await?;
        }
        let moved = transition(&mut tx, id, t.from, t.to, t.unclaimed, now).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// Replaces the sealed credentials of a host's own BMC and moves it as `host_transition`
    /// does, with the operation that registers it again, in one transaction; `false` (nothing
    /// changed) when it is in none of the states `from`.
    pub async fn host_set_bmc_auth(
        &self,
        id: &HostId,
        sealed: &str,
        t: Transition<'_>,
        register: &super::OperationRow,
    ) -> Result<bool, StoreError> {
        let mut writer = self.writer().await?;
        let queues = writer.queues(self);
        let mut tx = writer.begin().await?;
        if !transition(&mut tx, id, t.from, t.to, t.unclaimed, register.created_at).await? {
            return Ok(false);
        }
        sqlx::query("UPDATE hosts SET bmc_auth_sealed = $2 WHERE id = $1")
            .bind(id.as_str())
            .bind(sealed)
            .execute(&mut *tx)
            .await?;
        super::operations::insert(register, queues)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Puts a host in `error` from one of the states `from`, saying which, why and what it
    /// interrupted; `false` when it is in none of them.
    pub async fn host_fail(
        &self,
        id: &HostId,
        from: &[HostState],
        error_type: HostErrorKind,
        message: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        // A host gone `missing` meanwhile returns to the error when it is seen again.
        let sql = format!(
            "UPDATE hosts SET \
             error_from = CASE WHEN state = 'missing' THEN missing_from ELSE state END, \
             missing_from = CASE WHEN state = 'missing' THEN 'error' ELSE missing_from END, \
             state = CASE WHEN state = 'missing' THEN state ELSE 'error' END, \
             error_type = $2, error_message = $3, error_at = $4, updated_at = $4 \
             WHERE id = $1 AND {} RETURNING id",
            in_states(5, from.len())
        );
        let mut q = sqlx::query_scalar::<_, String>(&sql)
            .bind(id.as_str())
            .bind(error_type.as_str())
            .bind(message)
            .bind(now.to_string());
        for f in from {
            q = q.bind(f.as_str());
        }
        Ok(q.fetch_optional(&mut *self.writer().await?)
            .await?
            .is_some())
    }

    /// Returns a host in a `power_management` error to the state the error interrupted (a
    /// power action went through).
    pub async fn host_recover_power(
        &self,
        id: &HostId,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        Ok(sqlx::query(
            "UPDATE hosts SET \
             state = CASE WHEN state = 'missing' THEN state ELSE COALESCE(error_from, 'available') END, \
             missing_from = CASE WHEN state = 'missing' THEN COALESCE(error_from, 'available') ELSE missing_from END, \
             error_type = NULL, error_message = NULL, error_at = NULL, error_from = NULL, updated_at = $2 \
             WHERE id = $1 AND error_type = 'power_management' \
             AND (state = 'error' OR (state = 'missing' AND missing_from = 'error'))",
        )
        .bind(id.as_str())
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?
        .rows_affected()
            == 1)
    }

    /// Puts a host in maintenance with `reason` (again: the reason changes, not the time), or
    /// ends it (`None`). `false` when there is no such host.
    pub async fn host_set_maintenance(
        &self,
        id: &HostId,
        reason: Option<&str>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE hosts SET maintenance_reason = $2, \
             maintenance_since = CASE WHEN $3 = '' THEN NULL ELSE COALESCE(maintenance_since, $3) END, \
             updated_at = $4 WHERE id = $1",
        )
        .bind(id.as_str())
        .bind(reason)
        .bind(if reason.is_some() { now.to_string() } else { String::new() })
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn host_set_power(
        &self,
        id: &HostId,
        power_state: PowerState,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE hosts SET power_state = $2, updated_at = $3 WHERE id = $1")
            .bind(id.as_str())
            .bind(power_state.as_str())
            .bind(now.to_string())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// A host other than the system `system_id` of `pod_manager` with a NIC of this MAC
    /// (lower-case, colon-separated): its id and name.
    pub async fn host_with_mac(
        &self,
        mac: &str,
        pod_manager: &PodManagerId,
        system_id: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        let r = sqlx::query(
            "SELECT h.id, h.name FROM host_nics n JOIN hosts h ON h.id = n.host_id \
             WHERE n.mac = $1 AND NOT (h.pod_manager = $2 AND h.system_id = $3) LIMIT 1",
        )
        .bind(mac)
        .bind(pod_manager.as_str())
        .bind(system_id)
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.map(|r| Ok((r.try_get("id")?, r.try_get("name")?)))
            .transpose()
    }

    /// Records what a host's BMC reported after an action: its power state, media slots and
    /// boot override.
    pub async fn host_set_observed(
        &self,
        id: &HostId,
        h: &HostRow,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE hosts SET power_state = $2, media_slots = $3, boot = $4, updated_at = $5, \
             last_seen_at = $5 WHERE id = $1",
        )
        .bind(id.as_str())
        .bind(h.power_state.as_str())
        .bind(json(&h.media_slots))
        .bind(h.boot.as_ref().map(json))
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }
}

/// Moves a host as `transition` does and, where it moved, queues `op` (the move dated when
/// `op` was made): the shared part of `host_transition_queue` and `host_registered`.
async fn transition_queue(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    id: &HostId,
    t: Transition<'_>,
    op: &super::OperationRow,
    queues: crate::Queues,
) -> Result<bool, StoreError> {
    let moved = transition(tx, id, t.from, t.to, t.unclaimed, op.created_at).await?;
    if moved {
        super::operations::insert(op, queues)
            .execute(&mut **tx)
            .await?;
    }
    Ok(moved)
}

/// `host_transition` inside a transaction. A host that went `missing` meanwhile moves
/// underneath: the state it returns to when it is seen again is the new one.
async fn transition(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    id: &HostId,
    from: &[HostState],
    to: HostState,
    unclaimed: bool,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let sql = format!(
        "UPDATE hosts SET state = CASE WHEN state = 'missing' THEN state ELSE $2 END, \
         missing_from = CASE WHEN state = 'missing' THEN $2 ELSE missing_from END, \
         error_type = NULL, error_message = NULL, error_at = NULL, error_from = NULL, updated_at = $3 \
         WHERE id = $1 AND {}{} RETURNING id",
        in_states(4, from.len()),
        if unclaimed {
            " AND claim_id IS NULL"
        } else {
            ""
        }
    );
    let mut q = sqlx::query_scalar::<_, String>(&sql)
        .bind(id.as_str())
        .bind(to.as_str())
        .bind(now.to_string());
    for f in from {
        q = q.bind(f.as_str());
    }
    Ok(q.fetch_optional(&mut **tx).await?.is_some())
}

fn host_doc_sql(object: &str, labels: &str, text: &str) -> String {
    let fields: Vec<String> = COLUMNS
        .split(',')
        .map(str::trim)
        .map(|c| format!("'{c}', {c}"))
        .collect();
    format!(
        "{object}({}, 'chassis_path', chassis_path, 'bios_version', bios_version, \
         'bmc_version', bmc_version, 'disks_written_for', disks_written_for, \
         'last_cleaning', last_cleaning, 'labels', {labels}){text}",
        fields.join(", ")
    )
}

/// A host read back as the document `Datastore::host_doc` builds.
fn host_from_doc(doc: &str) -> Result<HostRow, StoreError> {
    serde_json::from_str(doc).map_err(|e| StoreError::Corrupt(format!("a stored host: {e}")))
}

/// `Datastore::host_refresh`'s statement: the inventory written only where something changed.
fn refresh<'q>(
    id: &'q HostId,
    h: &'q HostRow,
    now: Timestamp,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    bind_inventory(
        sqlx::query(
                "UPDATE hosts SET kind = CASE WHEN kind = 'composed' AND $2 = 'system' THEN kind ELSE $2 END, name = $3, uuid = $4, manufacturer = $5, model = $6, serial = $7, \
                 cpu_count = $8, memory_mib = $9, nics = $10, media_slots = $11, boot = $12, power_state = $13, \
                 state = CASE WHEN state = 'missing' AND maintenance_since IS NULL \
                     THEN COALESCE(missing_from, 'available') ELSE state END, \
                 missing_from = CASE WHEN state = 'missing' AND maintenance_since IS NULL \
                     THEN NULL ELSE missing_from END, \
                 updated_at = $14, last_seen_at = $14 \
                 WHERE id = $1 AND (state = 'missing' OR kind IS DISTINCT FROM (CASE WHEN kind = 'composed' AND $2 = 'system' THEN kind ELSE $2 END) \
                     OR name IS DISTINCT FROM $3 OR uuid IS DISTINCT FROM $4 \
                     OR manufacturer IS DISTINCT FROM $5 OR model IS DISTINCT FROM $6 \
                     OR serial IS DISTINCT FROM $7 OR cpu_count IS DISTINCT FROM $8 \
                     OR memory_mib IS DISTINCT FROM $9 OR nics IS DISTINCT FROM $10 \
                     OR media_slots IS DISTINCT FROM $11 OR boot IS DISTINCT FROM $12 \
                     OR power_state IS DISTINCT FROM $13)",
            )
        .bind(id.as_str()),
        h,
    )
    .bind(now.to_string())
}

/// [`upsert_discovered`]'s statement.
static UPSERT_DISCOVERED: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT INTO hosts ({SYNC_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 'registering', NULL, $16, $16, $16) \
                 ON CONFLICT (pod_manager, system_id) DO UPDATE SET kind = CASE WHEN hosts.kind = 'composed' AND excluded.kind = 'system' THEN hosts.kind ELSE excluded.kind END, name = excluded.name, \
                 uuid = excluded.uuid, manufacturer = excluded.manufacturer, model = excluded.model, \
                 serial = excluded.serial, cpu_count = excluded.cpu_count, memory_mib = excluded.memory_mib, \
                 nics = excluded.nics, \
                 media_slots = CASE WHEN hosts.updated_at > $17 THEN hosts.media_slots ELSE excluded.media_slots END, \
                 boot = CASE WHEN hosts.updated_at > $17 THEN hosts.boot ELSE excluded.boot END, \
                 power_state = CASE WHEN hosts.updated_at > $17 THEN hosts.power_state ELSE excluded.power_state END, \
                 state = CASE WHEN hosts.state = 'missing' AND hosts.maintenance_since IS NULL \
                     THEN COALESCE(hosts.missing_from, 'available') ELSE hosts.state END, \
                 missing_from = CASE WHEN hosts.state = 'missing' AND hosts.maintenance_since IS NULL \
                     THEN NULL ELSE hosts.missing_from END, \
                 updated_at = excluded.updated_at, \
                 last_seen_at = CASE WHEN hosts.last_seen_at > excluded.last_seen_at \
                     THEN hosts.last_seen_at ELSE excluded.last_seen_at END \
                 RETURNING id"
    )
});

/// The upsert of a host a discovery reported (`h`, its `id` used only if it is new), seen at
/// `now` by a discovery begun at `discovered_at`; it answers the row's `id`, which is `h.id` only
/// if this statement added it. What the sync does to each host, in its words above.
pub(super) fn upsert_discovered<'q>(
    pod_manager: &'q PodManagerId,
    h: &'q HostRow,
    now: Timestamp,
    discovered_at: Timestamp,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    bind_inventory(
        sqlx::query(UPSERT_DISCOVERED.as_str())
            .bind(h.id.as_str())
            .bind(pod_manager.as_str())
            .bind(&h.system_id),
        h,
    )
    .bind(now.to_string())
    .bind(discovered_at.to_string())
}

/// Binds what a driver reports of a system, `kind` to `power_state` in the order of
/// `COLUMNS`, to the next parameters of `q`.
fn bind_inventory<'q>(
    q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    h: &'q HostRow,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    q.bind(h.kind.as_str())
        .bind(&h.name)
        .bind(&h.uuid)
        .bind(&h.manufacturer)
        .bind(&h.model)
        .bind(&h.serial)
        .bind(h.cpu_count)
        .bind(h.memory_mib)
        .bind(json(&h.nics))
        .bind(json(&h.media_slots))
        .bind(h.boot.as_ref().map(json))
        .bind(h.power_state.as_str())
}

/// Ids bound into one `IN (...)` list (SQLite allows 32,766 parameters, PostgreSQL 65,535).
const ID_LIST_CHUNK: usize = 500;

/// `$first, $first+1, ...`: `count` numbered parameters.
fn placeholders(first: usize, count: usize) -> String {
    let list: Vec<String> = (first..first + count).map(|i| format!("${i}")).collect();
    list.join(", ")
}

/// The condition that a host is in one of `count` states bound from `$first` on, or went
/// `missing` from one of them.
fn in_states(first: usize, count: usize) -> String {
    let list = placeholders(first, count);
    format!("(state IN ({list}) OR (state = 'missing' AND missing_from IN ({list})))")
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    use serde::Deserialize;
    Ok(Option::<BTreeMap<String, String>>::deserialize(d)?.unwrap_or_default())
}

/// A stored JSON text column (`nics`, `media_slots`), decoded.
fn json_text<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> Result<T, D::Error> {
    use serde::Deserialize;
    let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
    serde_json::from_str(&text).map_err(serde::de::Error::custom)
}

/// A stored JSON text column that may be NULL (`boot`), decoded.
fn json_text_or_null<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    use serde::Deserialize;
    match Option::<std::borrow::Cow<'de, str>>::deserialize(d)? {
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(serde::de::Error::custom),
        None => Ok(None),
    }
}

fn int_as_bool<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    use serde::Deserialize;
    Ok(i64::deserialize(d)? != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-12-01T00:00:00Z".parse().unwrap()
    }

    /// A datastore on a fresh SQLite file with one pod manager and one host in `state`.
    async fn one_host(state: &str) -> (tempfile::TempDir, Datastore) {
        let dir = tempfile::tempdir().unwrap();
        let store = Datastore::open_sqlite(dir.path()).await.unwrap();
        sqlx::query(
            "INSERT INTO pod_managers (uuid, name, url, description, location, tls_verify, driver, \
             ipam, network_config_owner, status, created_at, updated_at) \
             VALUES ('pm', 'site', 'http://bmc', '', '', 1, '{}', '{}', 'admin', 'online', $1, $1)",
        )
        .bind(now().to_string())
        .execute(&mut *store.writer().await.unwrap())
        .await
        .unwrap();
        let host = HostRow {
            id: "h".into(),
            pod_manager: "pm".into(),
            system_id: "/redfish/v1/Systems/1".into(),
            kind: HostKind::System,
            power_state: PowerState::Off,
            state: state.parse().unwrap(),
            created_at: now(),
            updated_at: now(),
            last_seen_at: now(),
            ..HostRow::default()
        };
        let register = crate::OperationRow::queued(
            podium_types::OperationRequest::Register,
            &"pm".into(),
            Some(&host_id()),
        );
        store.host_create(&host, &register).await.unwrap();
        (dir, store)
    }

    fn host_id() -> HostId {
        "h".into()
    }

    async fn state(store: &Datastore) -> HostRow {
        store.host_get(&host_id()).await.unwrap().unwrap()
    }

    const REGISTERED: Transition<'static> = Transition {
        from: &[HostState::Registering],
        to: HostState::Inspecting,
        unclaimed: false,
    };

    #[tokio::test]
    async fn a_host_gone_missing_meanwhile_moves_underneath_and_comes_back_where_it_got() {
        let (_dir, store) = one_host("registering").await;
        store.host_set_missing(&host_id(), now()).await.unwrap();
        // Its registration ends while it is missing: it stays missing, and returns inspecting.
        assert!(
            store
                .host_transition(&host_id(), REGISTERED, now())
                .await
                .unwrap()
        );
        let h = state(&store).await;
        assert_eq!(
            (h.state, h.missing_from),
            (HostState::Missing, Some(HostState::Inspecting))
        );
        // Its inspection fails meanwhile: it returns in error, saying what it interrupted.
        assert!(
            store
                .host_fail(
                    &host_id(),
                    &[HostState::Inspecting],
                    HostErrorKind::Inspection,
                    "BMC gone",
                    now()
                )
                .await
                .unwrap()
        );
        let h = state(&store).await;
        assert_eq!(h.missing_from, Some(HostState::Error));
        assert_eq!(h.error_from, Some(HostState::Inspecting));
        // Seen again.
        let seen = HostRow {
            last_seen_at: now(),
            ..h.clone()
        };
        store.host_refresh(&host_id(), &seen, now()).await.unwrap();
        let h = state(&store).await;
        assert_eq!(h.state, HostState::Error);
        assert_eq!(h.error_type, Some(HostErrorKind::Inspection));
        assert_eq!(h.missing_from, None);
    }

    #[tokio::test]
    async fn a_sync_that_writes_late_never_moves_last_seen_back() {
        let (_dir, store) = one_host("available").await;
        let seen = state(&store).await;
        let register = podium_types::OperationRequest::Register;
        let later: Timestamp = "2026-12-01T00:00:02.000000Z".parse().unwrap();
        let earlier: Timestamp = "2026-12-01T00:00:01.000000Z".parse().unwrap();
        let pm: PodManagerId = "pm".into();
        store
            .hosts_sync(&pm, std::slice::from_ref(&seen), later, later, &register)
            .await
            .unwrap();
        // A sync that began before it, and wrote after it.
        store
            .hosts_sync(
                &pm,
                std::slice::from_ref(&seen),
                earlier,
                earlier,
                &register,
            )
            .await
            .unwrap();
        let h = state(&store).await;
        assert_eq!(h.last_seen_at, later);
        assert_eq!(h.state, HostState::Available);
    }

    #[tokio::test]
    async fn a_transition_from_elsewhere_changes_nothing() {
        let (_dir, store) = one_host("provisioned").await;
        assert!(
            !store
                .host_transition(&host_id(), REGISTERED, now())
                .await
                .unwrap()
        );
        assert!(
            !store
                .host_fail(
                    &host_id(),
                    &[HostState::Provisioning],
                    HostErrorKind::Provisioning,
                    "x",
                    now()
                )
                .await
                .unwrap()
        );
        assert_eq!(state(&store).await.state, HostState::Provisioned);
        // An unclaimed-only transition skips a claimed host.
        sqlx::query("UPDATE hosts SET claim_id = 'c' WHERE id = 'h'")
            .execute(&mut *store.writer().await.unwrap())
            .await
            .unwrap();
        let t = Transition {
            from: &[HostState::Provisioned],
            to: HostState::Inspecting,
            unclaimed: true,
        };
        assert!(!store.host_transition(&host_id(), t, now()).await.unwrap());
    }

    #[tokio::test]
    async fn a_power_management_error_returns_to_what_it_interrupted() {
        let (_dir, store) = one_host("provisioned").await;
        assert!(
            store
                .host_fail(
                    &host_id(),
                    &[HostState::Provisioned],
                    HostErrorKind::PowerManagement,
                    "refused",
                    now()
                )
                .await
                .unwrap()
        );
        assert_eq!(state(&store).await.state, HostState::Error);
        assert!(store.host_recover_power(&host_id(), now()).await.unwrap());
        let h = state(&store).await;
        assert_eq!(h.state, HostState::Provisioned);
        assert_eq!(h.error_type, None);
    }

    async fn inspections_queued(store: &Datastore) -> i64 {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM operations WHERE host_id = 'h' AND kind = 'inspect' \
             AND status = 'queued'",
        )
        .fetch_one(&mut *store.reader().await.unwrap())
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn a_registration_records_the_power_and_queues_the_inspection_with_the_move() {
        let (_dir, store) = one_host("registering").await;
        let inspect = crate::OperationRow::queued(
            podium_types::OperationRequest::Inspect,
            &"pm".into(),
            Some(&host_id()),
        );
        assert!(
            store
                .host_registered(&host_id(), PowerState::On, REGISTERED, &inspect)
                .await
                .unwrap()
        );
        let h = state(&store).await;
        assert_eq!(
            (h.state, h.power_state),
            (HostState::Inspecting, PowerState::On)
        );
        assert_eq!(inspections_queued(&store).await, 1);
        // Ended again (a registration that raced another): the power is recorded, no second
        // inspection is queued.
        assert!(
            !store
                .host_registered(&host_id(), PowerState::Off, REGISTERED, &inspect)
                .await
                .unwrap()
        );
        assert_eq!(state(&store).await.power_state, PowerState::Off);
        assert_eq!(inspections_queued(&store).await, 1);
    }

    #[tokio::test]
    async fn an_inspection_records_the_inventory_or_the_answer_and_moves_the_host() {
        const INSPECTED: Transition<'static> = Transition {
            from: &[HostState::Inspecting],
            to: HostState::Available,
            unclaimed: false,
        };
        let (_dir, store) = one_host("inspecting").await;
        let later: Timestamp = "2026-12-01T00:00:05.000000Z".parse().unwrap();
        let read = HostRow {
            cpu_count: 8,
            memory_mib: 16384,
            ..state(&store).await
        };
        assert!(
            store
                .host_inspected(&host_id(), &read, INSPECTED, later)
                .await
                .unwrap()
        );
        let h = state(&store).await;
        assert_eq!(h.state, HostState::Available);
        assert_eq!((h.cpu_count, h.memory_mib), (8, 16384));
        assert_eq!((h.updated_at, h.last_seen_at), (later, later));
        // Inspected again with nothing changed: only the answer is recorded, and a host no
        // longer inspecting does not move.
        let latest: Timestamp = "2026-12-01T00:00:09.000000Z".parse().unwrap();
        assert!(
            !store
                .host_inspected(&host_id(), &read, INSPECTED, latest)
                .await
                .unwrap()
        );
        let h = state(&store).await;
        assert_eq!(h.state, HostState::Available);
        assert_eq!((h.updated_at, h.last_seen_at), (later, latest));
    }
}
