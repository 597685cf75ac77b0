//! Redfish event subscriptions (`EventService/Subscriptions`): a tenant (or the admin) names a
//! destination, and Podium pushes to it, as Redfish `Event`s, the changes it may see of hosts
//! and operations: a host's power and provisioning state, an operation's start and end (the
//! same events `GET /v1/events` streams, `events/`).
//!
//! Delivery is the `delivery` background task: for each subscription, the events after the last
//! it handled (`delivered_through`, kept in the database, so a restart loses none), up to
//! [`BATCH`] in one `Event`, POSTed with the subscription's headers. A batch the destination
//! does not take (no answer in [`TIMEOUT`], or not a 2xx) is tried again at the task's next runs,
//! [`TRIES`] times in all, then given up on (its events are skipped, and `last_error` says why),
//! so one dead receiver costs its own subscription and nothing else. One process at a time sends
//! a subscription its batch (a lease on it, `leased_until`); a process that dies while sending
//! lets go after the lease's 30 s, and its batch is sent again (at least once).
//!
//! A destination is http(s), holds no credentials, and is no loopback, link-local, unspecified
//! or multicast address, unless the server lets local destinations (`--event-destinations-local`):
//! checked when the subscription is made and again at each delivery, whose connections are made
//! only to the addresses its name resolves to that pass the same check (no proxy, no redirect).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use futures::StreamExt;
use podium_types::views::{EventView, SubscriptionCreate, SubscriptionView};
use podium_types::{
    ErrorCode, EventFilter, EventKind, OperationStatus, Secret, SubscriptionId, Timestamp,
};
use serde_json::{Value, json};

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::SubscriptionRow;
use crate::error::Error;
use crate::tasks::Outcome;

/// The most subscriptions one tenant (or the admin) holds.
pub const SUBSCRIPTIONS_MAX: i64 = 1000;
/// The most events one `Event` carries.
const BATCH: u32 = 50;
/// How long a destination has to take an event.
const TIMEOUT: Duration = Duration::from_secs(5);
/// How many times a batch is sent before it is given up on.
const TRIES: i64 = 5;
/// How long a process holds a subscription while it sends its batch (a batch takes at most
/// [`TIMEOUT`] and the reads around it).
const LEASE: Duration = Duration::from_secs(30);
/// How many destinations are sent to at once.
const CONCURRENCY: usize = 64;
/// How long a connection to a destination is kept for the next delivery (the `delivery` task
/// runs every second).
const IDLE: Duration = Duration::from_secs(5);
/// The event types a subscription may name; Podium's events are of every one.
pub const EVENT_TYPES: [&str; 4] = ["Alert", "StatusChange", "ResourceUpdated", "Other"];
/// The most headers a subscription sends, and the longest name and value.
const HEADERS_MAX: usize = 16;
const HEADER_VALUE_MAX: usize = 1024;
/// The longest context (a destination is at most `urls::URL_MAX`).
const CONTEXT_MAX: usize = 256;

impl Podium {
    /// Sets whether subscriptions may push to loopback and link-local addresses (before the
    /// server starts); refused by default.
    pub fn set_event_destinations_local(&self, allowed: bool) {
        let _ = self.inner.event_destinations_local.set(allowed);
    }

    /// The client deliveries post with (made once: its TLS roots are loaded once): no proxy
    /// (a proxy would resolve the name itself, past the check), no redirects, a resolver that
    /// keeps only the addresses a subscription may reach (each new connection goes to an
    /// address checked then), and connections kept idle for [`IDLE`] only, at most
    /// [`CONCURRENCY`] per destination (so at most one per subscription stays open between
    /// deliveries). An address written in the destination is checked by `push`.
    fn event_client(&self) -> Result<&reqwest::Client, String> {
        if let Some(client) = self.inner.event_client.get() {
            return Ok(client);
        }
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .pool_idle_timeout(IDLE)
            .pool_max_idle_per_host(CONCURRENCY)
            .dns_resolver(std::sync::Arc::new(Checked {
                local: self.destinations_local(),
            }))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(self.inner.event_client.get_or_init(|| client))
    }

