//! Podium's HTTP API and server: the routes, the extractors that turn requests into calls of
//! the application (`podium-app`), the views it answers with, the OpenAPI document, and
//! `server::start`/`serve`, which open the store, build `Podium` and listen. The `podium` binary
//! (`host/`) runs it with the bundled plugins. `ARCHITECTURE.md` at the repository root is the map.

mod api;
mod listen;
pub mod server;

pub use api::MetricsAccess;
pub use listen::TlsFiles;
