//! Plugins, the application side: registering (upload, plugin directory, bundled), listing,
//! and resolving a reference (`name`, optionally pinned to a version or sha256) to a loaded,
//! ready-to-call plugin.
//!
//! Loaded plugins are kept in memory by sha256; the database is the source of truth, so a
//! plugin another Podium process registered is loaded on first use.

pub(crate) mod cache;

use std::path::Path;
use std::sync::Arc;

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{Datastore, PluginRow};
use crate::error::Error;
use cache::PluginCache;
use podium_runtime::{Plugin, Runtime, World};
use podium_types::views::{PluginList, PluginView};
use podium_types::{ErrorCode, PluginSource};

/// A reference to a plugin: by name, optionally pinned.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(deny_unknown_fields)]
pub struct PluginRef {
    /// The plugin's name, as its `info` export reports it.
    pub name: String,
    /// Pin to this version; the newest version when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Pin to exactly this build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// The largest plugin accepted.
pub const MAX_PLUGIN_SIZE: usize = 32 << 20;

/// Every check an upload makes of a component before it is registered (its size, that it is a
/// component of one of Podium's worlds at this host's WIT version, with every export of its
/// world and no import the host does not give, and what its `info` says): the loaded plugin, or
/// the error the upload answers. `podium plugin check FILE` runs it offline.
pub async fn plugin_check(
    runtime: &podium_runtime::Runtime,
    wasm: Arc<[u8]>,
) -> Result<podium_runtime::Plugin, Error> {
    if wasm.len() > MAX_PLUGIN_SIZE {
        return Err(Error::TooLarge {
            limit: MAX_PLUGIN_SIZE,
        });
    }
    runtime.load(wasm).await.map_err(Error::InvalidPlugin)
}

/// Every reason an upload would refuse `wasm` that can be judged without running it (the
/// size, and `podium_runtime::Runtime::problems`), all at once; empty when only the
/// component's `info` is left to check, which [`plugin_check`] does.
pub async fn plugin_problems(runtime: &podium_runtime::Runtime, wasm: Arc<[u8]>) -> Vec<Error> {
    let mut problems = Vec::new();
    if wasm.len() > MAX_PLUGIN_SIZE {
        problems.push(Error::TooLarge {
            limit: MAX_PLUGIN_SIZE,
        });
    }
    problems.extend(
        runtime
            .problems(wasm)
            .await
            .into_iter()
            .map(Error::InvalidPlugin),
    );
    problems
}

impl Podium {
    /// Registers a component. Bytes already registered answer the existing plugin; another
    /// build under a name and version already taken is a conflict.
    pub async fn plugin_create(
        &self,
        caller: &Caller,
        wasm: Vec<u8>,
    ) -> Result<(PluginView, bool), Error> {
        caller.require_admin()?;
        let (row, created) = self.plugins().register(wasm, PluginSource::Upload).await?;
        Ok((crate::views::plugin(row), created))
    }

    pub async fn plugin_list(&self, caller: &Caller) -> Result<PluginList, Error> {
        caller.require_admin_read()?;
        let rows = self.datastore().plugin_list().await?;
        Ok(PluginList {
            items: rows.into_iter().map(crate::views::plugin).collect(),
        })
    }

    pub async fn plugin_view(&self, caller: &Caller, sha256: &str) -> Result<PluginView, Error> {
        caller.require_admin_read()?;
        self.datastore()
            .plugin_get(sha256)
            .await?
            .map(crate::views::plugin)
            .ok_or_else(|| Error::not_found("plugin", sha256))
    }

