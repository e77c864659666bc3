//! Chain keyspaces, one module each. A module owns its key builders
//! (`keys.rs`), its typed accessors (`state.rs`: `…Read` / `…Write`
//! extension traits with blanket impls over [`crate::store::StateRead`]),
//! its action handlers (`actions/`), and its queries (`query.rs`).
//!
//! Adding a keyspace means adding a module here, its proto, one arm in
//! [`crate::tx::Action`] and one arm in [`crate::app::dispatch`].

/// Declares a domain action type with the fields of its wire message and
/// the conversions both ways. For actions whose fields need no parsing
/// beyond what `check_stateless` validates: the handlers see the domain
/// type, and prost stays on the wire. Declared before the keyspace modules
/// so that they see it.
macro_rules! domain_action {
    ($(#[$doc:meta])* $name:ident => $wire:path { $($field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            $(pub $field: $ty),*
        }
        impl From<$wire> for $name {
            fn from(w: $wire) -> Self {
                $name { $($field: w.$field),* }
            }
        }
        impl From<$name> for $wire {
            fn from(d: $name) -> Self {
                Self { $($field: d.$field),* }
            }
        }
    };
}

pub mod accounts;
pub mod casbin;
pub mod chain;
mod ctx;
pub mod deks;
pub mod entitlements;
pub mod grants;
pub mod groups;
pub mod index_rows;
pub mod kv;
pub mod params;
pub mod policies;
pub mod releases;
pub mod rights;
pub mod takedowns;
pub mod upgrades;
pub mod uploads;
pub mod validators;

pub use ctx::{Event, TxContext};

/// A stored big-endian counter (absent = 0); any other length is corrupt.
pub(crate) fn u64_of(key: &[u8], raw: Option<Vec<u8>>) -> Result<u64, crate::store::StoreError> {
    match raw {
        None => Ok(0),
        Some(r) => r
            .as_slice()
            .try_into()
            .map(u64::from_be_bytes)
            .map_err(|_| crate::store::StoreError::corrupt(key, "not 8 bytes")),
    }
}
