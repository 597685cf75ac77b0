//! Lines in the host's log, tagged with the plugin and the call.
//!
//! The host keeps 1,000 lines and 256 KiB per call (past either, lines are dropped with one
//! notice) and clips a line at 4,096 bytes; control characters are escaped.
//!
//! In a driver's call, which replays its method at every step, a line reaches the host once:
//! the step that first comes to it (see [`exchange`](crate::exchange)).

pub use crate::wit::hardware_driver::podium::plugin::log::Level;

/// Logs `message` at `level`.
pub fn log(level: Level, message: &str) {
    if crate::exchange::first_time(level, message) {
        crate::host::log(level, message);
    }
}

pub fn debug(message: &str) {
    log(Level::Debug, message);
}

pub fn info(message: &str) {
    log(Level::Info, message);
}

pub fn warn(message: &str) {
    log(Level::Warn, message);
}

pub fn error(message: &str) {
    log(Level::Error, message);
}
