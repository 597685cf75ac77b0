//! A pod manager as the application reads it: its stored row with its plugin bindings decoded,
//! and the plugins a site gets when the admin names none.

use podium_store::PodManagerRow;

use crate::error::Error;

pub(crate) const DEFAULT_DRIVER: &str = "redfish";
pub(crate) const DEFAULT_IPAM: &str = "ipam-static";

/// A plugin bound to a pod manager: resolved to one build, with its configuration. Stored as JSON.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct PluginBinding {
    pub name: String,
    pub version: String,
    pub sha256: String,
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
}

/// A stored pod manager with its bindings decoded.
#[derive(Clone, Debug)]
pub struct PodManager {
    pub row: PodManagerRow,
    pub driver: PluginBinding,
    pub ipam: PluginBinding,
    pub renderer: Option<PluginBinding>,
}

impl PodManager {
    pub(crate) fn from_row(row: PodManagerRow) -> Result<PodManager, Error> {
        let decode = |text: &str| -> Result<PluginBinding, Error> {
            serde_json::from_str(text)
                .map_err(|e| Error::Internal(anyhow::anyhow!("stored plugin binding: {e}")))
        };
        Ok(PodManager {
            driver: decode(&row.driver)?,
            ipam: decode(&row.ipam)?,
            renderer: row.renderer.as_deref().map(decode).transpose()?,
            row,
        })
    }
}
