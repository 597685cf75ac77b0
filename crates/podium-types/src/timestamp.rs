//! A moment, as Podium keeps and shows it: UTC, RFC 3339 with microseconds
//! (`2026-12-02T10:22:31.450000Z`), a text that sorts as the moments do.

use std::fmt;

use time::OffsetDateTime;

/// A moment in UTC, to the microsecond.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(OffsetDateTime);

impl Timestamp {
    /// Now, to the microsecond.
    pub fn now() -> Timestamp {
        Timestamp::from(OffsetDateTime::now_utc())
    }

    /// The moment itself.
    pub fn get(self) -> OffsetDateTime {
        self.0
    }

    /// This moment `d` earlier, saturating.
    pub fn before(self, d: std::time::Duration) -> Timestamp {
        let d = time::Duration::try_from(d).unwrap_or(time::Duration::MAX);
        Timestamp(self.0.saturating_sub(d))
    }

    /// This moment `d` later, saturating.
    pub fn after(self, d: std::time::Duration) -> Timestamp {
        let d = time::Duration::try_from(d).unwrap_or(time::Duration::MAX);
        Timestamp(self.0.saturating_add(d))
    }
}

impl From<OffsetDateTime> for Timestamp {
    fn from(t: OffsetDateTime) -> Timestamp {
        let t = t.to_offset(time::UtcOffset::UTC);
        // Microseconds: what is kept and shown; finer would not read back the same.
        Timestamp(t.replace_nanosecond(t.microsecond() * 1_000).unwrap_or(t))
    }
}

/// Text that is no RFC 3339 moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadTimestamp(pub String);

impl fmt::Display for BadTimestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not an RFC 3339 time", self.0.escape_debug())
    }
}

impl std::error::Error for BadTimestamp {}

impl std::str::FromStr for Timestamp {
    type Err = BadTimestamp;

    /// Any RFC 3339 moment, with any offset and precision.
    fn from_str(s: &str) -> Result<Timestamp, BadTimestamp> {
        OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
            .map(Timestamp::from)
            .map_err(|_| BadTimestamp(s.to_owned()))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second(),
            t.microsecond()
        )
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Default for Timestamp {
    fn default() -> Timestamp {
        Timestamp(OffsetDateTime::UNIX_EPOCH)
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

// The API document's schema: an RFC 3339 date-time string.
impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::DateTime,
            )))
            .into()
    }
}

impl utoipa::ToSchema for Timestamp {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_reads_back_what_it_writes_to_the_microsecond_in_utc() {
        let t: Timestamp = "2026-12-02T11:22:31.450123456+01:00".parse().unwrap();
        assert_eq!(t.to_string(), "2026-12-02T10:22:31.450123Z");
        assert_eq!(t.to_string().parse::<Timestamp>(), Ok(t));
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"2026-12-02T10:22:31.450123Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), t);
        assert!("yesterday".parse::<Timestamp>().is_err());
        // Text order is time order.
        let later = t.after(std::time::Duration::from_micros(1));
        assert!(later > t && later.to_string() > t.to_string());
    }
}
