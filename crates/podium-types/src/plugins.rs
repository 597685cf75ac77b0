//! Plugins as the model knows them: where one came from, and a binding of one to a pod manager
//! or a pool.

use crate::names::names;

names! {
    /// Where a plugin came from.
    pub enum PluginSource ("a plugin source") {
        /// Built with Podium and included in the binary.
        Bundled => "bundled",
        /// Found in the plugin directory at start.
        Directory => "directory",
        /// Uploaded through the API.
        Upload => "upload",
    }
}

/// A plugin bound to a pod manager or a pool: resolved to one build, with its configuration.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct PluginBinding {
    pub name: String,
    pub version: String,
    pub sha256: String,
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
}
