//! URLs Podium takes from a caller and later fetches, forwards or stores: one check, and the
//! checked form is what is kept and sent.
//!
//! The WHATWG parser (`url`) is lenient in ways that would make the URL used differ from the
//! one checked: it silently drops tabs and line breaks anywhere in the text (so
//! `"http://a/x\r\nX-Injected: 1"` parses), and reads `http:///x` as the host `x`. Here such
//! text is refused, naming the field, and the parsed URL's own serialization is what callers
//! keep: never the text as typed.

use url::Url;

use crate::error::Error;

/// The longest URL Podium takes: more than any image or event server needs, less than what
/// would make a request line unwieldy.
pub(crate) const URL_MAX: usize = 2048;

/// Checks an http or https URL a caller gave in `field` and answers it parsed: no whitespace
/// or control character, a host written between `://` and the path, at most [`URL_MAX`] bytes.
/// An error never quotes the URL (it may hold a token in its query).
pub(crate) fn http_url(field: &str, raw: &str) -> Result<Url, Error> {
    if raw.len() > URL_MAX {
        return Err(Error::invalid(
            field,
            format!("is longer than {URL_MAX} bytes"),
        ));
    }
    if let Some(c) = raw.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::invalid(
            field,
            format!(
                "holds {}: a URL has none (percent-encode it)",
                match c {
                    ' ' => "a space".to_owned(),
                    '\r' | '\n' => "a line break".to_owned(),
                    '\t' => "a tab".to_owned(),
                    c => format!("the character U+{:04X}", u32::from(c)),
                }
            ),
        ));
    }
    let no_host = || Error::invalid(field, "names no host (`http://host/path`)");
    let url = Url::parse(raw).map_err(|e| match e {
        url::ParseError::EmptyHost => no_host(),
        e => Error::invalid(field, format!("is not a URL: {e}")),
    })?;
    // Percent-encoding may make the kept form longer than the text.
    if url.as_str().len() > URL_MAX {
        return Err(Error::invalid(
            field,
            format!("is longer than {URL_MAX} bytes once encoded"),
        ));
    }
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::invalid(field, "must be an http or https URL"));
    }
    // `url` reads `http:///x` and `http:x` as the host `x`: the text must name it itself.
    let authority = raw
        .split_once("://")
        .map(|(_, rest)| &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())]);
    let host = authority.map(|a| a.rsplit_once('@').map_or(a, |(_, h)| h));
    if host.is_none_or(|h| h.is_empty() || h.starts_with(':'))
        || url.host_str().is_none_or(str::is_empty)
    {
        return Err(no_host());
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(raw: &str) -> String {
        match http_url("image_url", raw) {
            Err(Error::Invalid {
                field: Some(field),
                message,
            }) => {
                assert_eq!(field, "image_url");
                message
            }
            other => panic!("{raw:?}: {other:?}"),
        }
    }

    #[test]
    fn whitespace_and_control_characters_are_refused_not_dropped() {
        for (raw, says) in [
            ("http://127.0.0.1:8/fw.bin\r\nX-Injected: 1", "line break"),
            ("http://a/fw\t.bin", "a tab"),
            ("http://a/fw .bin", "a space"),
            (" http://a/fw.bin", "a space"),
            ("http://a/fw\u{0}.bin", "U+0000"),
            ("http://a/fw\u{85}.bin", "U+0085"),
            ("http://a/fw\u{a0}.bin", "U+00A0"),
        ] {
            let message = refusal(raw);
            assert!(message.contains(says), "{raw:?}: {message}");
            assert!(!message.contains("fw"), "the URL is not quoted: {message}");
        }
    }

    #[test]
    fn a_host_is_written_in_the_url() {
        for raw in [
            "http:///fw.bin",
            "http:/fw.bin",
            "http:fw.bin",
            "https://:8080/fw.bin",
            "http://user@/fw.bin",
        ] {
            assert!(refusal(raw).contains("names no host"), "{raw}");
        }
        assert!(refusal("ftp://a/fw.bin").contains("http or https"));
        assert!(refusal(&format!("http://a/{}", "x".repeat(URL_MAX))).contains("longer"));
    }

    #[test]
    fn the_parsed_form_is_what_is_kept() {
        for (raw, kept) in [
            (
                "HTTP://Images.Example.NET/fw.bin",
                "http://images.example.net/fw.bin",
            ),
            ("http://a:80/x/../fw.bin", "http://a/fw.bin"),
            ("https://[::1]:8443/fw?a=1", "https://[::1]:8443/fw?a=1"),
            ("http://198.51.100.7", "http://198.51.100.7/"),
        ] {
            assert_eq!(http_url("f", raw).unwrap().as_str(), kept, "{raw}");
        }
    }
}
