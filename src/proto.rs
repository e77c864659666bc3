//! Generated protobuf types, nested as their packages (`stave.<area>.v1`)
//! and re-exported by area. Prost types stay on the wire; domain types
//! convert from them with `TryFrom`/`From` (see `tx::` and the keyspaces).

#![allow(clippy::all, missing_docs)]

/// The package tree as generated.
pub mod stave {
    pub mod tx {
        pub mod v1 {
            tonic::include_proto!("stave.tx.v1");
        }
    }
    pub mod kv {
        pub mod v1 {
            tonic::include_proto!("stave.kv.v1");
        }
    }
    pub mod accounts {
        pub mod v1 {
            tonic::include_proto!("stave.accounts.v1");
        }
    }
    pub mod genesis {
        pub mod v1 {
            tonic::include_proto!("stave.genesis.v1");
        }
    }
    pub mod governance {
        pub mod v1 {
            tonic::include_proto!("stave.governance.v1");
        }
    }
    pub mod local {
        pub mod v1 {
            tonic::include_proto!("stave.local.v1");
        }
    }
    pub mod peer {
        pub mod v1 {
            tonic::include_proto!("stave.peer.v1");
        }
    }
    pub mod query {
        pub mod v1 {
            tonic::include_proto!("stave.query.v1");
        }
    }
    pub mod casbin {
        pub mod v1 {
            tonic::include_proto!("stave.casbin.v1");
        }
    }
    pub mod rights {
        pub mod v1 {
            tonic::include_proto!("stave.rights.v1");
        }
    }
    pub mod content {
        pub mod v1 {
            tonic::include_proto!("stave.content.v1");
        }
    }
    pub mod proof {
        pub mod v1 {
            tonic::include_proto!("stave.proof.v1");
        }
    }
    pub mod snapshot {
        pub mod v1 {
            tonic::include_proto!("stave.snapshot.v1");
        }
    }
    pub mod replica {
        pub mod v1 {
            tonic::include_proto!("stave.replica.v1");
        }
    }
}

/// `stave.accounts.v1`: the stored account.
pub use self::stave::accounts::v1 as accounts;
/// `stave.casbin.v1`: Casbin models, rules, their actions and query service.
pub use self::stave::casbin::v1 as casbin;
/// `stave.content.v1`: the upload pipeline's service.
pub use self::stave::content::v1 as content;
/// `stave.genesis.v1`: consensus params and genesis validators.
pub use self::stave::genesis::v1 as genesis;
/// `stave.governance.v1`: validator elections, updates and governance params.
pub use self::stave::governance::v1 as governance;
/// `stave.kv.v1`: kv actions and the stored entry.
pub use self::stave::kv::v1 as kv;
/// `stave.local.v1`: local-store records and the operator status service.
pub use self::stave::local::v1 as local;
/// `stave.peer.v1`: the validator-to-validator service.
pub use self::stave::peer::v1 as peer;
/// `stave.proof.v1`: the proofs that ride on verified reads.
pub use self::stave::proof::v1 as proof;
/// `stave.query.v1`: the query gRPC service.
pub use self::stave::query::v1 as query;
/// `stave.replica.v1`: replicated CAD037 records and UEP-20 messages.
pub use self::stave::replica::v1 as replica;
/// `stave.rights.v1`: content and rights actions, records and the rights service.
pub use self::stave::rights::v1 as rights;
/// `stave.snapshot.v1`: state-sync snapshot metadata and chunks.
pub use self::stave::snapshot::v1 as snapshot;
/// `stave.tx.v1`: the envelope, the action oneof and the tx gRPC service.
pub use self::stave::tx::v1 as tx;
/// `stave.ddex.v1`: the DDEX ERN 4.3 release model and its on-chain records.
pub use stave_ddex::proto::ddex;

/// The encoded file descriptor set, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("stave_descriptor");
