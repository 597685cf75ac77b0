//! The refresh task: the power state of the hosts with their own BMC whose turn came, read, a
//! share of them per run, so each is read about once per sync interval and the reads spread
//! evenly over it.

use super::Intervals;
use crate::app::Podium;

pub(super) async fn run(podium: &Podium, intervals: Intervals) -> Result<String, String> {
    let (read, unreachable) = podium
        .hosts_refresh_due(intervals.sync, intervals.refresh())
        .await
        .map_err(|e| e.to_string())?;
    // The log says which hosts' BMCs did not answer; they come again at their next turn.
    Ok(format!(
        "{read} hosts with their own BMC read, {unreachable} did not answer"
    ))
}
