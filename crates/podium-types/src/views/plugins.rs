//! Registered plugins.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::PluginSource;

/// A registered plugin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PluginView {
    pub sha256: String,
    pub name: String,
    pub version: String,
    /// `hardware-driver`, `ipam` or `renderer`.
    pub world: String,
    pub description: String,
    pub size: i64,
    pub source: PluginSource,
    pub created_at: crate::Timestamp,
}

/// Every registered plugin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PluginList {
    pub items: Vec<PluginView>,
}