    /// Registers the bundled plugins (`(name, component)`, which the binary passes in) and those
    /// in `dir`. A broken file in the directory is logged and skipped, so one bad plugin does
    /// not keep Podium from starting.
    pub async fn plugins_register_at_start(
        &self,
        bundled: &[(&str, &[u8])],
        dir: Option<&Path>,
    ) -> anyhow::Result<()> {
        for (name, wasm) in bundled {
            let (row, _) = self
                .plugins()
                .register(wasm.to_vec(), PluginSource::Bundled)
                .await
                .map_err(|e| anyhow::anyhow!("bundled plugin {name}: {e}"))?;
            tracing::info!(plugin = %row.name, version = %row.version, sha256 = %row.sha256, "bundled plugin ready");
        }
        let Some(dir) = dir else { return Ok(()) };
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| anyhow::anyhow!("reading the plugin directory {}: {e}", dir.display()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
            .collect();
        entries.sort();
        for path in entries {
            let wasm = match std::fs::read(&path) {
                Ok(w) => w,
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot read plugin file");
                    continue;
                }
            };
            match self.plugins().register(wasm, PluginSource::Directory).await {
                Ok((row, _)) => {
                    tracing::info!(path = %path.display(), plugin = %row.name, version = %row.version, "plugin from directory ready")
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "skipping plugin file")
                }
            }
        }
        Ok(())
    }
}

fn describe(reference: &PluginRef) -> String {
    let mut s = format!("`{}`", reference.name);
    if let Some(v) = &reference.version {
        s.push_str(&format!(" version {v}"));
    }
    if let Some(h) = &reference.sha256 {
        s.push_str(&format!(" sha256 {h}"));
    }
    s
}

/// Orders versions by their numeric dot-separated parts, then as text.
fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .map_while(|p| p.parse().ok())
            .collect()
    };
    parts(a).cmp(&parts(b)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::compare_versions;
    use std::cmp::Ordering;

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(compare_versions("0.10.0", "0.9.1"), Ordering::Greater);
        assert_eq!(compare_versions("1.0.0", "1.0.0"), Ordering::Equal);
        assert_eq!(compare_versions("1.2", "1.10"), Ordering::Less);
    }
}

/// The installed plugins as the features use them: registered, resolved from a reference or
/// a binding, loaded once per process by digest (`cache.rs`), the newest of a name found.
#[derive(Debug)]
pub struct Plugins<'a> {
    store: &'a Datastore,
    runtime: &'a Runtime,
    cache: &'a PluginCache,
}

impl Podium {
    /// The installed plugins.
    pub fn plugins(&self) -> Plugins<'_> {
        Plugins {
            store: self.datastore(),
            runtime: self.runtime(),
            cache: &self.inner.plugins,
        }
    }
}

