//! `meta_data.json`: who the host is and who it is for (`docs/network-config.md`, "metaData").
//!
//! The document holds `uuid` (the instance id cloud-init keys its per-instance state by: the
//! claim's id, else the host's system UUID, else its Podium id), `name`, `hostname`,
//! `local-hostname` and `local_hostname` (the name as a DNS label), `host_id`, `system_uuid`
//! (where known), the keys the host passes as context (`pod_manager`, `tenant`, `claim`) and
//! `meta`: the template's `meta_data` keys and, where the template allows, the claim's.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::template::{MAX_META_KEYS, Template, check_meta_entry};
use crate::{Error, Host};

/// The keys this module computes, which context keys may not replace.
const COMPUTED: &[&str] = &[
    "uuid",
    "name",
    "hostname",
    "local-hostname",
    "local_hostname",
    "host_id",
    "system_uuid",
    "meta",
];

/// Checks a claim's metaData keys against the template: only where `tenants.meta_data` allows
/// them, at most [`MAX_META_KEYS`], keys of 1 to 255 characters, values of at most 4096 bytes,
/// none given twice and none of the template's own keys. The error names the key
/// (`meta_data.rack: set by the site`).
pub fn check_consumer_meta(template: &Template, meta: &[(String, String)]) -> Result<(), String> {
    if meta.is_empty() {
        return Ok(());
    }
    if !template.tenants.meta_data {
        return Err("meta_data: this pod manager takes no metaData from claims".to_string());
    }
    if meta.len() > MAX_META_KEYS {
        return Err(format!(
            "meta_data: at most {MAX_META_KEYS} keys, got {}",
            meta.len()
        ));
    }
    for (i, (key, value)) in meta.iter().enumerate() {
        let path = format!("meta_data.{key}");
        check_meta_entry(key, Some(value), &path)?;
        if template.meta_data.contains_key(key) {
            return Err(format!("{path}: set by the site"));
        }
        if meta[..i].iter().any(|(k, _)| k == key) {
            return Err(format!("{path}: given twice"));
        }
    }
    Ok(())
}

