//! Path-aware reading of JSON documents (the template, a consumer's `network_data`).
//!
//! Every error starts with the path of the offending field and a colon (`links[2].mode: ...`),
//! which the host turns into the `field` of its 422. serde's own errors carry a line and column
//! instead of a path, so the documents are parsed into a [`Value`] and read field by field here.

use serde_json::{Map, Value};

/// The most items any array of a template or a consumer document may have.
pub(crate) const ARRAY_MAX: usize = 256;

/// `path.key`, or `key` at the root (an empty path).
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `path[index]`.
pub(crate) fn index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// A value as an error message shows it: its JSON text, cut short when long.
pub(crate) fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// `PATH: expected one of A, B, C, got VALUE`.
pub(crate) fn one_of(path: &str, allowed: &[&str], got: &Value) -> String {
    format!(
        "{path}: expected one of {}, got {}",
        allowed.join(", "),
        shown(got)
    )
}

/// Parses a document's JSON text; `root` names the document in errors.
pub(crate) fn parse(text: &str, root: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{root}: not valid JSON ({e})"))
}

/// A JSON object being read, with its path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Obj<'a> {
    path: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    /// The object at `path`; an error if `value` is not an object. `what` names what the object
    /// is in the message (`"a link"`).
    pub(crate) fn new(value: &'a Value, path: &'a str, what: &str) -> Result<Self, String> {
        match value {
            Value::Object(map) => Ok(Self { path, map }),
            other => Err(format!(
                "{}: expected {what} (a JSON object), got {}",
                if path.is_empty() { "(document)" } else { path },
                shown(other)
            )),
        }
    }

    /// The object's own path.
    pub(crate) fn at(&self) -> &'a str {
        self.path
    }

    /// The path of one of the object's fields.
    pub(crate) fn path(&self, key: &str) -> String {
        join(self.path, key)
    }

    /// Refuses fields outside `known`, naming the first one (in key order).
    pub(crate) fn only(&self, known: &[&str]) -> Result<(), String> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(key) => Err(format!(
                "{}: unknown field; expected one of {}",
                self.path(key),
                known.join(", ")
            )),
        }
    }

    /// A field's value; `null` counts as absent.
    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// A field that must be present.
    pub(crate) fn require(&self, key: &str) -> Result<&'a Value, String> {
        self.get(key)
            .ok_or_else(|| format!("{}: missing (required)", self.path(key)))
    }

    /// An optional string field.
    pub(crate) fn string(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!(
                "{}: expected a string, got {}",
                self.path(key),
                shown(other)
            )),
        }
    }

    /// A string field that must be present and non-empty.
    pub(crate) fn required_string(&self, key: &str) -> Result<&'a str, String> {
        match self.string(key)? {
            None => Err(format!("{}: missing (required)", self.path(key))),
            Some("") => Err(format!("{}: must not be empty", self.path(key))),
            Some(s) => Ok(s),
        }
    }

    /// An optional boolean field.
    pub(crate) fn boolean(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(format!(
                "{}: expected true or false, got {}",
                self.path(key),
                shown(other)
            )),
        }
    }

    /// An optional integer field within `min..=max`.
    pub(crate) fn integer(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => integer_in(value, &self.path(key), min, max).map(Some),
        }
    }

    /// An optional array field, of at most `ARRAY_MAX` items: every lookup by id is linear, so
    /// the size of what one call does stays bounded.
    pub(crate) fn array(&self, key: &str) -> Result<Option<&'a [Value]>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) if items.len() > ARRAY_MAX => Err(format!(
                "{}: at most {ARRAY_MAX} items, got {}",
                self.path(key),
                items.len()
            )),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(other) => Err(format!(
                "{}: expected an array, got {}",
                self.path(key),
                shown(other)
            )),
        }
    }

    /// An optional object field.
    pub(crate) fn object(&self, key: &str) -> Result<Option<&'a Map<String, Value>>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(map)) => Ok(Some(map)),
            Some(other) => Err(format!(
                "{}: expected an object, got {}",
                self.path(key),
                shown(other)
            )),
        }
    }

    /// An optional field that must be one of `allowed` (strings).
    pub(crate) fn choice(
        &self,
        key: &str,
        allowed: &[&'static str],
    ) -> Result<Option<&'static str>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => {
                let found = value
                    .as_str()
                    .and_then(|s| allowed.iter().copied().find(|a| *a == s));
                found
                    .map(Some)
                    .ok_or_else(|| one_of(&self.path(key), allowed, value))
            }
        }
    }
}

/// An integer within `min..=max`.
pub(crate) fn integer_in(value: &Value, path: &str, min: u64, max: u64) -> Result<u64, String> {
    match value.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "{path}: expected an integer from {min} to {max}, got {}",
            shown(value)
        )),
    }
}

/// A string value, naming `path` otherwise.
pub(crate) fn string_at<'a>(value: &'a Value, path: &str) -> Result<&'a str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("{path}: expected a string, got {}", shown(value)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_messages() {
        let value = json!({"mode": "fast", "mtu": "9000", "x": 1});
        let obj = Obj::new(&value, "links[2]", "a link").unwrap();
        assert_eq!(
            obj.choice("mode", &["balance-rr", "active-backup"])
                .unwrap_err(),
            "links[2].mode: expected one of balance-rr, active-backup, got \"fast\""
        );
        assert_eq!(
            obj.integer("mtu", 68, 65535).unwrap_err(),
            "links[2].mtu: expected an integer from 68 to 65535, got \"9000\""
        );
        assert_eq!(
            obj.only(&["mode", "mtu"]).unwrap_err(),
            "links[2].x: unknown field; expected one of mode, mtu"
        );
        assert_eq!(
            Obj::new(&json!(3), "links[0]", "a link").unwrap_err(),
            "links[0]: expected a link (a JSON object), got 3"
        );
        assert_eq!(join("", "links"), "links");
        assert_eq!(index("links", 3), "links[3]");
    }
}
