//! The `releases/` keyspace: DDEX ERN 4.3 releases keyed by release id (the
//! ICPN as a 14-digit GTIN, or the GRid).
//!
//! | key | space | value |
//! | --- | --- | --- |
//! | `releases/{release_id}` | state | `stave.ddex.v1.ReleaseRecord`: the current version |
//! | `release_versions/{release_id}/{u32be}` | state | earlier versions, at most `rights.max_release_versions` |
//! | `releases_by_cid/{cid}/{release_id}` | state | `stave.ddex.v1.CidDeals`: the deals covering the cid (what the access decision reads), at most `rights.max_releases_per_cid` per cid |
//! | `releases_by_party/{party}/{release_id}` | index | empty: the releases naming a party as label or display artist |
//!
//! `PublishRelease` ([`publish`]) writes a new id, or replaces the stored
//! version of an id ([`update`]): metadata, track list and every deal. The
//! first publisher of an id wins; a squatter who publishes someone else's
//! ICPN first must hold each track (uploader or OWNER). A takedown stops
//! access to its cids; nothing frees or transfers the id. An upload becomes `PUBLISHED` when it
//! first joins a release and stays so.

mod keys;
mod publish;
pub mod query;
mod rebuild;
pub mod sign;
mod state;
mod update;

pub use keys::{
    by_cid_key, by_cid_prefix, by_party_key, by_party_prefix, release_key, version_key,
    versions_prefix,
};
pub use publish::PublishRelease;
pub use rebuild::rebuild_index;
pub use state::{record_bytes, ReleasesRead, ReleasesWrite};
