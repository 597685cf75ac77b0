//! Checks of a BMC endpoint as an admin gives it (a pod manager's service, or a host's own
//! BMC): its base URL, its credentials and its TLS settings. An error never echoes a password.
//! And `Bmc`, such an endpoint as one value whichever record (a pod manager, a host) has it.

use podium_runtime::TlsPolicy;
use podium_types::views::{BmcView, TlsView};
use url::Url;

use crate::error::Error;
use crate::sealing::Sealer;
use podium_types::requests::{AuthParams, TlsParams};

/// Checks an endpoint's base URL and returns its canonical form, `scheme://host[:port]`.
pub(crate) fn normalize_url(field: &str, raw: &str) -> Result<Url, Error> {
    // An error echoes the URL, but never a password written into it.
    let shown = redact_userinfo(raw);
    let bad = |why: &str| Error::invalid(field, format!("`{shown}` {why}"));
    let url = crate::urls::http_url(field, raw)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not carry credentials: send them in `auth`"));
    }
    if url.path() != "/" && !url.path().is_empty() {
        return Err(bad(
            "must be a base URL with no path (the driver finds the service root)",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("must have no query or fragment"));
    }
    Ok(url)
}

/// `raw` with whatever lies between `://` and the last `@` of its authority replaced by `***`.
fn redact_userinfo(raw: &str) -> String {
    let Some((scheme, rest)) = raw.split_once("://") else {
        return raw.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => raw.to_owned(),
    }
}

pub(crate) fn canonical(url: &Url) -> String {
    url.as_str().trim_end_matches('/').to_owned()
}

pub(crate) fn validate_auth(auth: &AuthParams) -> Result<(), Error> {
    if auth.username.is_empty()
        || auth.username.len() > 256
        || auth.username.chars().any(char::is_control)
    {
        return Err(Error::invalid(
            "auth.username",
            "must be 1 to 256 printable characters",
        ));
    }
    if auth.password.expose().len() > 1024 {
        return Err(Error::invalid(
            "auth.password",
            "must be at most 1024 bytes",
        ));
    }
    Ok(())
}

/// Checks TLS settings and returns the pin in canonical form (lower-case hex, no colons).
fn validate_tls(tls: &TlsParams) -> Result<Option<String>, Error> {
    if let Some(pem) = &tls.ca_bundle {
        if !tls.verify {
            return Err(Error::invalid(
                "tls.ca_bundle",
                "a CA bundle has no use with `verify: false`",
            ));
        }
        let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes()).map_err(|e| {
            Error::invalid(
                "tls.ca_bundle",
                format!("is not a PEM certificate bundle: {e}"),
            )
        })?;
        if certs.is_empty() || !pem.contains("BEGIN CERTIFICATE") {
            return Err(Error::invalid("tls.ca_bundle", "holds no PEM certificate"));
        }
    }
    let Some(pin) = &tls.pinned_sha256 else {
        return Ok(None);
    };
    if !tls.verify || tls.ca_bundle.is_some() {
        return Err(Error::invalid(
            "tls.pinned_sha256",
            "a pinned certificate excludes `verify: false` and `ca_bundle`",
        ));
    }
    let hex: String = pin
        .chars()
        .filter(|c| *c != ':')
        .collect::<String>()
        .to_ascii_lowercase();
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid(
            "tls.pinned_sha256",
            "must be the 64 hex digits of a SHA-256 (colons allowed)",
        ));
    }
    Ok(Some(hex))
}

/// A BMC's credentials sealed as a record keeps them (`drivers.rs` opens them for a call).
pub(crate) fn seal_auth(sealer: &Sealer, auth: &AuthParams) -> String {
    let json = serde_json::json!({"username": auth.username, "password": auth.password.expose()});
    sealer.seal(&podium_types::Secret::new(json.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_errors_never_echo_a_password() {
        assert_eq!(
            redact_userinfo("http://admin:pw@bmc:8000/x"),
            "http://***@bmc:8000/x"
        );
        assert_eq!(redact_userinfo("http://bmc/a@b"), "http://bmc/a@b");
        assert_eq!(redact_userinfo("not a url"), "not a url");
        for raw in [
            "http://admin:hunter2@bmc",
            "http://admin:hunter2@",
            "ftp://a:hunter2@x/y",
        ] {
            let e = normalize_url("url", raw).unwrap_err().to_string();
            assert!(!e.contains("hunter2"), "{e}");
        }
    }
}

/// A BMC as Podium reaches it, whichever record names it: a pod manager's service, or a host's
/// own BMC. The driver and the views read this one value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bmc {
    /// The base URL, canonical (`normalize_url`).
    pub(crate) url: String,
    /// The credentials, sealed; `None` where the BMC asks for none.
    pub(crate) auth_sealed: Option<String>,
    pub(crate) tls: Tls,
}

/// What a BMC's certificate is held to, as the admin set it (`validate_tls`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tls {
    pub(crate) verify: bool,
    pub(crate) ca_bundle: Option<String>,
    /// Lower-case hex, no colons.
    pub(crate) pinned_sha256: Option<String>,
}

impl Default for Tls {
    /// Verified against the system's roots.
    fn default() -> Tls {
        Tls {
            verify: true,
            ca_bundle: None,
            pinned_sha256: None,
        }
    }
}

impl Tls {
    /// Settings as the admin gave them, checked (`validate_tls`); none given is the default.
    pub(crate) fn checked_or_default(params: Option<TlsParams>) -> Result<Tls, Error> {
        params.map_or(Ok(Tls::default()), Tls::checked)
    }

    /// Settings as the admin gave them, checked (`validate_tls`).
    pub(crate) fn checked(params: TlsParams) -> Result<Tls, Error> {
        let pinned_sha256 = validate_tls(&params)?;
        Ok(Tls {
            verify: params.verify,
            ca_bundle: params.ca_bundle,
            pinned_sha256,
        })
    }

    /// As the runtime enforces it: a pin over a CA bundle over the system's roots, and nothing
    /// where the admin turned verification off.
    pub(crate) fn policy(&self) -> TlsPolicy {
        match (self.verify, &self.ca_bundle, &self.pinned_sha256) {
            (false, _, _) => TlsPolicy::Insecure,
            (true, _, Some(pin)) => TlsPolicy::Pinned(pin.clone()),
            (true, Some(pem), None) => TlsPolicy::CaBundle(pem.clone()),
            (true, None, None) => TlsPolicy::System,
        }
    }

    /// As the API shows it (a CA bundle only as whether there is one).
    pub(crate) fn view(&self) -> TlsView {
        TlsView {
            verify: self.verify,
            ca_bundle: self.ca_bundle.is_some(),
            pinned_sha256: self.pinned_sha256.clone(),
        }
    }
}

impl Bmc {
    /// As the API shows a host's own BMC: never its credentials, only whether there are any.
    pub(crate) fn view(&self) -> BmcView {
        BmcView {
            url: self.url.clone(),
            has_auth: self.auth_sealed.is_some(),
            tls: self.tls.view(),
        }
    }
}
