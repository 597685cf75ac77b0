//! Calls to renderer plugins: templates checked, consumer documents checked, `meta_data.json`
//! and `network_data.json` rendered. Every document a plugin returns is checked to be a JSON
//! object of bounded size before the host stores or serves it.

use super::super::bindings::wit_render as wr;
use super::super::{Plugin, Pre, Runtime};
use super::{CallContext, CallError, Prepared, clip, plugin_err};

/// `call_export!` of this call's plugin, a renderer.
macro_rules! render_export {
    ($call:ident, |$b:ident, $s:ident| $e:expr) => {
        call_export!(
            $call.runtime,
            $call.plugin,
            $call.context,
            Renderer,
            "renderer",
            |$b, $s| $e
        )
    };
}

/// The largest document (template summary aside) a renderer may return.
const DOCUMENT_MAX: usize = 256 << 10;
/// The most pools a template may name.
const POOLS_MAX: usize = 64;

/// Who owns a host's network configuration on its pod manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkPolicy {
    Admin,
    Consumer,
    Layered,
}

/// A host as a renderer sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderHost {
    pub id: String,
    pub name: String,
    pub uuid: Option<String>,
    pub boot_mac: Option<String>,
    /// `(name, mac)` of each NIC.
    pub nics: Vec<(Option<String>, String)>,
}

/// An address IPAM holds for the host being rendered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderAddress {
    /// The pool's name.
    pub pool: String,
    pub address: String,
    pub prefix: u8,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
}

/// What a consumer brought with its claim.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumerInput {
    /// JSON text.
    pub network_data: Option<String>,
    pub meta: Vec<(String, String)>,
}

/// A pool a template takes an address from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolNeed {
    pub name: String,
    /// Where the template names it (`networks[0].pool`).
    pub field: String,
    pub ipv6: bool,
}

/// Everything one rendering needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderInput {
    pub host: RenderHost,
    pub policy: NetworkPolicy,
    /// JSON text; `{}` where the admin set none.
    pub template: String,
    pub addresses: Vec<RenderAddress>,
    /// `pod_manager`, `tenant`, `claim`.
    pub context: Vec<(String, String)>,
    pub consumer: ConsumerInput,
}

impl From<NetworkPolicy> for wr::NetworkPolicy {
    fn from(p: NetworkPolicy) -> wr::NetworkPolicy {
        match p {
            NetworkPolicy::Admin => wr::NetworkPolicy::Admin,
            NetworkPolicy::Consumer => wr::NetworkPolicy::Consumer,
            NetworkPolicy::Layered => wr::NetworkPolicy::Layered,
        }
    }
}

impl From<&RenderHost> for wr::HostFacts {
    fn from(h: &RenderHost) -> wr::HostFacts {
        wr::HostFacts {
            id: h.id.clone(),
            name: h.name.clone(),
            uuid: h.uuid.clone(),
            boot_mac: h.boot_mac.clone(),
            nics: h
                .nics
                .iter()
                .map(|(name, mac)| wr::Nic {
                    name: name.clone(),
                    mac: mac.clone(),
                })
                .collect(),
        }
    }
}

impl From<&ConsumerInput> for wr::ConsumerInput {
    fn from(c: &ConsumerInput) -> wr::ConsumerInput {
        wr::ConsumerInput {
            network_data: c.network_data.clone(),
            meta: c.meta.clone(),
        }
    }
}

impl From<&RenderInput> for wr::RenderInput {
    fn from(i: &RenderInput) -> wr::RenderInput {
        wr::RenderInput {
            host: (&i.host).into(),
            policy: i.policy.into(),
            template: i.template.clone(),
            addresses: i
                .addresses
                .iter()
                .map(|a| wr::Address {
                    pool: a.pool.clone(),
                    address: a.address.clone(),
                    prefix: a.prefix,
                    gateway: a.gateway.clone(),
                    dns_servers: a.dns_servers.clone(),
                })
                .collect(),
            context: i.context.clone(),
            consumer: (&i.consumer).into(),
        }
    }
}

impl Runtime {
    /// A call to a renderer, bound to its configuration.
    pub fn renderer<'a>(&'a self, plugin: &'a Plugin, context: CallContext) -> RenderCall<'a> {
        RenderCall {
            runtime: self,
            plugin,
            context,
        }
    }
}

