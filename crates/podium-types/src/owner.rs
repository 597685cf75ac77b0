//! Who holds an address of an IP pool: a host (`host:<id>`), a claim (`claim:<id>`), or any
//! other name an admin gives. Stored, and sent, as that text.

use std::fmt;

use crate::{ClaimId, HostId};

/// Who an address is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    Host(HostId),
    Claim(ClaimId),
    Name(String),
}

/// The text of an owner is 1 to this many characters.
pub const OWNER_MAX: usize = 253;

/// Text that is no owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadOwner;

impl fmt::Display for BadOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "an owner is `host:<id>`, `claim:<id>` or a name of 1 to {OWNER_MAX} characters \
             of A-Z, a-z, 0-9, `.`, `_`, `-`, `:` and `/`"
        )
    }
}

impl std::error::Error for BadOwner {}

impl Owner {
    /// Checks an owner's text: 1 to 253 characters of letters, digits, `.`, `_`, `-`, `:`, `/`.
    pub fn check(text: &str) -> Result<(), BadOwner> {
        let ok = !text.is_empty()
            && text.len() <= OWNER_MAX
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-:/".contains(&b));
        if ok { Ok(()) } else { Err(BadOwner) }
    }

    pub fn parse(text: &str) -> Result<Owner, BadOwner> {
        Owner::check(text)?;
        Ok(match text.split_once(':') {
            Some(("host", id)) => Owner::Host(id.into()),
            Some(("claim", id)) => Owner::Claim(id.into()),
            _ => Owner::Name(text.to_owned()),
        })
    }

    /// The text of a host's ownership.
    pub fn host(id: &HostId) -> String {
        format!("host:{id}")
    }

    /// The text of a claim's ownership.
    pub fn claim(id: &ClaimId) -> String {
        format!("claim:{id}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_parse_by_their_prefix_and_bad_text_is_refused() {
        assert_eq!(Owner::parse("host:h1"), Ok(Owner::Host("h1".into())));
        assert_eq!(Owner::parse("claim:c1"), Ok(Owner::Claim("c1".into())));
        assert_eq!(Owner::parse("node-1"), Ok(Owner::Name("node-1".into())));
        assert_eq!(Owner::parse(""), Err(BadOwner));
        assert_eq!(Owner::parse("a b"), Err(BadOwner));
        assert_eq!(Owner::parse(&"x".repeat(OWNER_MAX + 1)), Err(BadOwner));
        assert_eq!(Owner::host(&"h1".into()), "host:h1");
    }
}
