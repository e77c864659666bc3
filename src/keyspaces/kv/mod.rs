//! The kv area (issue 5): typed KV databases and signed KV tokens.
//!
//! - [`db`]: `kvdb/{owner}/{db}/{key}` entries with CAD037 types (value,
//!   hash, set, sorted set, list, counter), TTL and end-of-block GC.
//!   `kv.Set` / `kv.Delete` are kvdb SET / DEL on the signer's `default`
//!   database: one KV path.
//! - [`token`]: BRC-35 KV tokens: controller-signed, generation-protected,
//!   one live token per `(protocol_id, key, controller)`, with history and
//!   index-served lookups.
//!
//! Layout as in every keyspace: key builders in [`keys`], typed accessors in
//! `db::state` / `token::state`, handlers per action, reads in `query`.

pub mod db;
mod error;
pub mod keys;
mod params;
pub mod query;
mod quota;
pub mod token;

pub use db::{KvDelete, KvEntry, KvSet, KvType, KvdbAction, KvdbOp, KvdbRead, KvdbWrite};
pub use error::KvError;
pub use keys::{kv_key, kv_prefix, split_kv_key, DEFAULT_DB};
pub use params::KvTokenParams;
pub use token::{KvToken, KvTokenCreate, KvTokenDelete, KvTokenUpdate};

/// The `kv.Set`-era read trait: [`KvdbRead::kv_entry`].
pub use db::KvdbRead as KvRead;

pub(crate) use super::u64_of;

/// End-of-block work of the area: the kvdb GC.
pub fn end_block<S: crate::store::StateWrite>(
    state: &mut S,
    time_ns: i64,
    params: &crate::keyspaces::params::Params,
) -> Result<u64, crate::store::StoreError> {
    db::gc::end_block(state, time_ns, params)
}
