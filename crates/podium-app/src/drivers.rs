//! The one way to a driver: a pod manager's, or a host's (through its own BMC where it has
//! one, else its pod manager's), with its plugin, its configuration and the endpoint it may
//! reach, the BMC's credentials unsealed once, here, for as many calls as the work needs.

use crate::data::Host;
use podium_runtime::{CallContext, Credentials, DriverCall, Endpoint, Plugin, Runtime};
use podium_types::PodManagerId;
use url::Url;

use crate::app::Podium;
use crate::data::PodManager;
use crate::endpoint::Bmc;
use crate::error::Error;
use crate::plugins::Plugins;
use crate::sealing::Sealer;

/// A driver ready to call: each `call` is one plugin call (one instance), on the same endpoint.
pub(crate) struct Driver<'a> {
    runtime: &'a Runtime,
    plugin: Plugin,
    config: String,
    endpoint: Endpoint,
}

impl<'a> Driver<'a> {
    /// One call of the driver.
    pub(crate) fn call(&self) -> DriverCall<'a> {
        self.runtime.driver(
            &self.plugin,
            CallContext {
                config: self.config.clone(),
                endpoint: Some(self.endpoint.clone()),
                allocations: None,
            },
        )
    }
}

/// The drivers of the sites and their hosts: a plugin as a pod manager binds it, at a BMC's
/// endpoint with its credentials unsealed.
pub(crate) struct Drivers<'a> {
    plugins: Plugins<'a>,
    runtime: &'a Runtime,
    sealer: &'a Sealer,
}

impl Podium {
    /// The drivers, to reach a BMC with.
    pub(crate) fn drivers(&self) -> Drivers<'_> {
        Drivers {
            plugins: self.plugins(),
            runtime: self.runtime(),
            sealer: &self.inner.sealer,
        }
    }
}

impl<'a> Drivers<'a> {
    /// The driver of a pod manager, at its own endpoint.
    pub(crate) async fn pod_manager(&self, pm: &PodManager) -> Result<Driver<'a>, Error> {
        let endpoint = self.endpoint(&pm.uuid, &pm.service, pm.limits.requests)?;
        self.driver(pm, endpoint).await
    }

    /// The driver of a host: its own BMC where it has one, else its pod manager's.
    pub(crate) async fn host(&self, pm: &PodManager, host: &Host) -> Result<Driver<'a>, Error> {
        match &host.bmc {
            Some(own) => self.bmc(pm, own).await,
            None => self.pod_manager(pm).await,
        }
    }

    /// A pod manager's driver at a host's own BMC (before the host is stored, too).
    pub(crate) async fn bmc(&self, pm: &PodManager, bmc: &Bmc) -> Result<Driver<'a>, Error> {
        let endpoint = self.endpoint(&pm.uuid, bmc, None)?;
        self.driver(pm, endpoint).await
    }

    async fn driver(&self, pm: &PodManager, endpoint: Endpoint) -> Result<Driver<'a>, Error> {
        Ok(Driver {
            runtime: self.runtime,
            plugin: self.plugins.load(&pm.driver.sha256).await?,
            config: pm.driver.config.to_string(),
            endpoint,
        })
    }

    /// A BMC's endpoint for a plugin call, its sealed credentials opened; `requests`: what one
    /// call sends it at once (`None`: the runtime's default).
    fn endpoint(
        &self,
        pod_manager: &PodManagerId,
        bmc: &Bmc,
        requests: Option<u32>,
    ) -> Result<Endpoint, Error> {
        let credentials = match &bmc.auth_sealed {
            None => None,
            Some(sealed) => {
                let opened = self
                    .sealer
                    .open(sealed)
                    .map_err(|e| Error::Internal(e.into()))?;
                let value: serde_json::Value = serde_json::from_str(opened.expose())
                    .map_err(|e| Error::Internal(anyhow::anyhow!("sealed credentials: {e}")))?;
                Some(Credentials {
                    username: value["username"].as_str().unwrap_or_default().to_owned(),
                    password: podium_types::Secret::new(
                        value["password"].as_str().unwrap_or_default(),
                    ),
                })
            }
        };
        Ok(Endpoint {
            base: Url::parse(&bmc.url).map_err(|e| Error::Internal(e.into()))?,
            credentials,
            tls: bmc.tls.policy(),
            pod_manager: Some(pod_manager.clone()),
            parallel_requests: requests.map(|n| n as usize),
        })
    }
}
