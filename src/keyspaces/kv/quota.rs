//! Stored bytes of the kv area, charged to the controller (tokens) or the
//! owner (kvdb) through the shared account storage rules.

pub use crate::keyspaces::accounts::storage::{charge, release};
