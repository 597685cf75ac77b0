//! Config drives: a host's documents on a VFAT image (`config_drive.rs`) served at an
//! unguessable URL until it expires, rebuilt from the stored documents on each download.

use podium_types::{ClaimId, ConfigDriveId, HostId, Phase, Timestamp};
use sha2::{Digest, Sha256};

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{ConfigDriveRow, claim_bound};
use crate::error::Error;
use podium_types::views::ConfigDriveView;

use super::{Documents, Hold};

/// How long a config drive's URL works when the caller does not say, and at most.
const DRIVE_TTL_DEFAULT: u64 = 3600;
pub(crate) const DRIVE_TTL_MAX: u64 = 86_400;

/// A config drive just made: its token is in `path` and nowhere else.
#[derive(Clone, Debug)]
pub(crate) struct ConfigDrive {
    pub(crate) row: ConfigDriveRow,
    pub(crate) phase: Phase,
    /// The path of its URL (`/v1/config_drives/<token>.img`), after the base URL.
    pub(crate) path: String,
}

impl ConfigDrive {
    /// A config drive just made, its URL on `base` (the address BMCs reach this process at).
    fn view(self, base: &str) -> ConfigDriveView {
        let drive = self;
        ConfigDriveView {
            url: format!("{base}{}", drive.path),
            id: drive.row.id,
            phase: drive.phase,
            host: drive.row.host_id,
            claim: drive.row.claim_id,
            expires_at: drive.row.expires_at,
            size: drive.row.size,
            sha256: drive.row.sha256,
            media_types: vec!["usb".into(), "floppy".into()],
        }
    }
}

/// What a config drive is made for.
#[derive(Clone, Copy, Debug)]
pub enum DriveFor<'a> {
    Host(&'a HostId, Phase),
    Claim(&'a ClaimId),
}

impl Podium {
    /// Renders and stores a config drive; its URL's token is answered once, here.
    pub async fn config_drive_create(
        &self,
        caller: &Caller,
        target: DriveFor<'_>,
        expires_in: Option<u64>,
        base_url: &str,
    ) -> Result<ConfigDriveView, Error> {
        let ttl = expires_in.unwrap_or(DRIVE_TTL_DEFAULT);
        if !(60..=DRIVE_TTL_MAX).contains(&ttl) {
            return Err(Error::invalid(
                "expires_in",
                format!("must be between 60 and {DRIVE_TTL_MAX} seconds"),
            ));
        }
        let documents = match target {
            DriveFor::Host(id, phase) => {
                caller.require_admin()?;
                let (host, claim) = self.host_with_bound_claim(id, phase).await?;
                self.render(&host, claim.as_ref(), phase, Hold::Take)
                    .await?
            }
            DriveFor::Claim(id) => {
                if let Caller::Tenant {
                    read_only: true, ..
                }
                | Caller::Admin {
                    read_only: true, ..
                } = caller
                {
                    return Err(Error::Forbidden("this token is read-only".into()));
                }
                let (claim, host) = claim_bound(self.datastore(), caller.scope(), id).await?;
                self.render(&host, Some(&claim), Phase::Provisioning, Hold::Take)
                    .await?
            }
        };
        let drive = self.config_drive_store(documents, ttl).await?;
        Ok(drive.view(base_url))
    }

    /// Builds and stores the config drive of rendered documents, working for `ttl` seconds.
    pub(crate) async fn config_drive_store(
        &self,
        documents: Documents,
        ttl: u64,
    ) -> Result<ConfigDrive, Error> {
        let meta_data = documents.meta_data.to_string();
        let network_data = documents.network_data.to_string();
        // A ramdisk's drive tells its agent where Podium answers it (`docs/deploy.md`).
        let agent_config = match documents.phase {
            Phase::Preprovisioning => self
                .download_base()
                .ok()
                .map(|base| format!("[DEFAULT]\napi_url = {base}{}\n", crate::agent::API_PATH)),
            _ => None,
        };
        let image = crate::config_drive::build(&crate::config_drive::Contents {
            meta_data: meta_data.as_bytes(),
            network_data: network_data.as_bytes(),
            user_data: documents.user_data.as_deref(),
            agent_config: agent_config.as_deref().map(str::as_bytes),
        })
        .map_err(|e| Error::Internal(anyhow::anyhow!("building a config drive: {e}")))?;
        let token = format!("cd_{}", hex::encode(rand::random::<[u8; 32]>()));
        let now = Timestamp::now();
        let phase = documents.phase;
        let row = ConfigDriveRow {
            id: ConfigDriveId::generate(),
            token_hash: hex::encode(Sha256::digest(token.as_bytes())),
            host_id: documents.host_id,
            claim_id: documents.claim_id,
            phase: documents.phase.as_str().to_owned(),
            meta_data,
            network_data,
            user_data: documents.user_data,
            agent_config,
            sha256: image.sha256,
            size: i64::try_from(image.bytes.len()).unwrap_or(i64::MAX),
            created_at: now,
            expires_at: now.after(std::time::Duration::from_secs(ttl)),
        };
        self.datastore()
            .config_drive_create(&row, row.created_at)
            .await?;
        tracing::info!(drive = %row.id, host = %row.host_id, phase = %row.phase, expires_at = %row.expires_at, "config drive made");
        Ok(ConfigDrive {
            row,
            phase,
            path: format!("/v1/config_drives/{token}.img"),
        })
    }

    /// The image behind a config drive URL (`<token>.img`), rebuilt from its stored documents;
    /// not found once it expired, or for any other name.
    /// Answers the image's sha256 (its ETag) and bytes.
    pub async fn config_drive_image(&self, name: &str) -> Result<(String, Vec<u8>), Error> {
        let not_found = || Error::not_found("config drive", "(this URL)");
        let token = name.strip_suffix(".img").ok_or_else(not_found)?;
        if !token.starts_with("cd_") || token.len() != 67 {
            return Err(not_found());
        }
        let hash = hex::encode(Sha256::digest(token.as_bytes()));
        let row = self
            .datastore()
            .config_drive_by_token(&hash, podium_types::Timestamp::now())
            .await?
            .ok_or_else(not_found)?;
        let bytes = self.config_drive_bytes(&row)?;
        Ok((row.sha256, bytes))
    }

    /// A stored config drive's image, rebuilt from its documents (and checked against the
    /// digest it was announced with).
    pub(crate) fn config_drive_bytes(&self, row: &ConfigDriveRow) -> Result<Vec<u8>, Error> {
        let image = crate::config_drive::build(&crate::config_drive::Contents {
            meta_data: row.meta_data.as_bytes(),
            network_data: row.network_data.as_bytes(),
            user_data: row.user_data.as_deref(),
            agent_config: row.agent_config.as_deref().map(str::as_bytes),
        })
        .map_err(|e| Error::Internal(anyhow::anyhow!("rebuilding config drive {}: {e}", row.id)))?;
        if image.sha256 != row.sha256 {
            return Err(Error::Internal(anyhow::anyhow!(
                "config drive {} rebuilt to different bytes",
                row.id
            )));
        }
        Ok(image.bytes)
    }
}
