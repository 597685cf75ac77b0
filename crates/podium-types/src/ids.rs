//! Identifiers: a newtype per kind of resource, so a host's id cannot be passed where a claim's
//! is expected. Each is the string it always was (a UUID for every id Podium makes; whatever
//! a path held for one a caller sent), serialized as that string and nothing more.

use std::borrow::Borrow;
use std::fmt;

macro_rules! ids {
    ($($(#[$meta:meta])* $name:ident ($what:literal);)+) => {$(
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A new id: a UUIDv7, so ids sort by when they were made.
            pub fn generate() -> $name {
                $name(uuid::Uuid::now_v7().to_string())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// An id a caller wrote where an id of this kind must be (a query's filter): a
            /// UUID, in any of its spellings, kept as Podium writes it (hyphenated, lower case).
            pub fn parse(text: &str) -> Result<$name, MalformedId> {
                uuid::Uuid::try_parse(text.trim())
                    .map(|uuid| $name(uuid.hyphenated().to_string()))
                    .map_err(|_| MalformedId { what: $what })
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> $name {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> $name {
                $name(s.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        // A plain string in the API document, described once under the id's name.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .description(Some(concat!("The id of ", $what, ".")))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl Id for $name {
            fn parse(text: &str) -> Result<$name, MalformedId> {
                $name::parse(text)
            }
        }
    )+};
}

ids! {
    /// A pod manager: a site, or a Redfish service in front of many systems.
    PodManagerId("a pod manager");
    /// A host (a machine behind a pod manager).
    HostId("a host");
    /// A chassis (a rack, an enclosure, a blade...) behind a pod manager.
    ChassisId("a chassis");
    /// A claim of a host by a tenant.
    ClaimId("a claim");
    /// A tenant.
    TenantId("a tenant");
    /// An API token (admin or tenant).
    TokenId("an API token");
    /// A grant of a pod manager's hosts to a tenant.
    GrantId("a grant");
    /// An IP pool.
    IpPoolId("an IP pool");
    /// An address allocated from an IP pool.
    IpClaimId("an IP claim");
    /// A durable operation.
    OperationId("an operation");
    /// An installed plugin (a WebAssembly component).
    PluginId("a plugin");
    /// A config drive served to a BMC.
    ConfigDriveId("a config drive");
    /// A Redfish session (`/redfish/v1/SessionService/Sessions`).
    SessionId("a Redfish session");
    /// A Redfish event subscription (`/redfish/v1/EventService/Subscriptions`).
    SubscriptionId("an event subscription");
}

/// An id of some kind, for code written once for all of them.
pub trait Id: Sized {
    /// See each id's `parse`.
    fn parse(text: &str) -> Result<Self, MalformedId>;
}

/// Text where an id must be that is none (every id Podium makes is a UUID).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MalformedId {
    what: &'static str,
}

impl fmt::Display for MalformedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "must be the id of {} (a UUID)", self.what)
    }
}

impl std::error::Error for MalformedId {}

/// `#[serde(default, deserialize_with = "crate::ids::query_id")]`: an optional filter by id,
/// refused when empty or malformed (rather than looked up and not found).
pub(crate) fn query_id<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Id,
{
    let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
    T::parse(&text).map(Some).map_err(serde::de::Error::custom)
}

/// Whose records a read or change may touch: every tenant's (an admin) or one tenant's. It
/// replaces an `Option` whose `None` silently meant "everyone".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TenantScope<'a> {
    Every,
    Tenant(&'a TenantId),
}

impl<'a> TenantScope<'a> {
    /// The one tenant, where the scope is one tenant's.
    pub fn tenant(self) -> Option<&'a TenantId> {
        match self {
            TenantScope::Every => None,
            TenantScope::Tenant(id) => Some(id),
        }
    }

    /// Whether a record of `owner` is in scope.
    pub fn includes(self, owner: &TenantId) -> bool {
        match self {
            TenantScope::Every => true,
            TenantScope::Tenant(id) => id == owner,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_string_in_json() {
        let id = HostId::from("0190f0c2-0000-7000-8000-000000000001");
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, r#""0190f0c2-0000-7000-8000-000000000001""#);
        assert_eq!(serde_json::from_str::<HostId>(&json).unwrap(), id);
        assert_eq!(
            format!("{id:?}"),
            r#""0190f0c2-0000-7000-8000-000000000001""#
        );
    }

    #[test]
    fn a_filter_id_is_a_uuid_in_any_spelling_kept_as_podium_writes_it() {
        let id = ClaimId::generate();
        assert_eq!(ClaimId::parse(&id.as_str().to_uppercase()), Ok(id.clone()));
        assert_eq!(ClaimId::parse(&format!("{{{id}}}")), Ok(id));
        for bad in ["", " ", "claim-1", "0190f0c2-0000-7000-8000"] {
            let e = ClaimId::parse(bad).unwrap_err();
            assert_eq!(
                e.to_string(),
                "must be the id of a claim (a UUID)",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn generated_ids_are_uuids_in_order() {
        let (a, b) = (ClaimId::generate(), ClaimId::generate());
        assert!(uuid::Uuid::parse_str(a.as_str()).is_ok());
        assert!(a < b, "{a} then {b}");
    }

    #[test]
    fn a_scope_of_one_tenant_holds_only_its_records() {
        let (acme, other) = (TenantId::from("acme"), TenantId::from("other"));
        assert!(TenantScope::Tenant(&acme).includes(&acme));
        assert!(!TenantScope::Tenant(&acme).includes(&other));
        assert!(TenantScope::Every.includes(&other));
    }
}
