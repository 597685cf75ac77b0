//! {{name}}: an IPAM strategy, built on the podium-plugin SDK: proposes the lowest free address
//! of the pool's ranges. The host owns the allocations and commits what `propose` answers.

use podium_plugin::ipam::{AllocationRequest, Allocations};
use podium_plugin::prelude::*;
use serde::Deserialize;

/// The configuration the admin sets on the pool: `{}` (add your strategy's settings here).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Strategy {}

impl Plugin for Strategy {
    fn info() -> PluginInfo {
        podium_plugin::info!("{{name}}", "The lowest free address of the pool's ranges")
    }

    fn from_config(config: &str) -> Result<Self> {
        podium_plugin::config::parse(config)
    }
}

impl Ipam for Strategy {
    fn propose(
        &self,
        request: AllocationRequest,
        allocations: &Allocations,
    ) -> Result<Option<String>> {
        Ok(request
            .pool
            .ranges
            .iter()
            .find_map(|range| allocations.first_free(&range.start, &range.end)))
    }
}

podium_plugin::export!(Strategy: Ipam);
