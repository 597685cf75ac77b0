//! The expiry task: config drives whose URL has expired are forgotten.

use crate::app::Podium;

pub(super) async fn run(podium: &Podium) -> Result<String, String> {
    podium
        .datastore()
        .config_drives_expire(&podium_store::now())
        .await
        .map(|n| format!("{n} expired config drives forgotten"))
        .map_err(|e| e.to_string())
}
