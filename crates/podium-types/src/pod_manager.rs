//! A pod manager's status, as its probes find it.

use crate::names::names;

names! {
    /// Whether a pod manager's driver reached its service at the last probe.
    #[derive(Default)]
    pub enum PodManagerStatus ("a pod manager status") {
        /// Not probed yet.
        #[default]
        Unknown => "unknown",
        Online => "online",
        Offline => "offline",
    }
}