impl Plugins<'_> {
    pub(crate) async fn register(
        &self,
        wasm: Vec<u8>,
        source: PluginSource,
    ) -> Result<(PluginRow, bool), Error> {
        let bytes: Arc<[u8]> = wasm.into();
        let plugin = plugin_check(self.runtime, bytes.clone()).await?;
        if let Some(existing) = self.store.plugin_get(plugin.sha256()).await? {
            self.cache_insert(plugin).await;
            return Ok((existing, false));
        }
        let info = plugin.info();
        if let Some(other) = self
            .store
            .plugin_by_name_version(&info.name, &info.version)
            .await?
        {
            return Err(Error::Conflict {
                code: ErrorCode::PluginVersionExists,
                message: format!(
                    "plugin {} version {} is already registered with sha256 {}; bump the version of the new build",
                    info.name, info.version, other.sha256
                ),
            });
        }
        let row = PluginRow {
            sha256: plugin.sha256().to_owned(),
            name: info.name.clone(),
            version: info.version.clone(),
            world: plugin.world().as_str().to_owned(),
            description: info.description.clone(),
            size: bytes.len() as i64,
            source,
            created_at: podium_types::Timestamp::now(),
        };
        let row = match self.store.plugin_create(&row, &bytes).await {
            Ok(row) => row,
            Err(e) if crate::data::is_conflict(&e) => {
                // Another process registered the same name and version meanwhile.
                return Err(Error::Conflict {
                    code: ErrorCode::PluginVersionExists,
                    message: format!(
                        "plugin {} version {} is already registered",
                        info.name, info.version
                    ),
                });
            }
            Err(e) => return Err(e.into()),
        };
        self.cache_insert(plugin).await;
        Ok((row, true))
    }

    /// Resolves a reference to a loaded plugin of `world`. `field` names the request field the
    /// reference came from, for error messages.
    pub async fn resolve(
        &self,
        reference: &PluginRef,
        world: World,
        field: &str,
    ) -> Result<Plugin, Error> {
        let rows = self.store.plugin_list().await?;
        let mut candidates: Vec<&PluginRow> = rows
            .iter()
            .filter(|r| r.name == reference.name)
            .filter(|r| reference.version.as_ref().is_none_or(|v| *v == r.version))
            .filter(|r| reference.sha256.as_ref().is_none_or(|s| *s == r.sha256))
            .collect();
        if candidates.is_empty() {
            return Err(Error::invalid(
                field,
                format!("no plugin matches {}", describe(reference)),
            ));
        }
        candidates.sort_by(|a, b| compare_versions(&a.version, &b.version));
        let row = candidates.last().expect("not empty");
        if row.world != world.as_str() {
            return Err(Error::invalid(
                field,
                format!(
                    "plugin {} is a {} plugin, but a {} plugin is needed here",
                    describe(reference),
                    row.world,
                    world
                ),
            ));
        }
        self.load(&row.sha256).await
    }

    /// What renders the documents of a pod manager whose admin bound no renderer: the newest
    /// `render-openstack` installed.
    pub(crate) async fn renderer_default(
        &self,
    ) -> Result<Option<podium_types::PluginBinding>, Error> {
        self.newest(crate::bindings::DEFAULT_RENDERER, World::Renderer)
            .await
    }

    /// The binding of the newest installed plugin named `name` of `world`, with an empty
    /// configuration (a default's), without loading it.
    pub(crate) async fn newest(
        &self,
        name: &str,
        world: World,
    ) -> Result<Option<podium_types::PluginBinding>, Error> {
        let rows = self.store.plugin_list().await?;
        Ok(rows
            .into_iter()
            .filter(|r| r.name == name && r.world == world.as_str())
            .max_by(|a, b| compare_versions(&a.version, &b.version))
            .map(|r| podium_types::PluginBinding {
                name: r.name,
                version: r.version,
                sha256: r.sha256,
                config: serde_json::json!({}),
            }))
    }

    /// The loaded plugin with this sha256, loading it from the database if needed.
    pub(crate) async fn load(&self, sha256: &str) -> Result<Plugin, Error> {
        if let Some(plugin) = self.cache.get(sha256).await {
            return Ok(plugin);
        }
        let wasm = self
            .store
            .plugin_wasm(sha256)
            .await?
            .ok_or_else(|| Error::not_found("plugin", sha256))?;
        let plugin = self.runtime.load(wasm.into()).await.map_err(|e| {
            Error::Internal(anyhow::anyhow!(
                "stored plugin {sha256} no longer loads: {e}"
            ))
        })?;
        self.cache_insert(plugin.clone()).await;
        Ok(plugin)
    }

    async fn cache_insert(&self, plugin: Plugin) {
        self.cache.insert(plugin).await;
    }

    /// Resolves a plugin binding and has the plugin check its configuration.
    pub(crate) async fn binding_resolve(
        &self,
        field: &str,
        params: &podium_types::requests::PluginBindingParams,
        world: World,
    ) -> Result<podium_types::PluginBinding, Error> {
        let reference = PluginRef {
            name: params.name.clone(),
            version: params.version.clone(),
            sha256: params.sha256.clone(),
        };
        let plugin = self.resolve(&reference, world, field).await?;
        let config = params
            .config
            .clone()
            .unwrap_or_else(|| serde_json::json!({}));
        if !config.is_object() {
            return Err(Error::invalid(
                format!("{field}.config"),
                "must be a JSON object",
            ));
        }
        self.runtime
            .validate_config(&plugin, &config.to_string())
            .await
            .map_err(|e| match e {
                podium_runtime::CallError::Plugin { error, .. } => Error::invalid(
                    format!("{field}.config"),
                    format!("plugin {} refused it: {error}", plugin.label()),
                ),
                other => Error::from(other),
            })?;
        Ok(podium_types::PluginBinding {
            name: plugin.info().name.clone(),
            version: plugin.info().version.clone(),
            sha256: plugin.sha256().to_owned(),
            config,
        })
    }
}
