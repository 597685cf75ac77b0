//! Text shown as it is: what Podium takes from a plugin or a caller and shows again, with no
//! character that hides itself or changes how the text around it reads.

/// Whether `c` changes how text around it reads without showing itself: bidirectional
/// embeddings, overrides and isolates, zero-width characters, the byte-order mark.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{FEFF}')
}

/// Whether `c` may stand in text shown as it is: not a control character, not invisible.
pub fn is_plain(c: char) -> bool {
    !c.is_control() && !is_invisible(c)
}
