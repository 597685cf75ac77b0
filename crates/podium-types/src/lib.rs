//! Podium's model, shared by the server and its client: the secret type, and (as the redesign
//! goes on) an identifier type per kind of resource and an enum per state, kind and status.
//!
//! **Architecture Invariant:** a leaf crate. It depends on nothing of Podium's and on no crate
//! that does I/O (no sqlx, wasmtime, axum, reqwest), so the client links it freely.

mod secret;

pub use secret::Secret;
