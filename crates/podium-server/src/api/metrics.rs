//! `GET /metrics` (the process's metrics in the OpenMetrics text format, for an admin token, or
//! for anyone on the listener the admin opened for scrapers), and what the API counts itself:
//! requests by method, route and status, with their latency.

use std::time::Instant;

use axum::Extension;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Unit;

use super::error::{ApiError, ApiResult, ErrorBody};
use super::extract::AdminCaller;
use podium_app::app::Podium;

/// The content type of the OpenMetrics text format, which Prometheus asks for and parses.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    /// The route's template (`/v1/hosts/{id}`), never the path sent.
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

/// The API's own metrics.
#[derive(Clone, Debug)]
pub(crate) struct HttpMetrics {
    requests: Family<RequestLabels, Counter>,
    seconds: Family<RouteLabels, Histogram, fn() -> Histogram>,
}

impl HttpMetrics {
    /// Made and added to the process's registry.
    pub(crate) fn registered(podium: &Podium) -> HttpMetrics {
        let metrics = HttpMetrics {
            requests: Family::default(),
            seconds: Family::new_with_constructor(podium_app::latency_histogram),
        };
        podium.metrics_register(|registry| {
            registry.register(
                "podium_http_requests",
                "Requests answered by the API, by method, route and status",
                metrics.requests.clone(),
            );
            registry.register_with_unit(
                "podium_http_request_duration",
                "How long the API took to answer, by method and route",
                Unit::Seconds,
                metrics.seconds.clone(),
            );
        });
        metrics
    }
}

/// Counts a routed request and times it (a route layer: a path no route matches is not a route).
pub(crate) async fn track(
    State(metrics): State<HttpMetrics>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("(unmatched)", MatchedPath::as_str)
        .to_owned();
    let method = request.method().as_str().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    metrics
        .seconds
        .get_or_create(&RouteLabels {
            method: method.clone(),
            route: route.clone(),
        })
        .observe(started.elapsed().as_secs_f64());
    metrics
        .requests
        .get_or_create(&RequestLabels {
            method,
            route,
            status: response.status().as_u16(),
        })
        .inc();
    response
}

fn openmetrics(text: String) -> Response {
    let mut response = text.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(OPENMETRICS));
    response
}

/// The process's metrics: plugin calls, requests to BMCs, operations, API requests, token cache
/// lookups; hosts, queued and running operations and pool usage as the database has them now.
#[utoipa::path(get, path = "/metrics", tag = "admin",
    responses((status = 200, content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8", body = String),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn metrics(
    State(podium): State<Podium>,
    Extension(access): Extension<MetricsAccess>,
    caller: Result<AdminCaller, ApiError>,
) -> ApiResult<Response> {
    let caller = match access {
        MetricsAccess::Token => Some(caller?.0),
        MetricsAccess::Public => None,
    };
    Ok(openmetrics(podium.metrics_text(caller.as_ref()).await?))
}

/// Who may read `/metrics` on the API's listener.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MetricsAccess {
    /// An admin token (read-only will do).
    #[default]
    Token,
    /// Anyone (`--metrics-public`).
    Public,
}

/// The same, with no token: on the listener the admin opened for scrapers
/// (`--metrics-listen`), or on the API's own when the admin said so (`--metrics-public`).
pub(crate) async fn metrics_public(State(podium): State<Podium>) -> ApiResult<Response> {
    Ok(openmetrics(podium.metrics_text(None).await?))
}
