//! The host's imports as the SDK calls them: the component's imports in a wasm build, the
//! [`testing`](crate::testing) harness in a native one.

#[cfg(target_arch = "wasm32")]
pub(crate) use wasm::*;

#[cfg(not(target_arch = "wasm32"))]
pub(crate) use crate::testing::imports::*;

#[cfg(target_arch = "wasm32")]
mod wasm {
    use crate::http::{HttpError, Request, Response};
    use crate::log::Level;
    use crate::wit::hardware_driver::podium::plugin::{config, http, log};
    use crate::wit::ipam::podium::plugin::allocations;

    pub(crate) fn send(request: &Request) -> Result<Response, HttpError> {
        http::send(&http::Request {
            method: request.method,
            url: request.url.clone(),
            headers: request.headers.clone(),
            body: request.body.clone(),
        })
    }

    pub(crate) fn log(level: Level, message: &str) {
        log::log(level, message);
    }

    pub(crate) fn config() -> String {
        config::get()
    }

    pub(crate) fn first_free(start: &str, end: &str) -> Option<String> {
        allocations::first_free(start, end)
    }

    pub(crate) fn is_free(address: &str) -> bool {
        allocations::is_free(address)
    }
}
