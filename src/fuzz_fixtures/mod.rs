//! The fuzz targets' cases and seeds (issue 27).
//!
//! Each `*_case` takes the fuzzer's bytes and asserts the invariants of one
//! untrusted-input path: it must never panic, and where the path has an
//! oracle (a round trip, a second run that must agree, a model) it checks
//! it. `fuzz/fuzz_targets/<target>.rs` calls the case from libFuzzer
//! (`scripts/fuzz`); `tests/fuzz_corpus_replays.rs` calls it on every seed
//! and every committed corpus input (`fuzz/corpus/<target>/`) in CI, with
//! no instrumented build. A panic here is a finding: it becomes a committed
//! corpus input and so a regression test.
//!
//! Structure: inputs are raw bytes where the real path takes raw bytes
//! (frames, txs, chunks), and are shaped with [`arbitrary`] where a raw
//! input would rarely pass the first check (signed txs in a block, STREAM
//! ciphertext mutated after encryption).
//!
//! | target | case | what it drives |
//! | --- | --- | --- |
//! | `tx_envelope` | [`tx::envelope_case`] | `Tx` decode, every action's `check_stateless`, signatures |
//! | `abci_frame` | [`frame::frame_case`] | the ABCI socket's framing and request decoding |
//! | `finalize_block` | [`block::block_case`] | a block through FinalizeBlock on a seeded store, twice |
//! | `abci_query` | [`query::query_case`] | ABCI Query paths over a seeded store |
//! | `casbin` | [`casbin::casbin_case`] | Casbin model, rules, matcher and evaluator |
//! | `kvdb` | [`kvdb::kvdb_case`] | kvdb operations on an in-memory state |
//! | `kv_token` | [`token::token_case`] | the KV token format and token actions |
//! | `peer` | [`peer::peer_case`] | peer requests and answers, replica records |
//! | `stream_dek` | [`crypto::crypto_case`] | the STREAM decryptor and the DEK unwrap |
//! | `snapshot_chunk` | [`snapshot::snapshot_case`] | state-sync offers and chunks |

pub mod block;
pub mod casbin;
mod common;
pub mod crypto;
pub mod frame;
pub mod kvdb;
pub mod peer;
pub mod query;
pub mod snapshot;
pub mod token;
pub mod tx;
pub mod world;

/// The fuzz targets, in the order of the table above: each name is a
/// binary in `fuzz/` and a folder of `fuzz/corpus/`.
pub const TARGETS: [&str; 10] = [
    "tx_envelope",
    "abci_frame",
    "finalize_block",
    "abci_query",
    "casbin",
    "kvdb",
    "kv_token",
    "peer",
    "stream_dek",
    "snapshot_chunk",
];

/// Runs target `name`'s case on `data`; `false` for an unknown name.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "tx_envelope" => tx::envelope_case(data),
        "abci_frame" => frame::frame_case(data),
        "finalize_block" => block::block_case(data),
        "abci_query" => query::query_case(data),
        "casbin" => casbin::casbin_case(data),
        "kvdb" => kvdb::kvdb_case(data),
        "kv_token" => token::token_case(data),
        "peer" => peer::peer_case(data),
        "stream_dek" => crypto::crypto_case(data),
        "snapshot_chunk" => snapshot::snapshot_case(data),
        _ => return false,
    }
    true
}

/// Target `name`'s seeds: (file name, bytes), written into its corpus by
/// `cargo run --example node_fuzz_seeds` and replayed with it.
pub fn seeds(name: &str) -> Vec<(String, Vec<u8>)> {
    match name {
        "tx_envelope" => tx::seeds(),
        "abci_frame" => frame::seeds(),
        "finalize_block" => block::seeds(),
        "abci_query" => query::seeds(),
        "casbin" => casbin::seeds(),
        "kvdb" => kvdb::seeds(),
        "kv_token" => token::seeds(),
        "peer" => peer::seeds(),
        "stream_dek" => crypto::seeds(),
        "snapshot_chunk" => snapshot::seeds(),
        _ => Vec::new(),
    }
}
