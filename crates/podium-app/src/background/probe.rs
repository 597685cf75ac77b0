//! The probe task: every pod manager probed (a few at a time), its status and history recorded.

use crate::app::Podium;

pub(super) async fn run(podium: &Podium) -> Result<String, String> {
    let probed = podium
        .pod_managers_probe_all()
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("{probed} pod managers probed"))
}
