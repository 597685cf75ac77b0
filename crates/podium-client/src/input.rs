//! What the commands take from the command line, stdin and files, checked (and encoded where it
//! goes into a URL) before it reaches the API.

use std::io::Read;

use anyhow::{Context, bail};
use serde_json::Value;

/// A `key=value` flag (`--selector`, `--meta`).
pub(super) fn key_value(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("`{s}` is not key=value"))
}

/// A flag's value as the model's type it names (a power action, a phase): its error says
/// which values there are.
pub(super) fn parsed<T: serde::de::DeserializeOwned>(flag: &str, value: &str) -> anyhow::Result<T> {
    serde_json::from_value(Value::String(value.to_owned()))
        .map_err(|e| anyhow::anyhow!("{flag}: {e}"))
}

/// The first line of stdin, trimmed (a token, a password); an error where there is none.
pub(super) fn read_stdin_line(what: &str) -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .take(64 << 10)
        .read_to_string(&mut text)
        .with_context(|| format!("reading the {what} from stdin"))?;
    let line = text.lines().next().unwrap_or("").trim().to_owned();
    if line.is_empty() {
        bail!("no {what} on stdin");
    }
    Ok(line)
}

/// A JSON document from a file, or from stdin for `-`.
pub(super) fn read_json_file(path: &std::path::Path) -> anyhow::Result<Value> {
    let bytes = if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
        buf
    } else {
        std::fs::read(path).with_context(|| format!("reading {}", path.display()))?
    };
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))
}

/// A path segment from the command line, percent-encoded (everything but unreserved
/// characters), so an id cannot reach another route; `.` and `..` are refused, since URLs
/// resolve them even encoded.
pub(super) fn seg(s: &str) -> anyhow::Result<String> {
    if s.is_empty() || s.trim_matches('.').is_empty() {
        bail!("`{s}` is not an id");
    }
    Ok(s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::seg;

    #[test]
    fn path_segments_cannot_leave_their_route() {
        assert_eq!(seg("0192-ab_c~").unwrap(), "0192-ab_c~");
        assert_eq!(seg("a/b c?d").unwrap(), "a%2Fb%20c%3Fd");
        assert_eq!(seg("1.2").unwrap(), "1%2E2");
        assert!(seg("..").is_err() && seg(".").is_err() && seg("").is_err());
    }
}
