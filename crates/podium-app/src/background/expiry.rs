//! The expiry task: config drives whose URL has expired are forgotten, Redfish sessions past
//! their timeout, and audit events and change events past their retention.

use super::Outcome;
use crate::app::Podium;
use crate::error::Error;

pub(super) async fn run(podium: &Podium) -> Result<Outcome, Error> {
    let drives = podium
        .datastore()
        .config_drives_expire(podium_types::Timestamp::now())
        .await?;
    let audit = podium.audit_expire().await?;
    let events = podium.events_expire().await?;
    let sessions = podium.redfish_sessions_expire().await?;
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Ok(Outcome::new(format!(
        "{drives} expired config drives, {sessions} timed-out Redfish sessions, {audit} audit \
         events and {events} change events past their retention forgotten"
    ))
    .count("config_drives", count(drives))
    .count("sessions", count(sessions))
    .count("audit_events", count(audit))
    .count("change_events", count(events)))
}
