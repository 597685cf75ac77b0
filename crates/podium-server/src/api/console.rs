//! The web console at `/ui/`: static files embedded in the binary at build time (from
//! `crates/podium-server/console/`), served with a content security policy that lets them load
//! nothing but themselves and talk to nothing but this API. The console is a client of the JSON
//! API like any other: it has no route of its own beyond these files.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use include_dir::{Dir, include_dir};

use podium_app::app::Podium;

static ASSETS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/console");

/// Scripts, styles and requests from this origin only; no inline script or style attribute, no
/// framing, no plugins.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
    frame-ancestors 'none'";

pub(super) fn router() -> Router<Podium> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(|| async { asset("index.html") }))
        .route(
            "/ui/{*path}",
            get(|Path(path): Path<String>| async move { asset(&path) }),
        )
}

/// One embedded file, or 404 with the API's error body.
fn asset(path: &str) -> Response {
    let Some(file) = ASSETS.get_file(path) else {
        return super::not_found_at(&format!("/ui/{path}"));
    };
    let content_type = match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    };
    let mut response = (StatusCode::OK, file.contents()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // The files change with the binary: a browser asks again rather than run a stale console
    // against a newer API.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
