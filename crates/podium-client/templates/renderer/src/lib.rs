//! {{name}}: a metaData / networkData renderer, built on the podium-plugin SDK: DHCP on every
//! NIC of the host, and its identity in `meta_data.json`. Admin policy only.

use podium_plugin::render::{
    ConsumerInput, HostFacts, NetworkPolicy, RenderInput, TemplateNeeds,
};
use podium_plugin::prelude::*;
use serde::Deserialize;
use serde_json::json;

/// The configuration the admin sets: `{}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Render {}

impl Plugin for Render {
    fn info() -> PluginInfo {
        podium_plugin::info!("{{name}}", "DHCP on every NIC")
    }

    fn from_config(config: &str) -> Result<Self> {
        podium_plugin::config::parse(config)
    }
}

impl Renderer for Render {
    fn validate_template(&self, template: &str) -> Result<TemplateNeeds> {
        match serde_json::from_str::<serde_json::Value>(template) {
            Ok(v) if v.as_object().is_some_and(|o| o.is_empty()) => {
                Ok(TemplateNeeds { pools: Vec::new() })
            }
            _ => Err(Error::InvalidConfig(
                "template: this renderer takes no template but {}".to_owned(),
            )),
        }
    }

    fn validate_consumer_input(
        &self,
        policy: NetworkPolicy,
        _template: &str,
        _host: Option<HostFacts>,
        _input: ConsumerInput,
    ) -> Result<()> {
        match policy {
            NetworkPolicy::Admin => Ok(()),
            _ => Err(Error::Unsupported(
                "policy: this renderer takes nothing from consumers".to_owned(),
            )),
        }
    }

    fn render_meta_data(&self, input: RenderInput) -> Result<String> {
        let host = &input.host;
        Ok(json!({
            "uuid": host.uuid.clone().unwrap_or_else(|| host.id.clone()),
            "hostname": host.name,
            "name": host.name,
        })
        .to_string())
    }

    fn render_network_data(&self, input: RenderInput) -> Result<String> {
        Ok(dhcp_everywhere(&input.host))
    }

    fn render_preprovisioning_network_data(
        &self,
        host: HostFacts,
        _documents: Vec<String>,
    ) -> Result<String> {
        Ok(dhcp_everywhere(&host))
    }
}

fn dhcp_everywhere(host: &HostFacts) -> String {
    let links: Vec<_> = host
        .nics
        .iter()
        .enumerate()
        .map(|(i, nic)| json!({"id": format!("nic{i}"), "type": "phy", "ethernet_mac_address": nic.mac}))
        .collect();
    let networks: Vec<_> = (0..host.nics.len())
        .map(|i| json!({"id": format!("net{i}"), "type": "ipv4_dhcp", "link": format!("nic{i}")}))
        .collect();
    json!({"links": links, "networks": networks, "services": []}).to_string()
}

podium_plugin::export!(Render: Renderer);
