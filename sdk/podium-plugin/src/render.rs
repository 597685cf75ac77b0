//! The `renderer` world: the `meta_data.json` and `network_data.json` a booted host reads.

use std::marker::PhantomData;

use crate::wit::renderer::exports::podium::plugin::{plugin, render};
use crate::{Plugin, PluginInfo, Result};

pub use crate::wit::renderer::exports::podium::plugin::render::{
    Address, ConsumerInput, HostFacts, IpFamily, NetworkPolicy, Nic, PoolNeed, RenderInput,
    TemplateNeeds,
};

/// A renderer. Every method is a pure function of its arguments (and the configuration): the
/// host calls them again whenever it needs the documents.
///
/// Error messages of `invalid-config` (a template) and `invalid-input` (a consumer's documents)
/// start with the path of the offending field and a colon (`links[2].bond_mode: ...`): the host
/// turns the path into the `field` of its 422.
pub trait Renderer: Plugin {
    /// Checks a template (`invalid-config` names the field) and says which pools it takes
    /// addresses from.
    fn validate_template(&self, template: &str) -> Result<TemplateNeeds>;

    /// Checks what a consumer brought against the policy, the template and, where given, the
    /// host.
    fn validate_consumer_input(
        &self,
        policy: NetworkPolicy,
        template: &str,
        host: Option<HostFacts>,
        input: ConsumerInput,
    ) -> Result<()>;

    /// `meta_data.json`, as JSON text.
    fn render_meta_data(&self, input: RenderInput) -> Result<String>;

    /// `network_data.json`, as JSON text.
    fn render_network_data(&self, input: RenderInput) -> Result<String>;

    /// The ramdisk's `network_data.json` before the host is provisioned, from the documents the
    /// DHCP-less IPAM pools wrote for its boot NIC.
    fn render_preprovisioning_network_data(
        &self,
        host: HostFacts,
        documents: Vec<String>,
    ) -> Result<String>;
}

/// The component's exports for a [`Renderer`] (what [`export!`](crate::export) names).
#[doc(hidden)]
#[derive(Debug)]
pub struct Export<T>(PhantomData<T>);

impl<T: Renderer> plugin::Guest for Export<T> {
    fn info() -> PluginInfo {
        crate::host::bind_0_1();
        T::info()
    }

    fn validate_config(config: String) -> Result<()> {
        crate::host::bind_0_1();
        T::from_config(&config).map(drop)
    }
}

impl<T: Renderer> render::Guest for Export<T> {
    fn validate_template(template: String) -> Result<TemplateNeeds> {
        crate::with_config(|t: &T| t.validate_template(&template))
    }

    fn validate_consumer_input(
        policy: NetworkPolicy,
        template: String,
        host: Option<HostFacts>,
        input: ConsumerInput,
    ) -> Result<()> {
        crate::with_config(|t: &T| t.validate_consumer_input(policy, &template, host, input))
    }

    fn render_meta_data(input: RenderInput) -> Result<String> {
        crate::with_config(|t: &T| t.render_meta_data(input))
    }

    fn render_network_data(input: RenderInput) -> Result<String> {
        crate::with_config(|t: &T| t.render_network_data(input))
    }

    fn render_preprovisioning_network_data(
        host: HostFacts,
        documents: Vec<String>,
    ) -> Result<String> {
        crate::with_config(|t: &T| t.render_preprovisioning_network_data(host, documents))
    }
}