    fn destinations_local(&self) -> bool {
        self.inner
            .event_destinations_local
            .get()
            .copied()
            .unwrap_or(false)
    }

    /// `POST EventService/Subscriptions`: checks what is asked (a 422 naming the Redfish
    /// property) and records it; events from now on are pushed to it.
    pub async fn subscription_create(
        &self,
        caller: &Caller,
        request: SubscriptionCreate,
    ) -> Result<SubscriptionView, Error> {
        caller.require_writable()?;
        let url = destination_check(&request.destination, self.destinations_local())?;
        if request.context.chars().count() > CONTEXT_MAX
            || !request.context.chars().all(podium_types::text::is_plain)
        {
            return Err(Error::invalid(
                "Context",
                format!("at most {CONTEXT_MAX} characters of plain text"),
            ));
        }
        for (i, t) in request.event_types.iter().enumerate() {
            if !EVENT_TYPES.contains(&t.as_str()) {
                return Err(Error::invalid(
                    format!("EventTypes[{i}]"),
                    format!("is one of {}", EVENT_TYPES.join(", ")),
                ));
            }
        }
        let headers = headers_check(&request.headers)?;
        let headers_sealed = (!headers.is_empty()).then(|| {
            let text = serde_json::to_string(&headers).expect("headers serialize");
            self.inner.sealer.seal(&Secret::new(text))
        });
        let horizon = self.datastore().events_horizon().await?;
        let row = SubscriptionRow {
            id: SubscriptionId::generate(),
            tenant_id: caller.scope().tenant().cloned(),
            destination: url.to_string(),
            context: request.context,
            event_types: request.event_types,
            headers_sealed,
            delivered_through: horizon.newest,
            failures: 0,
            last_error: None,
            created_at: Timestamp::now(),
        };
        if !self
            .datastore()
            .subscription_create(&row, SUBSCRIPTIONS_MAX)
            .await?
        {
            return Err(Error::Conflict {
                code: ErrorCode::SubscriptionsFull,
                message: format!(
                    "this account holds {SUBSCRIPTIONS_MAX} event subscriptions, the most it may: \
                     delete one first"
                ),
            });
        }
        Ok(view(row))
    }

    /// The caller's subscriptions (a tenant's own; the admin's).
    pub async fn subscription_list(&self, caller: &Caller) -> Result<Vec<SubscriptionView>, Error> {
        let rows = self.datastore().subscription_list(caller.scope()).await?;
        Ok(rows.into_iter().map(view).collect())
    }

    pub async fn subscription_view(
        &self,
        caller: &Caller,
        id: &SubscriptionId,
    ) -> Result<SubscriptionView, Error> {
        self.datastore()
            .subscription_get(caller.scope(), id)
            .await?
            .map(view)
            .ok_or_else(|| Error::not_found("subscription", id))
    }

    pub async fn subscription_delete(
        &self,
        caller: &Caller,
        id: &SubscriptionId,
    ) -> Result<(), Error> {
        caller.require_writable()?;
        if !self
            .datastore()
            .subscription_delete(caller.scope(), id)
            .await?
        {
            return Err(Error::not_found("subscription", id));
        }
        Ok(())
    }

