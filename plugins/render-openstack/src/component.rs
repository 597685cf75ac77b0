//! The component: `render-openstack` as a [`podium_plugin::Renderer`], converting the contract's
//! records into the crate's plain types and its errors back. The logic lives in the other
//! modules.

use podium_plugin::render::{
    ConsumerInput, HostFacts, IpFamily, NetworkPolicy, PoolNeed, RenderInput, TemplateNeeds,
};
use podium_plugin::{Error, Plugin, PluginInfo, Renderer, Result};

/// The plugin (it takes no configuration but `{}`).
#[derive(Debug)]
pub struct RenderOpenstack;

impl Plugin for RenderOpenstack {
    fn info() -> PluginInfo {
        podium_plugin::info!(
            "render-openstack",
            "OpenStack meta_data.json and network_data.json from the pod manager's network \
             template, the claim's networkData, or both; config {}"
        )
    }

    fn from_config(config: &str) -> Result<Self> {
        crate::validate_config(config)
            .map(|()| RenderOpenstack)
            .map_err(to_wit)
    }
}

impl Renderer for RenderOpenstack {
    fn validate_template(&self, template: &str) -> Result<TemplateNeeds> {
        crate::validate_template(template)
            .map(|pools| TemplateNeeds {
                pools: pools
                    .into_iter()
                    .map(|(name, field, family)| PoolNeed {
                        name,
                        field,
                        family: match family {
                            crate::net::Family::V4 => IpFamily::Ipv4,
                            crate::net::Family::V6 => IpFamily::Ipv6,
                        },
                    })
                    .collect(),
            })
            .map_err(to_wit)
    }

    fn validate_consumer_input(
        &self,
        policy: NetworkPolicy,
        template: &str,
        host: Option<HostFacts>,
        input: ConsumerInput,
    ) -> Result<()> {
        let host = host.map(from_wit_host);
        crate::validate_consumer_input(
            from_wit_policy(policy),
            template,
            host.as_ref(),
            &from_wit_consumer(input),
        )
        .map_err(to_wit)
    }

    fn render_meta_data(&self, input: RenderInput) -> Result<String> {
        crate::render_meta_data(&from_wit_input(input)).map_err(to_wit)
    }

    fn render_network_data(&self, input: RenderInput) -> Result<String> {
        crate::render_network_data(&from_wit_input(input)).map_err(to_wit)
    }

    fn render_preprovisioning_network_data(
        &self,
        host: HostFacts,
        documents: Vec<String>,
    ) -> Result<String> {
        crate::preprovisioning::render(&from_wit_host(host), &documents).map_err(to_wit)
    }
}

podium_plugin::export!(RenderOpenstack: Renderer);

fn to_wit(error: crate::Error) -> Error {
    match error {
        crate::Error::NotFound(m) => Error::NotFound(m),
        crate::Error::Unsupported(m) => Error::Unsupported(m),
        crate::Error::InvalidConfig(m) => Error::InvalidConfig(m),
        crate::Error::InvalidInput(m) => Error::InvalidInput(m),
        crate::Error::Internal(m) => Error::Internal(m),
    }
}

fn from_wit_policy(policy: NetworkPolicy) -> crate::Policy {
    match policy {
        NetworkPolicy::Admin => crate::Policy::Admin,
        NetworkPolicy::Consumer => crate::Policy::Consumer,
        NetworkPolicy::Layered => crate::Policy::Layered,
    }
}

fn from_wit_host(host: HostFacts) -> crate::Host {
    crate::Host {
        id: host.id,
        name: host.name,
        uuid: host.uuid,
        boot_mac: host.boot_mac,
        nics: host
            .nics
            .into_iter()
            .map(|nic| crate::Nic {
                name: nic.name,
                mac: nic.mac,
            })
            .collect(),
    }
}

fn from_wit_consumer(input: ConsumerInput) -> crate::ConsumerInput {
    crate::ConsumerInput {
        network_data: input.network_data,
        meta: input.meta,
    }
}

fn from_wit_input(input: RenderInput) -> crate::RenderInput {
    crate::RenderInput {
        host: from_wit_host(input.host),
        policy: from_wit_policy(input.policy),
        template: input.template,
        addresses: input
            .addresses
            .into_iter()
            .map(|a| crate::Address {
                pool: a.pool,
                address: a.address,
                prefix: a.prefix,
                gateway: a.gateway,
                dns_servers: a.dns_servers,
            })
            .collect(),
        context: input.context,
        consumer: from_wit_consumer(input.consumer),
    }
}
