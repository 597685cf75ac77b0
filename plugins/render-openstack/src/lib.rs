//! `render-openstack`: a renderer plugin (world `renderer`) that writes what a provisioned host
//! reads at boot, OpenStack's `meta_data.json` and `network_data.json`, from the pod manager's
//! network template (policy `admin`), the claim's own networkData (`consumer`), or the template
//! plus the claim's additions on the links it opens to tenants (`layered`).
//!
//! `docs/network-config.md` is the specification: the template format, the rendering rules, the
//! three policies and metaData. Where it is silent, this crate does what cloud-init's OpenStack
//! reader (`convert_net_json`) expects; the modules say where.
//!
//! The logic is plain Rust, tested natively:
//! - [`template`]: the template's model, parsing and validation;
//! - [`network_data`]: the `network_data.json` model and the template's rendering for a host;
//! - [`consumer`]: a claim's `network_data` (whole document or additions) and the merge;
//! - [`meta_data`]: `meta_data.json` and the claim's metaData keys;
//! - [`net`]: MACs, IP addresses, netmasks and CIDRs.
//!
//! The functions below are the WIT interface's calls in plain Rust; `component.rs` only converts
//! the WIT types and exports them.

pub mod consumer;
pub mod meta_data;
pub mod net;
pub mod network_data;
pub mod preprovisioning;
pub mod template;

mod component;
pub use component::RenderOpenstack;
mod json;

use template::Template;

/// A NIC of the host (WIT `nic`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nic {
    pub name: Option<String>,
    /// Lower-case, colon-separated (any case is accepted).
    pub mac: String,
}

/// What the renderer knows of a host (WIT `host-facts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// The host's Podium id.
    pub id: String,
    pub name: String,
    /// The system UUID, where known.
    pub uuid: Option<String>,
    /// The MAC of the NIC the host boots from, where known.
    pub boot_mac: Option<String>,
    pub nics: Vec<Nic>,
}

/// An address IPAM holds for the host (WIT `address`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// The pool's name, as the template names it.
    pub pool: String,
    pub address: String,
    pub prefix: u8,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
}

/// Who owns a host's network configuration (WIT `network-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// The template and IPAM; a claim brings no networkData.
    Admin,
    /// The claim's whole `network_data.json`; the template where the claim brings none.
    Consumer,
    /// The template, plus the claim's additions on the links it opens to tenants.
    Layered,
}

/// What a claim brought (WIT `consumer-input`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsumerInput {
    /// `network_data.json` (JSON text): a whole document under `consumer`, additions under
    /// `layered`.
    pub network_data: Option<String>,
    /// metaData keys.
    pub meta: Vec<(String, String)>,
}

/// Everything a rendering takes (WIT `render-input`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderInput {
    pub host: Host,
    pub policy: Policy,
    /// The template (JSON text); `{}` where the admin set none.
    pub template: String,
    /// One address per pool of the template.
    pub addresses: Vec<Address>,
    /// metaData keys the host sets (`pod_manager`, `tenant`, `claim`).
    pub context: Vec<(String, String)>,
    pub consumer: ConsumerInput,
}

