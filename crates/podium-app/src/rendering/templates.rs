//! A pod manager's network template: stored opaque, checked by its renderer, which also names
//! the pools the template takes addresses from.

use podium_types::PodManagerId;
use serde_json::Value;

use super::refusal;
use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{PodManager, pod_manager_load};
use crate::error::Error;
use podium_runtime::{CallError, PluginError, PoolNeed};

/// The largest template accepted, as JSON text.
const TEMPLATE_MAX: usize = 256 << 10;

impl Podium {
    /// The pod manager's template, `{}` when none was set.
    pub(super) async fn template_text(&self, pm: &PodManager) -> Result<String, Error> {
        Ok(self
            .datastore()
            .network_template_get(&pm.uuid)
            .await?
            .unwrap_or_else(|| "{}".to_owned()))
    }

    /// `GET /v1/pod_managers/{uuid}/network_template`.
    pub async fn network_template_view(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<Value, Error> {
        caller.require_admin_read()?;
        let pm = pod_manager_load(self.datastore(), uuid).await?;
        let text = self
            .datastore()
            .network_template_get(&pm.uuid)
            .await?
            .ok_or_else(|| Error::not_found("network template of pod manager", uuid))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::Internal(anyhow::anyhow!("stored template of {uuid}: {e}")))
    }

    /// `PUT /v1/pod_managers/{uuid}/network_template`: checked by the pod manager's renderer;
    /// every pool it names must serve the pod manager.
    pub async fn network_template_put(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
        template: Value,
    ) -> Result<Value, Error> {
        caller.require_admin()?;
        let pm = pod_manager_load(self.datastore(), uuid).await?;
        if !template.is_object() {
            return Err(Error::Invalid {
                field: None,
                message: "a network template is a JSON object".into(),
            });
        }
        let text = template.to_string();
        if text.len() > TEMPLATE_MAX {
            return Err(Error::Invalid {
                field: None,
                message: format!("a network template is at most {TEMPLATE_MAX} bytes"),
            });
        }
        let pools = self.template_pools(&pm, &text).await?;
        let serving = self.ip_pools_serving(&pm.uuid).await?;
        for need in &pools {
            let Some(pool) = serving.iter().find(|p| p.row.name == need.name) else {
                return Err(Error::invalid(
                    need.field.clone(),
                    format!(
                        "no IP pool named `{}` serves pod manager `{}` (a pool of this pod \
                         manager, or of none)",
                        need.name, pm.name
                    ),
                ));
            };
            let pool_v6 = pool.row.family == 6;
            if pool_v6 != need.ipv6 {
                return Err(Error::invalid(
                    need.field.clone(),
                    format!(
                        "IP pool `{}` is {}, but its network is {}",
                        need.name,
                        if pool_v6 { "IPv6" } else { "IPv4" },
                        if need.ipv6 { "IPv6" } else { "IPv4" }
                    ),
                ));
            }
        }
        self.datastore()
            .network_template_set(&pm.uuid, Some(&text), podium_types::Timestamp::now())
            .await?;
        tracing::info!(pod_manager = %pm.uuid, pools = pools.len(), "network template set");
        Ok(template)
    }

    /// `DELETE /v1/pod_managers/{uuid}/network_template`.
    pub async fn network_template_delete(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<(), Error> {
        caller.require_admin()?;
        let pm = pod_manager_load(self.datastore(), uuid).await?;
        if self
            .datastore()
            .network_template_get(&pm.uuid)
            .await?
            .is_none()
        {
            return Err(Error::not_found("network template of pod manager", uuid));
        }
        self.datastore()
            .network_template_set(&pm.uuid, None, podium_types::Timestamp::now())
            .await?;
        Ok(())
    }

    /// The pools a template takes addresses from, as its renderer reads it.
    pub(super) async fn template_pools(
        &self,
        pm: &PodManager,
        text: &str,
    ) -> Result<Vec<PoolNeed>, Error> {
        let (plugin, context) = self.renderer_of(pm).await?;
        self.runtime()
            .renderer(&plugin, context)
            .validate_template(text)
            .await
            .map_err(|e| match e {
                CallError::Plugin {
                    error: PluginError::InvalidConfig(message),
                    ..
                } => refusal("", &message),
                other => Error::from(other),
            })
    }
}
