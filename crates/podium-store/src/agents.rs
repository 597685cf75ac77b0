//! Deploy agents: the Ironic Python Agent a host runs, or is about to (one row per host, from
//! the ramdisk's boot until the host boots anything else), its token (hashed, and sealed for
//! Podium's own calls) and what its heartbeats announced.

use podium_types::{ClaimId, HostId, Timestamp};
use sqlx::Row;

use super::{Datastore, StoreError, moment, moment_opt};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentRow {
    pub host_id: HostId,
    /// When Podium booted the ramdisk the agent runs in.
    pub expected_at: Timestamp,
    /// The address Podium gave the host's ramdisk, the only one it calls the agent at.
    pub address: String,
    /// The sha256 of the token issued at the agent's first lookup.
    pub token_hash: Option<String>,
    /// The same token, sealed.
    pub token_sealed: Option<String>,
    pub issued_at: Option<Timestamp>,
    pub callback_url: Option<String>,
    /// The certificate (PEM) the agent serves its API with, from its heartbeat.
    pub certificate: Option<String>,
    pub version: Option<String>,
    pub heartbeat_at: Option<Timestamp>,
    pub heartbeats: i64,
    pub verified_at: Option<Timestamp>,
}

/// What a heartbeat announced.
#[derive(Clone, Debug)]
pub struct Heartbeat<'a> {
    pub callback_url: &'a str,
    pub certificate: Option<&'a str>,
    pub version: Option<&'a str>,
    /// Whether Podium reached the agent on this heartbeat (its address, certificate and
    /// token), rather than taking it as the one it reached before.
    pub verified: bool,
}

const COLUMNS: &str = "host_id, expected_at, address, token_hash, token_sealed, issued_at, callback_url, \
    certificate, version, heartbeat_at, heartbeats, verified_at";

fn row(r: &sqlx::any::AnyRow) -> Result<AgentRow, StoreError> {
    Ok(AgentRow {
        host_id: r.try_get::<String, _>("host_id")?.into(),
        expected_at: moment(r, "expected_at")?,
        address: r.try_get("address")?,
        token_hash: r.try_get("token_hash")?,
        token_sealed: r.try_get("token_sealed")?,
        issued_at: moment_opt(r, "issued_at")?,
        callback_url: r.try_get("callback_url")?,
        certificate: r.try_get("certificate")?,
        version: r.try_get("version")?,
        heartbeat_at: moment_opt(r, "heartbeat_at")?,
        heartbeats: r.try_get("heartbeats")?,
        verified_at: moment_opt(r, "verified_at")?,
    })
}

/// At most this many MACs in one lookup (a machine with more NICs is looked up by the first).
pub const LOOKUP_MACS_MAX: usize = 32;

impl Datastore {
    /// Expects a new agent on the host (its ramdisk is booting): whatever an earlier agent was
    /// issued or announced is forgotten, so the new one gets a token of its own.
    pub async fn agent_expect(
        &self,
        host: &HostId,
        address: &str,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO agents (host_id, expected_at, address) VALUES ($1, $2, $3) \
             ON CONFLICT (host_id) DO UPDATE SET expected_at = $2, address = $3, token_hash = NULL, \
             token_sealed = NULL, issued_at = NULL, callback_url = NULL, certificate = NULL, \
             version = NULL, heartbeat_at = NULL, heartbeats = 0, verified_at = NULL",
        )
        .bind(host.as_str())
        .bind(now.to_string())
        .bind(address)
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// The host boots something else: no agent is expected there; whether one was.
    pub async fn agent_forget(&self, host: &HostId) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM agents WHERE host_id = $1")
            .bind(host.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records that the host's disks may hold claim `written_for`'s data (its image is being
    /// written, its system booted), while that claim holds the host: they are cleaned before
    /// the host is free again (`host_cleaned`).
    pub async fn host_disks_written(
        &self,
        host: &HostId,
        written_for: &ClaimId,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE hosts SET disks_written_for = $2 WHERE id = $1 AND claim_id = $2")
            .bind(host.as_str())
            .bind(written_for.as_str())
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    /// Records a cleaning of the host's disks: one that succeeded clears the mark of the claim
    /// it cleaned (not one set since), one that failed leaves it.
    pub async fn host_cleaned(
        &self,
        host: &HostId,
        record: &podium_types::CleaningRecord,
    ) -> Result<(), StoreError> {
        let text = serde_json::to_string(record).expect("a cleaning record serializes");
        sqlx::query(
            "UPDATE hosts SET last_cleaning = $2, \
             disks_written_for = CASE WHEN $3 AND disks_written_for IS NOT DISTINCT FROM $4 \
                 THEN NULL ELSE disks_written_for END WHERE id = $1",
        )
        .bind(host.as_str())
        .bind(text)
        .bind(record.succeeded)
        .bind(record.claim.as_ref().map(ClaimId::as_str))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// The claim whose image may be on the host's disks, not cleaned since.
    pub async fn host_disks_written_for(
        &self,
        host: &HostId,
    ) -> Result<Option<ClaimId>, StoreError> {
        let r = sqlx::query("SELECT disks_written_for FROM hosts WHERE id = $1")
            .bind(host.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(
            r.map(|r| r.try_get::<Option<String>, _>("disks_written_for"))
                .transpose()?
                .flatten()
                .map(ClaimId::from),
        )
    }

    pub async fn agent_get(&self, host: &HostId) -> Result<Option<AgentRow>, StoreError> {
        let r = sqlx::query(&format!("SELECT {COLUMNS} FROM agents WHERE host_id = $1"))
            .bind(host.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        r.as_ref().map(row).transpose()
    }

    /// The expected agents of the hosts with a NIC of one of `macs` (lower case; at most
    /// [`LOOKUP_MACS_MAX`] are read).
    pub async fn agents_by_macs(&self, macs: &[String]) -> Result<Vec<AgentRow>, StoreError> {
        let macs = &macs[..macs.len().min(LOOKUP_MACS_MAX)];
        if macs.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (1..=macs.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT {COLUMNS} FROM agents WHERE host_id IN \
             (SELECT host_id FROM host_nics WHERE mac IN ({})) ORDER BY host_id",
            placeholders.join(", ")
        );
        let mut query = sqlx::query(&sql);
        for mac in macs {
            query = query.bind(mac.as_str());
        }
        let rows = query.fetch_all(&mut *self.reader().await?).await?;
        rows.iter().map(row).collect()
    }

    /// Records the token issued to the host's agent, unless one was issued since it was
    /// expected; whether this one was recorded.
    pub async fn agent_issue(
        &self,
        host: &HostId,
        hash: &str,
        sealed: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE agents SET token_hash = $2, token_sealed = $3, issued_at = $4 \
             WHERE host_id = $1 AND token_hash IS NULL",
        )
        .bind(host.as_str())
        .bind(hash)
        .bind(sealed)
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records a heartbeat of the agent holding the token that hashes to `hash`; whether the
    /// host still expects that agent.
    pub async fn agent_heartbeat(
        &self,
        host: &HostId,
        hash: &str,
        beat: &Heartbeat<'_>,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE agents SET callback_url = $3, certificate = $4, version = $5, \
             heartbeat_at = $6, heartbeats = heartbeats + 1, \
             verified_at = COALESCE($7, verified_at) \
             WHERE host_id = $1 AND token_hash = $2",
        )
        .bind(host.as_str())
        .bind(hash)
        .bind(beat.callback_url)
        .bind(beat.certificate)
        .bind(beat.version)
        .bind(now.to_string())
        .bind(beat.verified.then(|| now.to_string()))
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}
