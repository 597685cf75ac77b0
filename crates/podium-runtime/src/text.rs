//! Free text a plugin writes (its error messages, its log lines, its stderr), made safe before
//! the host stores, logs or returns it: every control and invisible formatting character is
//! escaped, so a NUL cannot break a datastore, a newline cannot forge a log line, an escape
//! sequence cannot drive a terminal and a bidirectional override cannot make text read other
//! than it is; then the text is clipped.

use std::fmt::Write;

pub(crate) use podium_types::text::is_plain;

/// `s` with every character that is not [`is_plain`] escaped (`\n`, `\u{0}`, `\u{202e}`),
/// clipped to at most `max` bytes (on a character boundary, marked ` [truncated]`).
pub(crate) fn plugin_text(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max) + 16);
    let mut truncated = false;
    for c in s.chars() {
        if out.len() >= max {
            truncated = true;
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_plain(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    if out.len() > max {
        let mut end = max;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        truncated = true;
    }
    if truncated {
        out.push_str(" [truncated]");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_invisible_characters_are_escaped() {
        assert_eq!(
            plugin_text("a\0b\nINFO podium::server: forged\r\x1b[31m", 1024),
            "a\\u{0}b\\nINFO podium::server: forged\\r\\u{1b}[31m"
        );
        assert_eq!(
            plugin_text("evil\u{202e}txt.exe", 1024),
            "evil\\u{202e}txt.exe"
        );
        assert_eq!(plugin_text("zero\u{200b}width", 1024), "zero\\u{200b}width");
        assert_eq!(plugin_text("plain: ünïcode ✓", 1024), "plain: ünïcode ✓");
    }

    #[test]
    fn long_text_is_clipped_on_a_character_boundary() {
        let s = "é".repeat(100);
        let out = plugin_text(&s, 11);
        assert_eq!(out, format!("{} [truncated]", "é".repeat(5)));
        assert_eq!(plugin_text("short", 5), "short");
        // Escapes count against the limit too: a message of NULs cannot grow without bound.
        let out = plugin_text(&"\0".repeat(10_000), 64);
        assert!(out.len() <= 64 + " [truncated]".len(), "{}", out.len());
    }
}
