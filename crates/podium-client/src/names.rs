//! Names where the API wants ids: every command that takes the id of a pod manager, tenant,
//! IP pool or host also takes its name (`podium grant create --tenant acme --pod-manager lab1`),
//! looked up with the collection's `?name=` filter. A name several things have is an error that lists their ids; a
//! name nothing has is passed on as an id, so the API's `not found` names it.

use anyhow::bail;
use serde_json::Value;

use super::client::Client;

/// What a name is looked up among.
#[derive(Clone, Copy, Debug)]
pub(super) enum Named {
    PodManager,
    /// A pod manager a tenant was granted (what a tenant's token names).
    GrantedPodManager,
    Tenant,
    Pool,
    Host,
}

impl Named {
    fn what(self) -> &'static str {
        match self {
            Named::PodManager | Named::GrantedPodManager => "pod manager",
            Named::Tenant => "tenant",
            Named::Pool => "IP pool",
            Named::Host => "host",
        }
    }

    /// Where the API lists the things named `name` (every collection filters by name).
    fn lookup(self, name: &str) -> String {
        let name: String = url::form_urlencoded::byte_serialize(name.as_bytes()).collect();
        let collection = match self {
            Named::PodManager => "/v1/pod_managers",
            Named::GrantedPodManager => "/v1/me/pod_managers",
            Named::Tenant => "/v1/tenants",
            Named::Pool => "/v1/ip_pools",
            Named::Host => "/v1/hosts",
        };
        format!("{collection}?name={name}")
    }

    fn id_field(self) -> &'static str {
        match self {
            Named::PodManager | Named::GrantedPodManager => "uuid",
            _ => "id",
        }
    }
}

/// Ids are UUIDs; anything else is a name.
pub(super) fn is_id(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `value` as an id: itself where it is one, else the id of the one `kind` named so.
pub(super) async fn resolve(client: &Client, kind: Named, value: &str) -> anyhow::Result<String> {
    if is_id(value) {
        return Ok(value.to_owned());
    }
    let items = match client.list(&kind.lookup(value)).await {
        Ok(items) => items,
        Err(e) => bail!(
            "cannot look up the {} named `{value}` ({e:#}); give its id instead",
            kind.what()
        ),
    };
    let ids = matching(&items, kind, value);
    match ids.as_slice() {
        [id] => Ok(id.clone()),
        // Nothing is named so: it may be an id after all, and the API says whether it is.
        [] => Ok(value.to_owned()),
        many => bail!(
            "`{value}` names {} {}s ({}): give the id of the one you mean",
            many.len(),
            kind.what(),
            many.join(", ")
        ),
    }
}

fn matching(items: &[Value], kind: Named, name: &str) -> Vec<String> {
    items
        .iter()
        .filter(|item| item["name"] == name)
        .filter_map(|item| item[kind.id_field()].as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_uuids_are_ids() {
        assert!(is_id("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"));
        assert!(!is_id("lab1"));
        assert!(!is_id("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5"));
        assert!(!is_id("0193a1b2xc3d4-7e5f-8a9b-0c1d2e3f4a5b"));
    }

    #[test]
    fn a_name_matches_by_equality_only() {
        let items = serde_json::json!([
            {"uuid": "a", "name": "lab1"},
            {"uuid": "b", "name": "lab10"},
            {"uuid": "c", "name": "lab1"},
        ]);
        let items = items.as_array().unwrap();
        assert_eq!(matching(items, Named::PodManager, "lab1"), ["a", "c"]);
        assert_eq!(matching(items, Named::PodManager, "lab10"), ["b"]);
        assert!(matching(items, Named::PodManager, "lab").is_empty());
    }
}
