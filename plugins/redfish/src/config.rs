//! The driver's configuration document, read with serde by the SDK (`podium_plugin::config`): a
//! typo is an `invalid-config` naming the field rather than a setting silently ignored.
//!
//! ```json
//! { "root": "/redfish/v1", "system_ids": ["1", "/redfish/v1/Systems/2"] }
//! ```
//!
//! Both keys are optional; `{}` is the default configuration.

use podium_plugin::{Error, Result};
use serde::Deserialize;

/// The service root used when the configuration names none.
pub(crate) const DEFAULT_ROOT: &str = "/redfish/v1";

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// The service root path: starts with `/`, no trailing `/` (except the root `/` itself).
    #[serde(default = "default_root")]
    pub(crate) root: String,
    /// Restricts discovery to these systems (and chassis): each entry is an `Id` (matched against
    /// the last segment of the member's path) or a path (matched against the whole path).
    #[serde(default)]
    pub(crate) system_ids: Option<Vec<String>>,
}

fn default_root() -> String {
    DEFAULT_ROOT.to_owned()
}

impl Default for Config {
    fn default() -> Self {
        Self {
            root: default_root(),
            system_ids: None,
        }
    }
}

impl Config {
    /// Parses and checks a configuration document.
    pub(crate) fn parse(text: &str) -> Result<Self> {
        let mut config: Config = podium_plugin::config::parse(text)?;
        config.root = check_root(&config.root)?;
        if let Some(ids) = &mut config.system_ids {
            for (i, id) in ids.iter_mut().enumerate() {
                let trimmed = id.trim();
                if trimmed.is_empty() {
                    return Err(Error::InvalidConfig(format!("system_ids[{i}]: empty id")));
                }
                *id = trimmed.to_owned();
            }
        }
        Ok(config)
    }

    /// Whether discovery reports the member at `path`.
    pub(crate) fn selects(&self, path: &str) -> bool {
        let Some(ids) = &self.system_ids else {
            return true;
        };
        ids.iter().any(|id| matches_id(id, path))
    }
}

/// Whether a `system_ids` entry names the member at `path`.
pub(crate) fn matches_id(id: &str, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    if id.starts_with('/') {
        id.trim_end_matches('/') == path
    } else {
        path.rsplit('/').next() == Some(id)
    }
}

fn check_root(root: &str) -> Result<String> {
    if !root.starts_with('/') || root.starts_with("//") {
        return Err(Error::InvalidConfig(format!(
            "root: must be a path starting with `/` (like {DEFAULT_ROOT}), found {root:?}"
        )));
    }
    if root.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::InvalidConfig(format!(
            "root: must not contain whitespace, found {root:?}"
        )));
    }
    let trimmed = root.trim_end_matches('/');
    Ok(if trimmed.is_empty() { "/" } else { trimmed }.to_owned())
}
