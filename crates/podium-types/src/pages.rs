//! Pages of a list: which one to read (at most `limit` items after `cursor`) and what one
//! holds. A cursor is opaque to callers: the `next` of the page before.

/// Which page of a list to read: at most `limit` items after `cursor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub limit: u32,
    pub cursor: Option<String>,
}

/// One page of items and the cursor of the next page, if there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paged<T> {
    pub items: Vec<T>,
    pub next: Option<String>,
}
