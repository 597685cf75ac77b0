//! `podium backup FILE`: a copy of the server's SQLite database, taken while it runs.

use clap::Args;

use super::client::Client;

#[derive(Debug, Args)]
pub(super) struct BackupArgs {
    /// Where to write the copy; it must not exist.
    file: std::path::PathBuf,
}

pub(super) async fn run(url: Option<&str>, args: BackupArgs) -> anyhow::Result<()> {
    let BackupArgs { file } = args;
    anyhow::ensure!(
        !file.exists(),
        "{} exists: give a new file name",
        file.display()
    );
    let c = Client::from_env(url)?;
    let bytes = c
        .download("/v1/admin/backup", &file, |head| {
            anyhow::ensure!(
                head.starts_with(b"SQLite format 3\0"),
                "the server sent something that is not an SQLite database: nothing saved"
            );
            Ok(())
        })
        .await?;
    println!("saved {bytes} bytes to {}", file.display());
    Ok(())
}