/// One call to a renderer plugin. Each method consumes it: one call, one instance.
#[derive(Debug)]
pub struct RenderCall<'a> {
    runtime: &'a Runtime,
    plugin: &'a Plugin,
    context: CallContext,
}

impl RenderCall<'_> {
    /// Checks a template; answers the pools it takes addresses from.
    pub async fn validate_template(self, template: &str) -> Result<Vec<PoolNeed>, CallError> {
        let template = template.to_owned();
        let (label, result) = render_export!(self, |b, s| b
            .podium_plugin_render()
            .call_validate_template(s, &template));
        let needs = result.map_err(plugin_err(label.clone()))?;
        if needs.pools.len() > POOLS_MAX
            || needs
                .pools
                .iter()
                .any(|p| p.name.is_empty() || p.name.len() > 255 || p.field.len() > 255)
        {
            return Err(CallError::Malformed {
                plugin: label,
                reason: format!(
                    "validate-template named {} pools (at most {POOLS_MAX}, each 1 to 255 bytes)",
                    needs.pools.len()
                ),
            });
        }
        Ok(needs
            .pools
            .into_iter()
            .map(|p| PoolNeed {
                name: p.name,
                field: p.field,
                ipv6: matches!(p.family, wr::IpFamily::Ipv6),
            })
            .collect())
    }

    /// Checks what a consumer brought, against the host where one is given.
    pub async fn validate_consumer_input(
        self,
        policy: NetworkPolicy,
        template: &str,
        host: Option<&RenderHost>,
        input: &ConsumerInput,
    ) -> Result<(), CallError> {
        let (template, host, input) = (
            template.to_owned(),
            host.map(wr::HostFacts::from),
            wr::ConsumerInput::from(input),
        );
        let (label, result) = render_export!(self, |b, s| b
            .podium_plugin_render()
            .call_validate_consumer_input(s, policy.into(), &template, host.as_ref(), &input));
        result.map_err(plugin_err(label))
    }

    /// `meta_data.json`.
    pub async fn render_meta_data(
        self,
        input: &RenderInput,
    ) -> Result<serde_json::Value, CallError> {
        let input = wr::RenderInput::from(input);
        let (label, result) = render_export!(self, |b, s| b
            .podium_plugin_render()
            .call_render_meta_data(s, &input));
        let text = result.map_err(plugin_err(label.clone()))?;
        document(label, "render-meta-data", text)
    }

    /// `network_data.json`.
    pub async fn render_network_data(
        self,
        input: &RenderInput,
    ) -> Result<serde_json::Value, CallError> {
        let input = wr::RenderInput::from(input);
        let (label, result) = render_export!(self, |b, s| b
            .podium_plugin_render()
            .call_render_network_data(s, &input));
        let text = result.map_err(plugin_err(label.clone()))?;
        document(label, "render-network-data", text)
    }

    /// The ramdisk's `network_data.json`, from the documents of the DHCP-less pools for the
    /// host's boot NIC (or DHCP on it, where there are none).
    pub async fn render_preprovisioning_network_data(
        self,
        host: &RenderHost,
        documents: &[serde_json::Value],
    ) -> Result<serde_json::Value, CallError> {
        let host = wr::HostFacts::from(host);
        let documents: Vec<String> = documents.iter().map(|d| d.to_string()).collect();
        let (label, result) = render_export!(self, |b, s| b
            .podium_plugin_render()
            .call_render_preprovisioning_network_data(s, &host, &documents));
        let text = result.map_err(plugin_err(label.clone()))?;
        document(label, "render-preprovisioning-network-data", text)
    }
}

/// Checks that a plugin's document is a JSON object of bounded size.
fn document(label: String, function: &str, text: String) -> Result<serde_json::Value, CallError> {
    let malformed = |reason: String| CallError::Malformed {
        plugin: label.clone(),
        reason,
    };
    if text.len() > DOCUMENT_MAX {
        return Err(malformed(format!(
            "{function} returned {} bytes (at most {DOCUMENT_MAX})",
            text.len()
        )));
    }
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(_) => Err(malformed(format!(
            "{function} returned JSON that is not an object"
        ))),
        Err(e) => Err(malformed(format!(
            "{function} returned invalid JSON: {e}; it began {}",
            clip(text, 64)
        ))),
    }
}
