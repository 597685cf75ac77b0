//! The in-process lock of each pod manager: its compositions, decompositions and syncs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use podium_types::PodManagerId;

/// One lock per pod manager, held while a node of it is composed or decomposed, and while it
/// syncs.
#[derive(Debug, Default)]
pub(crate) struct ComposeLocks(Mutex<HashMap<PodManagerId, Arc<tokio::sync::Mutex<()>>>>);

impl ComposeLocks {
    pub(crate) fn of(&self, pm: &PodManagerId) -> Arc<tokio::sync::Mutex<()>> {
        self.0
            .lock()
            .expect("compose locks poisoned")
            .entry(pm.clone())
            .or_default()
            .clone()
    }
}
