//! # Stave
//!
//! Stave is the ABCI++ state machine of a decentralised content-rights
//! network. A real CometBFT v0.38 node orders transactions; Stave checks
//! them (CheckTx, PrepareProposal, ProcessProposal), applies them in
//! FinalizeBlock to its own chain store, and persists them in Commit.
//!
//! ```text
//!  client ──gRPC──▶ grpc::TxService ──broadcast_tx_sync──▶ CometBFT
//!                                                              │ ABCI (unix socket)
//!                 ┌────────────────────────────────────────────┘
//!                 ▼
//!  abci::server (a thread per connection) → abci::{mempool, consensus, info, snapshot}
//!        │ CheckTx          │ Prepare/Process/Finalize/Commit (one actor thread)
//!        ▼                  ▼
//!  app::Mempool        app::App ── tx::DecodedTx ── app::dispatch ──▶ keyspaces::*
//!   (pending nonces)        │  per-block Overlay ⊃ per-tx Overlay
//!                           ▼
//!                    store::ChainStore  (RocksDB: flat values, JMT nodes,
//!                                        versioned values, indexes, meta)
//! ```
//!
//! Modules:
//! - [`store`]: the chain store, overlays, JMT, commit, pruning, proofs.
//! - [`snapshot`]: state-sync snapshots: taken off the consensus thread,
//!   served, and restored with every chunk verified alone against the
//!   trusted app hash (range proofs over the JMT as a binary tree).
//! - [`tx`]: envelope, sign bytes, ZIP-215 verification, error codes.
//! - [`gas`]: the gas schedule, the per-tx meter and the block gas limit.
//! - [`keyspaces`]: one module per keyspace (accounts, chain, kv, params, validators,
//!   groups, takedowns, casbin, uploads, deks, releases, entitlements,
//!   policies, grants; shared rights rules).
//! - [`app`]: genesis, proposals, FinalizeBlock, Commit, the mempool view.
//! - [`abci`]: the ABCI socket server and the services (tower-abci `v038`
//!   types) around the app.
//! - [`grpc`]: tonic services on three listeners: the public client API,
//!   the allow-listed peer service between validators, the admin socket.
//! - [`net`]: the listeners' limits (connection caps, allow-list, per-IP
//!   rates, `RLIMIT_NOFILE`, 0600 Unix sockets).
//! - [`local`]: the local store (second RocksDB, content store, processing
//!   scratch, sync state, the node's private KV), its reconciler and peer
//!   fetches.
//! - [`crdt`]: CAD037's typed entries as a pure CRDT: merge, reads, local
//!   writes and collection (replication between validators sits above it).
//! - [`crypto`]: DEK wrapping, stream encryption, the key-encryption key.
//! - [`media`]: decoding audio, lossless FLAC encoding, content ids, and
//!   the `transcode-worker` child process that runs them under limits.
//! - [`ddex`]: DDEX ERN 4.3 releases: the model, the XML importer and
//!   exporter (client side), and the pure checks consensus runs
//!   (`keyspaces::releases` stores them; deals feed the access decision).
//! - [`content`]: the upload pipeline's node side: the signed upload
//!   intent, admission against chain state, the job driver and the
//!   operator-key tx submitter behind `ContentService`.
//! - [`access`]: access and delivery: a DEK holder answers a consumer's
//!   signed request with the re-wrapped DEK and records the delivery on
//!   chain; any replica serves ranged downloads of the encrypted blob.
//! - [`fuzz_fixtures`]: the fuzz targets' cases and seeds (fuzz/, and
//!   their corpus replayed as tests).
//! - [`par`]: data parallelism on scoped threads, inline for small inputs.
//! - [`cli`], [`config`], [`node`], [`metrics`], [`client`].

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod abci;
pub mod access;
pub mod app;
pub mod backup;
pub mod cli;
pub mod client;
pub mod config;
pub mod content;
pub mod crdt;
pub mod crypto;
pub mod fuzz_fixtures;
/// The `stave-ddex` crate (crates/ddex): DDEX ERN 4.3 releases.
pub use stave_ddex::ddex;
pub mod gas;
pub mod grpc;
pub mod keyfile;
pub mod keyspaces;
pub mod light;
pub mod local;
/// The `stave-media` crate (crates/media), under its old path.
pub use stave_media as media;
pub mod metrics;
pub mod net;
pub mod node;
pub mod par;
pub mod proof;
pub mod proto;
pub mod replica;
pub mod script;
pub mod snapshot;
pub mod store;
pub mod tx;