    /// The `delivery` task: what each subscription has not had yet, one batch each, to
    /// [`CONCURRENCY`] destinations at once.
    pub(crate) async fn subscriptions_deliver(&self) -> Result<Outcome, Error> {
        let horizon = self.datastore().events_horizon().await?;
        let due: Vec<SubscriptionRow> = self
            .datastore()
            .subscription_all()
            .await?
            .into_iter()
            .filter(|s| s.delivered_through < horizon.newest)
            .collect();
        let results: Vec<Result<Sent, Error>> = futures::stream::iter(due)
            .map(|s| self.subscription_deliver(s, horizon.newest, horizon.forgotten_through))
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        let (mut sent, mut failed, mut dropped) = (0, 0, 0);
        for r in results {
            match r? {
                Sent::Delivered(n) => sent += n,
                Sent::Failed => failed += 1,
                Sent::Dropped(n) => dropped += n,
                Sent::Nothing => {}
            }
        }
        Ok(Outcome::new(format!(
            "{sent} events delivered, {failed} deliveries failed, {dropped} events given up on"
        ))
        .count("delivered", sent)
        .count("retrying", failed)
        .count("dropped", dropped))
    }

    /// One batch for one subscription.
    async fn subscription_deliver(
        &self,
        s: SubscriptionRow,
        newest: i64,
        forgotten_through: i64,
    ) -> Result<Sent, Error> {
        let from = s.delivered_through;
        // One process at a time sends a subscription its batch.
        let now = Timestamp::now();
        if !self
            .datastore()
            .subscription_lease(&s.id, now, now.after(LEASE))
            .await?
        {
            return Ok(Sent::Nothing);
        }
        // Events forgotten while the subscription waited are gone for it too.
        let after = from.max(forgotten_through);
        let filter = EventFilter {
            tenant: s.tenant_id.clone(),
            kinds: vec![EventKind::Host, EventKind::Operation],
            ..EventFilter::default()
        };
        let rows = self
            .datastore()
            .events_between(after, newest, &filter, BATCH)
            .await?;
        let through = match rows.last() {
            Some(last) if rows.len() == BATCH as usize => last.seq,
            _ => newest,
        };
        if rows.is_empty() {
            self.datastore()
                .subscription_advance(&s.id, from, through, None)
                .await?;
            return Ok(Sent::Nothing);
        }
        let admin = s.tenant_id.is_none();
        let events = rows
            .into_iter()
            .map(|row| crate::events::view_for(admin, row))
            .collect::<Result<Vec<_>, _>>()?;
        let count = events.len();
        match self.push(&s, &events).await {
            Ok(()) => {
                self.datastore()
                    .subscription_advance(&s.id, from, through, None)
                    .await?;
                Ok(Sent::Delivered(count))
            }
            Err(why) if s.failures + 1 >= TRIES => {
                tracing::warn!(subscription = %s.id, events = count, error = %why,
                    "gave up on delivering events to a subscription");
                let note = format!("{count} events given up on after {TRIES} tries: {why}");
                self.datastore()
                    .subscription_advance(&s.id, from, through, Some(&note))
                    .await?;
                Ok(Sent::Dropped(count))
            }
            Err(why) => {
                tracing::info!(subscription = %s.id, error = %why, "an event delivery failed");
                self.datastore()
                    .subscription_failed(&s.id, from, &why)
                    .await?;
                Ok(Sent::Failed)
            }
        }
    }

    /// POSTs one `Event` of `events` to the subscription's destination; why not, in words
    /// (never a header's value).
    async fn push(&self, s: &SubscriptionRow, events: &[EventView]) -> Result<(), String> {
        // Checked again: an address allowed when the subscription was made (local destinations
        // allowed then) may not be now; a name's addresses are checked by the client's resolver.
        let url = destination_check(&s.destination, self.destinations_local())
            .map_err(|e| format!("the destination is refused: {e}"))?;
        let client = self.event_client()?;
        let mut request = client.post(url).json(&event(s, events));
        if let Some(sealed) = &s.headers_sealed {
            let text = self
                .inner
                .sealer
                .open(sealed)
                .map_err(|_| "the subscription's headers cannot be opened".to_owned())?;
            let headers: Vec<(String, String)> = serde_json::from_str(text.expose())
                .map_err(|_| "the subscription's headers are corrupt".to_owned())?;
            for (name, value) in headers {
                request = request.header(name, value);
            }
        }
        let answer = request.send().await.map_err(|e| {
            let mut why = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                why = format!("{why}: {s}");
                source = s.source();
            }
            why
        })?;
        if answer.status().is_success() {
            Ok(())
        } else {
            Err(format!("the destination answered {}", answer.status()))
        }
    }
}

