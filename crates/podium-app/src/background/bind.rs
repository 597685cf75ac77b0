//! The bind task: every pending claim tried against the hosts free now. Also run at once
//! whenever a host becomes free (a release ends, an inspection makes one available).

use crate::app::Podium;

pub(super) async fn run(podium: &Podium) -> Result<String, String> {
    let (tried, failed) = podium
        .claims_bind_pending()
        .await
        .map_err(|e| e.to_string())?;
    super::counted(format!("{tried} pending claims tried"), failed)
}
