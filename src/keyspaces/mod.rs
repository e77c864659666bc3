//! Chain keyspaces, one module each. A module owns its key builders
//! (`keys.rs`), its typed accessors (`state.rs`: `…Read` / `…Write`
//! extension traits with blanket impls over [`crate::store::StateRead`]),
//! its action handlers (`actions/`), and its queries (`query.rs`).
//!
//! Adding a keyspace means adding a module here, its proto, one arm in
//! [`crate::tx::Action`] and one arm in [`crate::app::dispatch`].

pub mod accounts;
pub mod casbin;
mod ctx;
pub mod deks;
pub mod entitlements;
pub mod grants;
pub mod kv;
pub mod params;
pub mod policies;
pub mod releases;
pub mod rights;
pub mod uploads;
pub mod validators;

pub use ctx::{Event, TxContext};
