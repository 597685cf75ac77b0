//! The loaded plugins of this process, by sha256: a component is compiled once per process.

use std::collections::HashMap;

use podium_runtime::Plugin;
use tokio::sync::RwLock;

/// The loaded plugins of this process, by sha256.
#[derive(Debug, Default)]
pub(crate) struct PluginCache {
    by_sha256: RwLock<HashMap<String, Plugin>>,
}

impl PluginCache {
    pub(crate) async fn get(&self, sha256: &str) -> Option<Plugin> {
        self.by_sha256.read().await.get(sha256).cloned()
    }

    pub(crate) async fn insert(&self, plugin: Plugin) {
        self.by_sha256
            .write()
            .await
            .insert(plugin.sha256().to_owned(), plugin);
    }
}
