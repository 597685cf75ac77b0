//! The sync task: the inventory of every pod manager that answers its probe, synced.

use crate::app::Podium;

pub(super) async fn run(podium: &Podium) -> Result<String, String> {
    let (synced, failed) = podium
        .pod_managers_sync_all()
        .await
        .map_err(|e| e.to_string())?;
    // A failed one's status and history say why.
    super::counted(format!("{synced} pod managers synced"), failed)
}
