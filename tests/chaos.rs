//! The chaos soak (issue 27, `scripts/chaos`): a 4-validator localnet and
//! a full node under mixed traffic (kv, KV tokens, kvdb, Casbin models,
//! group applications and votes) while a seeded driver SIGKILLs stave or
//! cometbft, SIGSTOPs a node, restarts two at once, fills one node's disk
//! (a tmpfs under its Stave `data/`), truncates local-store files while a
//! node is down, and partitions nodes through proxies on every p2p link.
//! The oracle: every committed tx readable with its effect on every node,
//! app hashes equal at every height, every exit and panic matched by a
//! fault, ENOSPC named with its path, RSS <= 1.5 GiB and open files
//! <= 2,000 per process. Helpers in `tests/common/chaos/`.
//!
//! `STAVE_CHAOS_SEED` (default 1), `STAVE_CHAOS_MINUTES` (default 3: the
//! CI run, about 5 minutes in all), `STAVE_CHAOS_REPORT` (a JSON report).
//! Needs root (mount).

mod common;

use common::chaos::{soak, summary, Settings};
use common::localnet::binaries;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chaos_soak_loses_nothing() {
    let Some(bins) = binaries("chaos_soak_loses_nothing") else {
        return;
    };
    let settings = Settings::from_env();
    let report = soak(&bins, &settings).await;
    let text = summary(&report);
    eprintln!("{text}");
    if let Some(path) = &settings.report {
        let json = serde_json::to_string_pretty(&report).expect("report JSON");
        std::fs::write(path, json).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
    assert!(report.failures.is_empty(), "the chaos soak failed:\n{text}");
}