/// What one subscription's turn did.
enum Sent {
    Nothing,
    Delivered(usize),
    Failed,
    Dropped(usize),
}

fn view(s: SubscriptionRow) -> SubscriptionView {
    SubscriptionView {
        id: s.id,
        destination: s.destination,
        context: s.context,
        event_types: s.event_types,
        has_headers: s.headers_sealed.is_some(),
        delivered_through: s.delivered_through,
        last_error: s.last_error,
        created_at: s.created_at,
    }
}

/// A destination Podium may push to: http(s), no credentials, no fragment, a host that is no
/// local address (unless `local`).
fn destination_check(destination: &str, local: bool) -> Result<url::Url, Error> {
    let field = "Destination";
    let url = crate::urls::http_url(field, destination)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::invalid(
            field,
            "holds credentials: give them as HttpHeaders, which are never shown",
        ));
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if !local && (d == "localhost" || d.ends_with(".localhost")) {
                return Err(Error::invalid(
                    field,
                    "names this machine, which a subscription may not reach (the admin may allow local destinations)",
                ));
            }
            None
        }
        // `http_url` answers only URLs with a host.
        None => None,
    };
    if let Some(ip) = ip
        && !local
        && is_local(ip)
    {
        return Err(Error::invalid(
            field,
            "is a loopback, link-local, unspecified or multicast address, which a subscription \
             may not reach (the admin may allow local destinations)",
        ));
    }
    Ok(url)
}

/// Resolves a destination's name to the addresses a subscription may reach.
struct Checked {
    local: bool,
}

