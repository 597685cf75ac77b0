//! The plugin's configuration document, `{"strategy": "sequential" | "random"}`, parsed by hand
//! so that every error names the offending field (serde's messages for a bad enum value do not).

use serde_json::{Map, Value};

/// How an address is picked from the pool's ranges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strategy {
    /// The lowest free address of the first range that has one.
    #[default]
    Sequential,
    /// A uniformly random free address over all ranges, falling back to a scan when the pool is
    /// nearly full.
    Random,
}

impl Strategy {
    /// Reads the value of the `strategy` field.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        match value.as_str() {
            Some("sequential") => Ok(Self::Sequential),
            Some("random") => Ok(Self::Random),
            _ => Err(format!(
                "strategy: expected \"sequential\" or \"random\", got {value}"
            )),
        }
    }
}

/// The configuration of `ipam-static`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Config {
    pub strategy: Strategy,
}

impl Config {
    /// Parses and validates a configuration document. The error names the field.
    pub fn parse(json: &str) -> Result<Self, String> {
        let object = parse_object(json)?;
        let mut config = Self::default();
        for (key, value) in &object {
            match key.as_str() {
                "strategy" => config.strategy = Strategy::from_value(value)?,
                other => return Err(unknown_field(other, &["strategy"])),
            }
        }
        Ok(config)
    }
}

/// Parses a configuration document that must be a JSON object.
pub fn parse_object(json: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "configuration: expected a JSON object, got {}",
            kind(&other)
        )),
        Err(e) => Err(format!("configuration: not valid JSON: {e}")),
    }
}

/// The message for a key the configuration does not know.
pub fn unknown_field(name: &str, known: &[&str]) -> String {
    format!("{name}: unknown field (known fields: {})", known.join(", "))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
