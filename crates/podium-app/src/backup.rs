//! Backups of the embedded SQLite database while the server runs (`GET /v1/admin/backup`,
//! `podium backup FILE`). A deployment on PostgreSQL backs its database up with `pg_dump`.

use podium_types::ErrorCode;

use crate::app::Podium;
use crate::auth::Caller;
use crate::error::Error;

/// A consistent copy of the database: an open file, already unlinked, and its length.
#[derive(Debug)]
pub struct Backup {
    pub file: std::fs::File,
    pub bytes: u64,
}

impl Podium {
    /// `GET /v1/admin/backup`: a copy of every record (credentials stay sealed, the key that
    /// unseals them is not in it; tokens are there as hashes). Any admin token: a backup job
    /// needs only a read-only one.
    pub async fn backup(&self, caller: &Caller) -> Result<Backup, Error> {
        caller.require_admin_read()?;
        match self.datastore().backup().await? {
            Some((file, bytes)) => {
                tracing::info!(bytes, "database backed up");
                Ok(Backup { file, bytes })
            }
            None => Err(Error::Conflict {
                code: ErrorCode::BackupUnavailable,
                message: "this Podium runs on PostgreSQL: back its database up with pg_dump \
                          (docs/operations.md)"
                    .into(),
            }),
        }
    }
}
