//! Typed configuration: the admin's JSON document for the pod manager (or pool) the plugin
//! serves, read into the plugin's own type with serde.

use serde::de::DeserializeOwned;

use crate::{Error, Result};

/// The configuration document as the host holds it, parsed into `T`.
pub fn config<T: DeserializeOwned>() -> Result<T> {
    parse(&text())
}

/// The configuration document (JSON text; `{}` when the admin set none).
pub fn text() -> String {
    crate::host::config()
}

/// Parses a configuration document (a JSON object) into `T`; `invalid-config` names the field:
/// `bmc.port: invalid type: string "x", expected u16`, `retries: unknown field`, ...
/// (`#[serde(deny_unknown_fields)]` makes a typo an error rather than a setting ignored).
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::InvalidConfig(format!("not valid JSON: {e}")))?;
    // A struct would also take a list, field by field.
    if !value.is_object() {
        return Err(Error::InvalidConfig(
            "the configuration must be a JSON object".to_owned(),
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        Error::InvalidConfig(field_message(&path, &e.into_inner().to_string()))
    })
}

/// `path: message`; for an unknown field, its path is the field's own (`bmc.user: unknown field,
/// expected ...` rather than `unknown field `user``).
fn field_message(path: &str, message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((name, tail)) = rest.split_once('`')
    {
        let field = if path == "." { name } else { path };
        return format!("{field}: unknown field{tail}");
    }
    if path == "." {
        message.to_owned()
    } else {
        format!("{path}: {message}")
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::parse;
    use crate::Error;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Config {
        root: String,
        #[serde(default)]
        bmc: Bmc,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Bmc {
        port: u16,
        ids: Vec<String>,
    }

    fn rejection(text: &str) -> String {
        match parse::<Config>(text) {
            Err(Error::InvalidConfig(m)) => m,
            other => panic!("{text}: expected invalid-config, got {other:?}"),
        }
    }

    #[test]
    fn a_rejection_names_the_field() {
        assert_eq!(
            rejection(r#"{"root": 1}"#),
            "root: invalid type: integer `1`, expected a string"
        );
        assert_eq!(
            rejection(r#"{"root": "/", "password": "x"}"#),
            "password: unknown field, expected `root` or `bmc`"
        );
        assert_eq!(
            rejection(r#"{"root": "/", "bmc": {"port": 1, "ids": [], "user": "x"}}"#),
            "bmc.user: unknown field, expected `port` or `ids`"
        );
        assert_eq!(
            rejection(r#"{"root": "/", "bmc": {"port": 70000, "ids": []}}"#),
            "bmc.port: invalid value: integer `70000`, expected u16"
        );
        assert_eq!(
            rejection(r#"{"root": "/", "bmc": {"port": 1, "ids": ["a", 2]}}"#),
            "bmc.ids[1]: invalid type: integer `2`, expected a string"
        );
        assert_eq!(rejection("{}"), "missing field `root`");
        assert!(rejection("{").starts_with("not valid JSON: "));
        assert!(rejection(r#"{"root": "/"} x"#).starts_with("not valid JSON: "));
        assert_eq!(rejection("[]"), "the configuration must be a JSON object");
    }
}