/// Why a call failed: the cases of the WIT `error` this plugin uses. Every message starts with
/// the offending field's path and a colon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The host lacks something the template names (a NIC).
    NotFound(String),
    /// The policy takes nothing from consumers.
    Unsupported(String),
    /// The template (or the plugin's configuration) is invalid.
    InvalidConfig(String),
    /// A consumer's documents, or the host's facts or addresses, are invalid or do not fit.
    InvalidInput(String),
    /// A bug.
    Internal(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound(m) => write!(f, "not found: {m}"),
            Self::Unsupported(m) => write!(f, "unsupported: {m}"),
            Self::InvalidConfig(m) => write!(f, "invalid config: {m}"),
            Self::InvalidInput(m) => write!(f, "invalid input: {m}"),
            Self::Internal(m) => write!(f, "internal: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Checks the plugin's configuration: it takes none, so only `{}` passes.
pub fn validate_config(config: &str) -> Result<(), Error> {
    let bad = |m: String| Err(Error::InvalidConfig(m));
    match serde_json::from_str::<serde_json::Value>(config) {
        Ok(serde_json::Value::Object(map)) => match map.keys().next() {
            None => Ok(()),
            Some(key) => bad(format!(
                "{key}: unknown field; render-openstack takes no configuration (only {{}})"
            )),
        },
        Ok(other) => bad(format!(
            "config: expected {{}}, got {}",
            json::shown(&other)
        )),
        Err(e) => bad(format!("config: not valid JSON ({e})")),
    }
}

/// Checks a template and returns the pools it takes addresses from, in network order.
pub fn validate_template(template: &str) -> Result<Vec<(String, String, net::Family)>, Error> {
    Ok(parse_template(template)?.pool_needs())
}

/// Checks what a claim brought against the policy, the template and, where given, the host.
///
/// Under `consumer` the whole document is checked, and with a host every `phy` link's MAC must be
/// one of its NICs; under `layered` the additions are checked against the template (they name
/// only the template's links, so the host adds nothing); under `admin` any network data is
/// `unsupported`. The claim's metaData keys are checked under every policy.
pub fn validate_consumer_input(
    policy: Policy,
    template: &str,
    host: Option<&Host>,
    input: &ConsumerInput,
) -> Result<(), Error> {
    let template = parse_template(template)?;
    claim_network_data(policy, &template, host, input.network_data.as_deref())?;
    meta_data::check_consumer_meta(&template, &input.meta).map_err(Error::InvalidInput)
}

/// Renders `meta_data.json` (JSON text).
pub fn render_meta_data(input: &RenderInput) -> Result<String, Error> {
    let template = parse_template(&input.template)?;
    meta_data::render(&template, &input.host, &input.context, &input.consumer.meta)
}

/// Renders `network_data.json` (JSON text) as the policy says.
///
/// Under `admin` the claim's network data is not looked at: `validate_consumer_input` refuses it
/// when a claim is made, and a claim made before the pod manager's policy became `admin` renders
/// as the site says rather than not at all.
pub fn render_network_data(input: &RenderInput) -> Result<String, Error> {
    let template = parse_template(&input.template)?;
    let host = &input.host;
    let claimed = match input.policy {
        Policy::Admin => None,
        policy => claim_network_data(
            policy,
            &template,
            Some(host),
            input.consumer.network_data.as_deref(),
        )?,
    };
    let document = match claimed {
        Some(Claimed::Whole(document)) => document,
        Some(Claimed::Additions(additions)) => consumer::merge(
            network_data::render(&template, host, &input.addresses)?,
            additions,
        ),
        None => network_data::render(&template, host, &input.addresses)?,
    };
    document.to_json()
}

/// A stored template; an invalid one is the admin's `invalid-config`.
fn parse_template(text: &str) -> Result<Template, Error> {
    Template::parse(text).map_err(Error::InvalidConfig)
}

/// A claim's network data, checked under the policy.
enum Claimed {
    /// Policy `consumer`: the document, normalized.
    Whole(network_data::NetworkData),
    /// Policy `layered`: what goes on top of the template's rendering.
    Additions(network_data::NetworkData),
}

/// Checks the claim's network data under the policy; `None` when it brought none.
fn claim_network_data(
    policy: Policy,
    template: &Template,
    host: Option<&Host>,
    network_data: Option<&str>,
) -> Result<Option<Claimed>, Error> {
    let Some(text) = consumer::brought(network_data) else {
        return Ok(None);
    };
    match policy {
        Policy::Admin => Err(Error::Unsupported(
            "network_data: the site owns network config on this pod manager (policy admin); a \
             claim cannot bring its own"
                .to_string(),
        )),
        Policy::Consumer => consumer::parse_document(text, host).map(|d| Some(Claimed::Whole(d))),
        Policy::Layered => {
            consumer::parse_additions(text, template).map(|d| Some(Claimed::Additions(d)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network_data::tests::{doc_addresses, doc_host, doc_rendering};
    use serde_json::{Value, json};

    fn input(policy: Policy, network_data: Option<Value>) -> RenderInput {
        RenderInput {
            host: doc_host(),
            policy,
            template: crate::template::tests::doc_template().to_string(),
            addresses: doc_addresses(),
            context: vec![("claim".into(), "c-1".into())],
            consumer: ConsumerInput {
                network_data: network_data.map(|v| v.to_string()),
                meta: vec![],
            },
        }
    }

    fn rendered(input: &RenderInput) -> Value {
        serde_json::from_str(&render_network_data(input).unwrap()).unwrap()
    }

    #[test]
    fn config_is_empty_only() {
        assert_eq!(validate_config("{}"), Ok(()));
        assert_eq!(validate_config(" { } "), Ok(()));
        assert_eq!(
            validate_config(r#"{"mode": 1}"#),
            Err(Error::InvalidConfig(
                "mode: unknown field; render-openstack takes no configuration (only {})".into()
            ))
        );
        assert!(
            matches!(validate_config("[]"), Err(Error::InvalidConfig(m)) if m.starts_with("config: expected {}"))
        );
        assert!(
            matches!(validate_config(""), Err(Error::InvalidConfig(m)) if m.starts_with("config: not valid JSON"))
        );
    }

    #[test]
    fn template_needs_its_pools() {
        let t = crate::template::tests::doc_template().to_string();
        assert_eq!(
            validate_template(&t).unwrap(),
            [
                (
                    "prod-v4".to_owned(),
                    "networks[0].pool".to_owned(),
                    net::Family::V4
                ),
                (
                    "prod-v6".to_owned(),
                    "networks[1].pool".to_owned(),
                    net::Family::V6
                )
            ]
        );
        assert!(validate_template("{}").unwrap().is_empty());
        assert!(matches!(
            validate_template(r#"{"links": [{"id": "a", "type": "phy", "nic": "boot", "x": 1}]}"#),
            Err(Error::InvalidConfig(m)) if m.starts_with("links[0].x: unknown field")
        ));
    }

    #[test]
    fn admin_policy_refuses_network_data() {
        let t = crate::template::tests::doc_template().to_string();
        let given = ConsumerInput {
            network_data: Some(r#"{"links": []}"#.into()),
            meta: vec![],
        };
        let e = validate_consumer_input(Policy::Admin, &t, None, &given).unwrap_err();
        assert!(
            matches!(&e, Error::Unsupported(m) if m.starts_with("network_data: the site owns network config")),
            "{e:?}"
        );
        let none = ConsumerInput {
            network_data: Some("{}".into()),
            meta: vec![("role".into(), "worker".into())],
        };
        assert_eq!(
            validate_consumer_input(Policy::Admin, &t, None, &none),
            Ok(())
        );
        // A claim made under another policy renders as the site says.
        let got = rendered(&input(Policy::Admin, Some(json!({"links": []}))));
        assert_eq!(got, doc_rendering());
    }

    #[test]
    fn admin_renders_the_template() {
        assert_eq!(rendered(&input(Policy::Admin, None)), doc_rendering());
    }

    #[test]
    fn consumer_renders_its_own_or_the_template() {
        assert_eq!(rendered(&input(Policy::Consumer, None)), doc_rendering());
        let doc = json!({"links": [{"id": "p", "type": "phy", "ethernet_mac_address": "52:54:00:AA:00:02"}],
                         "networks": [{"id": "d", "type": "ipv4_dhcp", "link": "p"}]});
        assert_eq!(
            rendered(&input(Policy::Consumer, Some(doc))),
            json!({"links": [{"id": "p", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:02"}],
                   "networks": [{"id": "d", "type": "ipv4_dhcp", "link": "p"}],
                   "services": []})
        );
        let doc = json!({"links": [{"id": "p", "type": "phy", "ethernet_mac_address": "52:54:00:aa:00:09"}]});
        let e = render_network_data(&input(Policy::Consumer, Some(doc))).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidInput(m) if m.starts_with("network_data.links[0].ethernet_mac_address: host node-7 has no NIC")),
            "{e:?}"
        );
    }

    #[test]
    fn layered_renders_template_and_additions() {
        let additions = json!({
            "links": [{"id": "app", "type": "vlan", "vlan_link": "bond0", "vlan_id": 210}],
            "networks": [{"id": "app-net", "type": "ipv4", "link": "app", "ip_address": "172.16.5.9",
                          "netmask": "255.255.0.0"}],
            "services": [{"type": "dns", "address": "192.0.2.53"}]
        });
        let got = rendered(&input(Policy::Layered, Some(additions)));
        assert_eq!(got["links"][5]["vlan_mac_address"], "52:54:00:aa:00:01");
        assert_eq!(got["networks"][3]["id"], "app-net");
        assert_eq!(got["services"], doc_rendering()["services"]);
        assert_eq!(got["links"].as_array().map(Vec::len), Some(6));
    }

    #[test]
    fn meta_checked_under_every_policy() {
        let mut t = crate::template::tests::doc_template();
        t["tenants"]["meta_data"] = json!(false);
        let meta = ConsumerInput {
            network_data: None,
            meta: vec![("role".into(), "worker".into())],
        };
        for policy in [Policy::Admin, Policy::Consumer, Policy::Layered] {
            assert_eq!(
                validate_consumer_input(policy, &t.to_string(), None, &meta),
                Err(Error::InvalidInput(
                    "meta_data: this pod manager takes no metaData from claims".into()
                ))
            );
        }
        let mut render = input(Policy::Admin, None);
        render.consumer.meta = vec![("role".into(), "worker".into())];
        let got: Value = serde_json::from_str(&render_meta_data(&render).unwrap()).unwrap();
        assert_eq!(got["meta"], json!({"rack": "r12", "role": "worker"}));
        assert_eq!(got["uuid"], "c-1");
    }
}
