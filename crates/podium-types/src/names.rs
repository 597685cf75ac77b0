//! Names of the model's enums: each variant has one name, the one the API, the store and the
//! logs all use. `names!` writes `ALL`, `as_str`, `FromStr` (failing with `UnknownName`, which
//! names the value), `Display`, serde and the API document's schema for an enum from its list of
//! `Variant => "name"`.

use std::fmt;

macro_rules! names {
    ($(#[$meta:meta])* $vis:vis enum $name:ident ($what:literal) { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::UnknownName;
            fn from_str(s: &str) -> Result<$name, $crate::UnknownName> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::UnknownName {
                        what: $what,
                        name: s.to_owned(),
                        names: &[$($text),+],
                    }),
                }
            }
        }

        impl $crate::names::Named for $name {
            const ALL: &'static [$name] = $name::ALL;
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        // The API document's schema: a string of one of the names.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some($name::ALL.iter().map(|v| v.as_str())))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use names;

/// An enum with names (`names!`), for code written once for all of them.
pub trait Named: Copy + std::str::FromStr<Err = UnknownName> + 'static {
    const ALL: &'static [Self];
    fn as_str(self) -> &'static str;
}

/// `#[serde(default, deserialize_with = "crate::names::comma_list")]`: a query's filter of one
/// or more names, comma-separated (`status=queued,running`); an unknown one is refused with the
/// names it may be.
pub(crate) fn comma_list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Named,
{
    let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
    text.split(',')
        .map(|name| {
            name.trim()
                .parse::<T>()
                .map_err(|e| serde::de::Error::custom(format!("{e}; names are comma-separated")))
        })
        .collect()
}

/// A name that is not one of a type's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
    /// The names there are.
    pub names: &'static [&'static str],
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not {}", self.name.escape_debug(), self.what)?;
        match self.names {
            [] => Ok(()),
            names => write!(f, " (one of {})", names.join(", ")),
        }
    }
}

impl std::error::Error for UnknownName {}