/// A host name as a DNS label: lower-case, every character outside `[a-z0-9-]` replaced by `-`,
/// no leading or trailing `-`, at most 63 characters; `host-` and the first 8 characters of the
/// host's id when nothing is left.
pub fn hostname(name: &str, id: &str) -> String {
    let label = |text: &str| -> String {
        let mapped: String = text
            .chars()
            .map(|c| {
                let c = c.to_ascii_lowercase();
                if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let trimmed = mapped.trim_matches('-');
        let cut: String = trimmed.chars().take(63).collect();
        cut.trim_end_matches('-').to_string()
    };
    let from_name = label(name);
    if !from_name.is_empty() {
        return from_name;
    }
    let short: String = id.chars().take(8).collect();
    label(&format!("host-{short}"))
}

/// The `meta_data.json` document.
#[derive(Debug, Serialize)]
struct MetaData<'a> {
    uuid: &'a str,
    name: &'a str,
    hostname: &'a str,
    #[serde(rename = "local-hostname")]
    local_hyphen: &'a str,
    local_hostname: &'a str,
    host_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_uuid: Option<&'a str>,
    #[serde(flatten)]
    context: BTreeMap<&'a str, &'a str>,
    meta: BTreeMap<&'a str, &'a str>,
}

/// Renders `meta_data.json` for a host. `context` holds the keys the host sets (`pod_manager`,
/// `tenant`, `claim`); `consumer_meta` the claim's metaData keys, checked with
/// [`check_consumer_meta`].
pub fn render(
    template: &Template,
    host: &Host,
    context: &[(String, String)],
    consumer_meta: &[(String, String)],
) -> Result<String, Error> {
    check_consumer_meta(template, consumer_meta).map_err(Error::InvalidInput)?;
    let mut keys: BTreeMap<&str, &str> = BTreeMap::new();
    for (key, value) in context {
        if COMPUTED.contains(&key.as_str()) {
            return Err(Error::InvalidInput(format!(
                "context.{key}: the renderer sets {key} itself"
            )));
        }
        if keys.insert(key, value).is_some() {
            return Err(Error::InvalidInput(format!("context.{key}: given twice")));
        }
    }
    let system_uuid = host.uuid.as_deref().filter(|u| !u.is_empty());
    let uuid = keys
        .get("claim")
        .copied()
        .filter(|c| !c.is_empty())
        .or(system_uuid)
        .unwrap_or(&host.id);
    let label = hostname(&host.name, &host.id);
    let meta: BTreeMap<&str, &str> = template
        .meta_data
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(consumer_meta.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .collect();
    let document = MetaData {
        uuid,
        name: &host.name,
        hostname: &label,
        local_hyphen: &label,
        local_hostname: &label,
        host_id: &host.id,
        system_uuid,
        context: keys,
        meta,
    };
    serde_json::to_string(&document)
        .map_err(|e| Error::Internal(format!("meta_data: cannot serialize ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network_data::tests::{doc_host, doc_template};
    use serde_json::{Value, json};

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn context() -> Vec<(String, String)> {
        pairs(&[
            ("pod_manager", "5f0c1d2e-0000-4000-8000-000000000001"),
            ("tenant", "acme"),
            ("claim", "c1a1m000-0000-4000-8000-000000000009"),
        ])
    }

    #[test]
    fn keys_of_a_claimed_host() {
        let text = render(
            &doc_template(),
            &doc_host(),
            &context(),
            &pairs(&[("role", "worker")]),
        )
        .unwrap();
        let got: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            got,
            json!({
                "uuid": "c1a1m000-0000-4000-8000-000000000009",
                "name": "node-7",
                "hostname": "node-7",
                "local-hostname": "node-7",
                "local_hostname": "node-7",
                "host_id": "0b5e8a2c-5a39-4a4e-9f0a-6f0c5e3d2a11",
                "system_uuid": "4c4c4544-0047-3110-8052-b4c04f4b5a31",
                "pod_manager": "5f0c1d2e-0000-4000-8000-000000000001",
                "tenant": "acme",
                "claim": "c1a1m000-0000-4000-8000-000000000009",
                "meta": {"rack": "r12", "role": "worker"}
            })
        );
    }

    #[test]
    fn uuid_without_a_claim() {
        let context = pairs(&[("pod_manager", "pm")]);
        let got: Value =
            serde_json::from_str(&render(&doc_template(), &doc_host(), &context, &[]).unwrap())
                .unwrap();
        assert_eq!(got["uuid"], "4c4c4544-0047-3110-8052-b4c04f4b5a31");
        assert_eq!(got.get("tenant"), None);
        assert_eq!(got["meta"], json!({"rack": "r12"}));
        let mut host = doc_host();
        host.uuid = None;
        let got: Value =
            serde_json::from_str(&render(&Template::default(), &host, &context, &[]).unwrap())
                .unwrap();
        assert_eq!(got["uuid"], "0b5e8a2c-5a39-4a4e-9f0a-6f0c5e3d2a11");
        assert_eq!(got.get("system_uuid"), None);
        assert_eq!(got["meta"], json!({}));
    }

    #[test]
    fn hostnames() {
        assert_eq!(hostname("Node_7.Rack 12", "x"), "node-7-rack-12");
        assert_eq!(hostname("--édge--", "x"), "dge");
        assert_eq!(hostname("***", "0B5E8A2C-5a39"), "host-0b5e8a2c");
        assert_eq!(hostname("", "abc"), "host-abc");
        let long = format!("{}-{}", "a".repeat(62), "b".repeat(10));
        assert_eq!(hostname(&long, "x"), "a".repeat(62));
        assert_eq!(hostname(&"c".repeat(70), "x").len(), 63);
    }

    #[test]
    fn consumer_key_refused_when_not_allowed() {
        let mut template = doc_template();
        template.tenants.meta_data = false;
        let e = render(
            &template,
            &doc_host(),
            &context(),
            &pairs(&[("role", "worker")]),
        )
        .unwrap_err();
        assert_eq!(
            e,
            Error::InvalidInput("meta_data: this pod manager takes no metaData from claims".into())
        );
        // No keys is fine either way.
        assert!(check_consumer_meta(&template, &[]).is_ok());
    }

    #[test]
    fn consumer_key_overriding_a_site_key() {
        let e = check_consumer_meta(&doc_template(), &pairs(&[("role", "w"), ("rack", "r1")]))
            .unwrap_err();
        assert_eq!(e, "meta_data.rack: set by the site");
    }

    #[test]
    fn consumer_key_limits() {
        let t = doc_template();
        let many: Vec<(String, String)> = (0..65).map(|i| (format!("k{i}"), "v".into())).collect();
        assert_eq!(
            check_consumer_meta(&t, &many).unwrap_err(),
            "meta_data: at most 64 keys, got 65"
        );
        assert!(check_consumer_meta(&t, &many[..64]).is_ok());
        assert_eq!(
            check_consumer_meta(&t, &pairs(&[("", "v")])).unwrap_err(),
            "meta_data: a key is empty"
        );
        let long_key = "k".repeat(256);
        assert_eq!(
            check_consumer_meta(&t, &[(long_key.clone(), "v".into())]).unwrap_err(),
            format!("meta_data.{long_key}: the key is longer than 255 characters")
        );
        assert!(check_consumer_meta(&t, &[("k".repeat(255), "v".repeat(4096))]).is_ok());
        assert_eq!(
            check_consumer_meta(&t, &[("big".into(), "v".repeat(4097))]).unwrap_err(),
            "meta_data.big: the value is longer than 4096 bytes"
        );
        assert_eq!(
            check_consumer_meta(&t, &pairs(&[("a", "1"), ("a", "2")])).unwrap_err(),
            "meta_data.a: given twice"
        );
    }

    #[test]
    fn context_may_not_replace_computed_keys() {
        let e = render(&doc_template(), &doc_host(), &pairs(&[("uuid", "x")]), &[]).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidInput("context.uuid: the renderer sets uuid itself".into())
        );
    }
}
