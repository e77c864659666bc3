//! State sync at scale: build a snapshot of a store with N keys (default
//! 1,000,000) and restore it into a fresh store through the restorer the
//! snapshot connection uses (offer, every chunk verified and staged, the
//! final write). The restore runs in a child process so its peak RSS is
//! its own.
//!
//! `cargo bench --bench state_sync -- [KEYS]`

use std::path::Path;
use std::time::Instant;

use stave::keyspaces::chain::{ChainFacts, ChainWrite};
use stave::keyspaces::params::{Params, ParamsWrite};
use stave::snapshot::restore::OfferResult;
use stave::snapshot::{build, ApplyResult, Restorer, SnapshotFiles};
use stave::store::{ChainStore, MemState, Overlay};

const CHAIN: &str = "stave-bench";
const BLOCK: u64 = 100_000;

#[path = "support/fill.rs"]
mod direct;
#[path = "support/rss.rs"]
mod rss;
use rss::peak_rss_mib;

/// Genesis, then `keys` rows of 32-byte keys and 100-byte values in blocks
/// of 100,000 (about the shape of kv entries).
fn fill(store: &ChainStore, keys: u64) -> u64 {
    let base = MemState::default();
    let mut g = Overlay::new(&base);
    g.put_params(&Params::default());
    g.put_chain_facts(&ChainFacts {
        chain_id: CHAIN.into(),
        evidence_max_age_blocks: 100_000,
        consensus_params: Vec::new(),
    });
    store
        .commit_genesis(CHAIN, 0, g.into_changes())
        .expect("genesis");
    let mut height = 0;
    direct::put_versions(
        store,
        &mut height,
        keys,
        BLOCK,
        |i| {
            let mut k = b"kv/bench/".to_vec();
            k.extend_from_slice(&i.to_be_bytes());
            (k, vec![(i % 251) as u8; 100])
        },
        |_, _| {},
    );
    height
}

fn child(snapdir: &Path, height: u64) {
    let t0 = Instant::now();
    let files = SnapshotFiles::open(snapdir).expect("files");
    let (_, meta) = files
        .list()
        .expect("list")
        .into_iter()
        .find(|(h, _)| *h == height)
        .expect("snapshot");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChainStore::open(dir.path()).expect("open");
    let mut r = Restorer::new(store.clone(), None);
    let chunks = meta.chunk_hashes.len() as u32;
    let offered = Instant::now();
    let ok = r
        .offer(
            height,
            stave::snapshot::FORMAT,
            chunks,
            &meta.hash(),
            &meta.encode(),
            &meta.app_hash,
        )
        .expect("offer");
    assert_eq!(ok, OfferResult::Accept);
    for i in 0..chunks {
        let bytes = files.chunk(height, i).expect("chunk");
        match r.apply(i, &bytes).expect("apply") {
            ApplyResult::Accept { .. } => {}
            other => panic!("chunk {i}: {other:?}"),
        }
    }
    let info = store.commit_info().expect("info");
    assert_eq!(info.height, Some(height));
    assert_eq!(info.app_hash, meta.app_hash.to_vec());
    println!(
        "restore: {chunks} chunks, offer to Info at H {:.2} s, from process start {:.2} s, peak RSS {:.0} MiB",
        offered.elapsed().as_secs_f64(),
        t0.elapsed().as_secs_f64(),
        peak_rss_mib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("restore-child") {
        let h = args[2].parse().expect("height");
        return child(Path::new(&args[1]), h);
    }
    let keys: u64 = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ChainStore::open(&dir.path().join("chain")).expect("open");
    let t = Instant::now();
    let height = fill(&store, keys);
    eprintln!("filled {keys} keys in {:.1} s", t.elapsed().as_secs_f64());
    let files = SnapshotFiles::open(&dir.path().join("snapshots")).expect("files");
    let t = Instant::now();
    files.begin(height).expect("begin");
    let meta = build::build(&store, height, |i, b| {
        files.put_chunk(height, i, &b).map_err(|e| e.to_string())
    })
    .expect("build");
    files.finish(height, &meta).expect("finish");
    println!(
        "snapshot: {keys} keys, {} chunks, {:.0} MiB of keys and values, built in {:.2} s, peak RSS so far {:.0} MiB",
        meta.chunk_hashes.len(),
        meta.bytes as f64 / (1 << 20) as f64,
        t.elapsed().as_secs_f64(),
        peak_rss_mib()
    );
    drop(store);
    let exe = std::env::current_exe().expect("exe");
    let status = std::process::Command::new(exe)
        .arg("restore-child")
        .arg(dir.path().join("snapshots"))
        .arg(height.to_string())
        .status()
        .expect("child");
    assert!(status.success(), "restore child failed");
}
