//! The expiry task: config drives whose URL has expired are forgotten, Redfish sessions past
//! their timeout, and audit events and change events past their retention.

use crate::app::Podium;

pub(super) async fn run(podium: &Podium) -> Result<String, String> {
    let drives = podium
        .datastore()
        .config_drives_expire(&podium_store::now())
        .await
        .map_err(|e| e.to_string())?;
    let audit = podium.audit_expire().await.map_err(|e| e.to_string())?;
    let events = podium.events_expire().await.map_err(|e| e.to_string())?;
    let sessions = podium
        .redfish_sessions_expire()
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{drives} expired config drives, {sessions} timed-out Redfish sessions, {audit} audit \
         events and {events} change events past their retention forgotten"
    ))
}
