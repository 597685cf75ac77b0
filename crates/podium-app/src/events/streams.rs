//! The event streams open in this process, counted per token so that one token cannot hold
//! any number of them (each is a connection and a task): past the bound, a new stream is
//! refused until one of that token's ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use podium_types::TokenId;

/// Streams one token may hold open in one process, unless the admin sets another bound.
pub const DEFAULT_PER_TOKEN: usize = 32;

/// Open streams by token.
#[derive(Debug)]
pub(crate) struct StreamCounts {
    open: Mutex<HashMap<TokenId, usize>>,
    per_token: usize,
}

impl StreamCounts {
    pub(crate) fn new(per_token: usize) -> Arc<StreamCounts> {
        Arc::new(StreamCounts {
            open: Mutex::default(),
            per_token,
        })
    }

    pub(crate) fn per_token(&self) -> usize {
        self.per_token
    }

    /// One more stream of `token`, held until the permit is dropped; `None` past the bound.
    pub(crate) fn open(self: &Arc<StreamCounts>, token: &TokenId) -> Option<StreamPermit> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(token.clone()).or_default();
        if *count >= self.per_token {
            return None;
        }
        *count += 1;
        Some(StreamPermit {
            counts: Arc::clone(self),
            token: token.clone(),
        })
    }
}

/// One open stream, counted until dropped.
#[derive(Debug)]
pub(crate) struct StreamPermit {
    counts: Arc<StreamCounts>,
    token: TokenId,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut open = self
            .counts
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.token) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.token);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_holds_at_most_its_bound_and_gets_one_back_when_a_stream_ends() {
        let counts = StreamCounts::new(2);
        let (a, b) = (TokenId::from("a"), TokenId::from("b"));
        let first = counts.open(&a).unwrap();
        let _second = counts.open(&a).unwrap();
        assert!(counts.open(&a).is_none());
        assert!(counts.open(&b).is_some(), "another token has its own bound");
        drop(first);
        assert!(counts.open(&a).is_some());
        assert!(
            counts.open.lock().unwrap().get(&b).is_none(),
            "no count is kept at zero"
        );
    }
}