impl reqwest::dns::Resolve for Checked {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let local = self.local;
        Box::pin(async move {
            let host = name.as_str();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
                .await?
                .filter(|a| local || !is_local(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(format!(
                    "{host} resolves only to addresses a subscription may not reach"
                )
                .into());
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether an address is one a subscription may not reach unless the server allows local
/// destinations: loopback, link-local, unspecified, multicast or broadcast.
fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || v6.is_unicast_link_local()
                || embedded_ipv4(v6).any(|v4| is_local(IpAddr::V4(v4)))
        }
    }
}

/// The IPv4 addresses an IPv6 address carries, which a translator or relay on the way may
/// reach: IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-translated (`::ffff:0:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`, deprecated but still routed by some stacks), NAT64's
/// well-known prefix (`64:ff9b::/96`) and its local-use one (`64:ff9b:1::/48`, where the
/// operator's prefix may be /48, /56, /64 or /96: each place RFC 6052 puts the address in), 6to4
/// (`2002:AABB:CCDD::/48`) and Teredo (`2001:0::/32`: the server in bits 32-63, the client in
/// the last 32 bits, inverted).
fn embedded_ipv4(v6: Ipv6Addr) -> impl Iterator<Item = Ipv4Addr> {
    let bits = v6.to_bits();
    // The 32 bits from `at` (counted from the top), skipping bits 64-71 (RFC 6052's `u`).
    let at = |from: u32| -> Ipv4Addr {
        let mut v4 = 0_u32;
        let mut bit = from;
        for _ in 0..32 {
            if bit == 64 {
                bit = 72;
            }
            v4 = (v4 << 1) | ((bits >> (127 - bit)) & 1) as u32;
            bit += 1;
        }
        Ipv4Addr::from_bits(v4)
    };
    let segments = v6.segments();
    let mut found = Vec::with_capacity(4);
    if bits >> 32 == 0xffff || bits >> 32 == 0xffff_0000 || (bits >> 32 == 0 && bits > 1) {
        found.push(at(96));
    }
    if bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000 {
        found.push(at(96));
    }
    if bits >> 80 == 0x0064_ff9b_0001 {
        found.extend([at(48), at(56), at(72), at(96)]);
    }
    if segments[0] == 0x2002 {
        found.push(at(16));
    }
    if segments[0] == 0x2001 && segments[1] == 0 {
        found.push(at(32));
        found.push(Ipv4Addr::from_bits(!(bits as u32)));
    }
    found.into_iter()
}

/// The headers to send: at most [`HEADERS_MAX`], each a valid header name that is not one the
/// request itself sets, with a plain value of at most [`HEADER_VALUE_MAX`] bytes.
fn headers_check(headers: &[(String, Secret)]) -> Result<Vec<(String, String)>, Error> {
    if headers.len() > HEADERS_MAX {
        return Err(Error::invalid(
            "HttpHeaders",
            format!("at most {HEADERS_MAX} headers"),
        ));
    }
    let mut out = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let field = format!("HttpHeaders/{name}");
        let valid =
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok() && name.len() <= 64;
        if !valid {
            return Err(Error::invalid("HttpHeaders", "a header name is not valid"));
        }
        if matches!(
            name.to_ascii_lowercase().as_str(),
            "host" | "content-length" | "content-type" | "transfer-encoding" | "connection"
        ) {
            return Err(Error::invalid(&field, "is set by Podium"));
        }
        let text = value.expose();
        if text.len() > HEADER_VALUE_MAX
            || reqwest::header::HeaderValue::from_str(text).is_err()
            || text.chars().any(char::is_control)
        {
            // Never the value: it may be a credential.
            return Err(Error::invalid(
                &field,
                format!("is at most {HEADER_VALUE_MAX} bytes of visible text"),
            ));
        }
        out.push((name.clone(), text.to_owned()));
    }
    Ok(out)
}

/// The Redfish `Event` of `events` for subscription `s`: each a `ResourceChanged` of the
/// system or the task it is about, in words, with Podium's view of it under `Oem.Podium`.
fn event(s: &SubscriptionRow, events: &[EventView]) -> Value {
    let event_type = s.event_types.first().map_or("Alert", String::as_str);
    let records: Vec<Value> = events
        .iter()
        .map(|e| {
            let (origin, message_id, message) = match (&e.host, &e.operation) {
                (Some(h), _) => (
                    format!("/redfish/v1/Systems/{}", h.id),
                    "ResourceEvent.1.0.ResourceChanged",
                    format!(
                        "System {} is {} and powered {}.",
                        h.id, h.provisioning_state, h.power_state
                    ),
                ),
                (_, Some(o)) => {
                    let id = match o.status {
                        OperationStatus::Succeeded => "TaskEvent.1.0.TaskCompletedOK",
                        OperationStatus::Failed => "TaskEvent.1.0.TaskAborted",
                        OperationStatus::Running => "TaskEvent.1.0.TaskStarted",
                        _ => "ResourceEvent.1.0.ResourceChanged",
                    };
                    (
                        format!("/redfish/v1/TaskService/Tasks/{}", o.id),
                        id,
                        format!("Task {} ({}) is {}.", o.id, o.kind, o.status),
                    )
                }
                _ => (
                    "/redfish/v1".to_owned(),
                    "ResourceEvent.1.0.ResourceChanged",
                    "A resource changed.".to_owned(),
                ),
            };
            json!({
                "EventType": event_type,
                "EventId": e.seq.to_string(),
                "EventTimestamp": e.at.to_string(),
                "Severity": "OK",
                "MessageSeverity": "OK",
                "MessageId": message_id,
                "Message": message,
                "OriginOfCondition": {"@odata.id": origin},
                "Oem": {"Podium": e},
            })
        })
        .collect();
    let last = events.last().map_or(0, |e| e.seq);
    json!({
        "@odata.type": "#Event.v1_7_0.Event",
        "Id": last.to_string(),
        "Name": "Podium events",
        "Context": s.context,
        "Events": records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destination_is_http_without_credentials_and_no_local_address() {
        for (url, local, ok) in [
            ("https://events.example.net/redfish", false, true),
            ("http://10.1.2.3:8080/e", false, true),
            ("ftp://events.example.net/", false, false),
            ("http://user:pw@events.example.net/", false, false),
            ("http://127.0.0.1:9/e", false, false),
            ("http://127.0.0.1:9/e", true, true),
            ("http://169.254.169.254/latest", false, false),
            ("http://[::1]/e", false, false),
            ("http://[::ffff:127.0.0.1]/e", false, false),
            // IPv6 forms that carry a refused IPv4 address, which a translator reaches.
            ("http://[::127.0.0.1]/e", false, false),
            ("http://[::a9fe:a9fe]/e", false, false),
            ("http://[64:ff9b::7f00:1]/e", false, false),
            ("http://[64:ff9b:1::a9fe:a9fe]/e", false, false),
            // The local-use NAT64 prefix as a /48 (RFC 6052: 169.254 before the `u` octet,
            // 169.254 after it) and as a /64.
            ("http://[64:ff9b:1:a9fe:a9:fe00::]/e", false, false),
            ("http://[64:ff9b:1:0:7f:0:100:0]/e", false, false),
            ("http://[::ffff:0:7f00:1]/e", false, false),
            ("http://[2002:7f00:1::]/e", false, false),
            ("http://[2002:a9fe:a9fe::1]/e", false, false),
            ("http://[2001:0:7f00:1::]/e", false, false),
            (
                "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/e",
                false,
                false,
            ),
            ("http://[::127.0.0.1]/e", true, true),
            // The same forms carrying an address that may be reached.
            ("http://[::a00:1]/e", false, true),
            ("http://[64:ff9b::c633:6407]/e", false, true),
            ("http://[2002:c633:6407::1]/e", false, true),
            (
                "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/e",
                false,
                true,
            ),
            ("http://[2001:db8::1]/e", false, true),
            ("http://[::ffff:10.0.0.1]/e", false, true),
            // Text the parser would quietly change before it was sent.
            ("http://events.example.net/e\r\nX-Injected: 1", false, false),
            ("http:///events.example.net/e", false, false),
            ("http://[fe80::1]/e", false, false),
            ("http://0.0.0.0/e", false, false),
            ("http://224.0.0.1/e", false, false),
            ("http://localhost:9/e", false, false),
            ("not a url", false, false),
        ] {
            assert_eq!(
                destination_check(url, local).is_ok(),
                ok,
                "{url} local={local}"
            );
        }
    }

    #[test]
    fn a_header_value_is_never_in_a_refusal() {
        match headers_check(&[("X-Auth".into(), Secret::new("s3cret\nX"))]) {
            Err(Error::Invalid {
                field: Some(field),
                message,
            }) => {
                assert_eq!(field, "HttpHeaders/X-Auth");
                assert!(!message.contains("s3cret"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(headers_check(&[("Host".into(), Secret::new("a"))]).is_err());
        assert!(headers_check(&[("X-Auth".into(), Secret::new("Bearer abc"))]).is_ok());
    }

    #[tokio::test]
    async fn a_name_is_resolved_only_to_addresses_a_subscription_may_reach() {
        use reqwest::dns::Resolve;
        let name = || "localhost".parse::<reqwest::dns::Name>().unwrap();
        let refused = Checked { local: false }.resolve(name()).await;
        let why = refused.err().expect("localhost refused").to_string();
        assert!(why.contains("may not reach"), "{why}");
        let mut allowed = Checked { local: true }
            .resolve(name())
            .await
            .expect("allowed");
        assert!(allowed.all(|a| a.ip().is_loopback()));
    }
}
