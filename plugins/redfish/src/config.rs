//! The driver's configuration document: parsed strictly, so a typo is an `invalid-config` naming
//! the field rather than a setting silently ignored.
//!
//! ```json
//! { "root": "/redfish/v1", "system_ids": ["1", "/redfish/v1/Systems/2"] }
//! ```
//!
//! Both keys are optional; `{}` is the default configuration.

use serde_json::Value;

use crate::podium::plugin::types::Error;

/// The service root used when the configuration names none.
pub(crate) const DEFAULT_ROOT: &str = "/redfish/v1";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Config {
    /// The service root path: starts with `/`, no trailing `/` (except the root `/` itself).
    pub(crate) root: String,
    /// Restricts discovery to these systems (and chassis): each entry is an `Id` (matched against
    /// the last segment of the member's path) or a path (matched against the whole path).
    pub(crate) system_ids: Option<Vec<String>>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            root: DEFAULT_ROOT.to_owned(),
            system_ids: None,
        }
    }
}

impl Config {
    /// Parses and checks a configuration document.
    pub(crate) fn parse(text: &str) -> Result<Self, Error> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::InvalidConfig(format!("not valid JSON: {e}")))?;
        let Value::Object(map) = value else {
            return Err(Error::InvalidConfig(
                "the configuration must be a JSON object".to_owned(),
            ));
        };
        let mut config = Self::default();
        for (key, value) in map {
            match key.as_str() {
                "root" => config.root = parse_root(&value)?,
                "system_ids" => config.system_ids = Some(parse_system_ids(&value)?),
                other => {
                    return Err(Error::InvalidConfig(format!(
                        "{other}: unknown field (known: root, system_ids)"
                    )));
                }
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

fn parse_root(value: &Value) -> Result<String, Error> {
    let Some(root) = value.as_str() else {
        return Err(Error::InvalidConfig(format!(
            "root: expected a string, found {}",
            kind(value)
        )));
    };
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

fn parse_system_ids(value: &Value) -> Result<Vec<String>, Error> {
    let Some(items) = value.as_array() else {
        return Err(Error::InvalidConfig(format!(
            "system_ids: expected a list of strings, found {}",
            kind(value)
        )));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item.as_str() {
            Some(s) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
            Some(_) => Err(Error::InvalidConfig(format!("system_ids[{i}]: empty id"))),
            None => Err(Error::InvalidConfig(format!(
                "system_ids[{i}]: expected a string, found {}",
                kind(item)
            ))),
        })
        .collect()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
