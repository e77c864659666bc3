//! The `entitlements/` keyspace: `entitlements/{cid}/{pubkey}`, one record
//! per `(cid, pubkey)`, with the index `entitlements_by_key/{pubkey}/{cid}`
//! (same value, non-verifiable index space) and the owner count
//! `entitlement_owners/{cid}`. Written by `GrantEntitlement`,
//! `RevokeEntitlement` and `PublishRelease` (the publisher's `OWNER`).

mod grant;
mod keys;
pub mod query;
mod rebuild;
mod revoke;
pub mod scope;
mod state;
pub mod table;

pub use grant::GrantEntitlement;
pub use keys::{
    entitlement_by_key_key, entitlement_key, entitlements_by_key_prefix, entitlements_by_key_root,
    entitlements_cid_prefix, entitlements_prefix, owner_count_key,
};
pub use rebuild::rebuild_index;
pub use revoke::RevokeEntitlement;
pub use state::{entitlement_bytes, payer_of, EntitlementsRead, EntitlementsWrite};
