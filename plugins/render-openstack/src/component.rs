//! The WIT glue: generates the `renderer` world's bindings, converts its records into the crate's
//! plain types and its errors back, and exports the component. The logic lives in the other
//! modules.

wit_bindgen::generate!({
    path: "../../wit/podium-plugin@0.1.0",
    world: "renderer",
});

use exports::podium::plugin::plugin::Guest as PluginGuest;
use exports::podium::plugin::render::{
    ConsumerInput, Guest as RenderGuest, HostFacts, IpFamily, NetworkPolicy, PoolNeed, RenderInput,
    TemplateNeeds,
};
use podium::plugin::types::{Error, PluginInfo};

/// The exported component; only `export_glue` names it, hence unused in native builds.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Component;

impl PluginGuest for Component {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "render-openstack".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "OpenStack meta_data.json and network_data.json from the pod manager's \
                          network template, the claim's networkData, or both; config {}"
                .into(),
        }
    }

    fn validate_config(config: String) -> Result<(), Error> {
        crate::validate_config(&config).map_err(to_wit)
    }
}

impl RenderGuest for Component {
    fn validate_template(template: String) -> Result<TemplateNeeds, Error> {
        crate::validate_template(&template)
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
        policy: NetworkPolicy,
        template: String,
        host: Option<HostFacts>,
        input: ConsumerInput,
    ) -> Result<(), Error> {
        let host = host.map(from_wit_host);
        crate::validate_consumer_input(
            from_wit_policy(policy),
            &template,
            host.as_ref(),
            &from_wit_consumer(input),
        )
        .map_err(to_wit)
    }

    fn render_meta_data(input: RenderInput) -> Result<String, Error> {
        crate::render_meta_data(&from_wit_input(input)).map_err(to_wit)
    }

    fn render_network_data(input: RenderInput) -> Result<String, Error> {
        crate::render_network_data(&from_wit_input(input)).map_err(to_wit)
    }

    fn render_preprovisioning_network_data(
        host: HostFacts,
        documents: Vec<String>,
    ) -> Result<String, Error> {
        crate::preprovisioning::render(&from_wit_host(host), &documents).map_err(to_wit)
    }
}

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

/// `export!` expands to the exports' C-ABI shims (`export_name`, raw pointers), which are `unsafe`;
/// the workspace denies `unsafe_code`, so the lint is allowed for that expansion alone. Native
/// builds (unit tests, clippy) leave it out: export names like `podium:plugin/...#info` are not
/// valid symbols for a native linker.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod export_glue {
    use super::Component;
    super::export!(Component with_types_in super);
}
