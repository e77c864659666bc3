//! Stave's DDEX ERN 4.3 releases, apart from the node so the XML importer
//! and the consensus checks can be fuzzed without RocksDB. The node
//! re-exports [`ddex`] as `stave::ddex` and [`proto::ddex`] as
//! `stave::proto::ddex`.

#![forbid(unsafe_code)]
// The checks here run in consensus on untrusted input.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

/// The generated `stave.ddex.v1` types.
pub mod proto {
    #[allow(clippy::all, missing_docs)]
    pub mod ddex {
        include!(concat!(env!("OUT_DIR"), "/stave.ddex.v1.rs"));
    }
}

pub mod ddex;
