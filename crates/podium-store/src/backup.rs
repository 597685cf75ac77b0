//! Online backups of the embedded SQLite database: a consistent copy taken while the server
//! runs (`VACUUM INTO` reads one snapshot; writers go on meanwhile).

use crate::{Backend, Datastore, StoreError};

impl Datastore {
    /// A consistent copy of the SQLite database, as an open file already unlinked (it is gone
    /// once closed), with its length; `None` on PostgreSQL, which `pg_dump` backs up.
    pub async fn backup(&self) -> Result<Option<(std::fs::File, u64)>, StoreError> {
        if self.backend == Backend::Postgres {
            return Ok(None);
        }
        let mut reader = self.reader().await?;
        let (main,): (String,) =
            sqlx::query_as("SELECT file FROM pragma_database_list WHERE name = 'main'")
                .fetch_one(&mut *reader)
                .await?;
        if main.is_empty() {
            return Err(StoreError::NoFile);
        }
        // Beside the database, so the copy needs no room elsewhere and the name is unique.
        let copy = std::path::PathBuf::from(format!("{main}.backup-{}", crate::new_id()));
        let taken = sqlx::query("VACUUM INTO $1")
            .bind(copy.to_string_lossy().into_owned())
            .execute(&mut *reader)
            .await;
        let opened = taken.map_err(StoreError::from).and_then(|_| {
            let file = std::fs::File::open(&copy).map_err(|source| StoreError::BackupFile {
                path: copy.clone(),
                source,
            })?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            Ok((file, len))
        });
        // Unlinked whatever happened: the open file keeps its data until it is closed.
        let _ = std::fs::remove_file(&copy);
        opened.map(Some)
    }
}
