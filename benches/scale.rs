//! Benchmark (m): the chain store at 1M and 10M keys. Builds the store
//! directly (genesis through the app, then versions of 100,000 keys through
//! the store's own prepare and commit, not by replaying txs) and keeps it, then
//! runs blocks of signed one-key `kv.Set` txs through FinalizeBlock + Commit on
//! a checkpoint of it (hard links; the blocks never reach the kept store), in
//! a child process that opens only the checkpoint, so its RSS is its own. Reports tx/s, FinalizeBlock and Commit
//! ms, the store's size on disk, and where the memory is: RSS, RocksDB's
//! block cache, memtables and table readers.
//!
//! `cargo bench --bench scale -- [KEYS] [BLOCK SIZE] [BLOCKS]` (defaults
//! 1000000 1000 20). Stores live under `$STAVE_BENCH_STORES`
//! (default `~/.cache/stave-bench-stores`), one directory per key count;
//! delete one to build it again. Signatures are not in the verified cache, as
//! in block sync: every block pays full verification.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::time::Instant;

use stave::app::{App, AppConfig};
use stave::store::ChainStore;

/// Keys per version while building.
const VERSION_KEYS: u64 = 100_000;

#[path = "support/fill.rs"]
mod direct;
#[path = "support/kv_blocks.rs"]
mod kv_blocks;
#[path = "support/rss.rs"]
mod rss;
#[path = "support/settle.rs"]
mod settle;
use kv_blocks::{CHAIN, GENESIS};

fn stores_dir() -> PathBuf {
    std::env::var_os("STAVE_BENCH_STORES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
            Path::new(&home).join(".cache/stave-bench-stores")
        })
}

/// Genesis through the app, then `keys` kv entries (32-byte owner, 8-byte
/// key, 100-byte value) in versions of [`VERSION_KEYS`].
fn build(dir: &Path, keys: u64) {
    let t = Instant::now();
    let partial = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    {
        let store = ChainStore::open(&partial).expect("open");
        let mut app = App::load(store.clone(), AppConfig::default()).expect("load");
        app.init_chain(CHAIN, 0, GENESIS, &[]).expect("genesis");
        drop(app);
        let mut height = 0;
        direct::put_versions(
            &store,
            &mut height,
            keys,
            VERSION_KEYS,
            |i| {
                let mut owner = [0u8; 32];
                owner[..8].copy_from_slice(&(i % 4096).to_be_bytes());
                let key = stave::keyspaces::kv::keys::kv_key(&owner, &i.to_be_bytes());
                (key, vec![(i % 251) as u8; 100])
            },
            |h, written| {
                if h % 10 == 0 {
                    eprintln!("  {written} keys, {:.0} s", t.elapsed().as_secs_f64());
                }
            },
        );
        settle::settle(&store);
    }
    std::fs::rename(&partial, dir).expect("rename");
    eprintln!(
        "built {keys} keys in {:.1} s, {:.0} MiB on disk",
        t.elapsed().as_secs_f64(),
        du_mib(dir)
    );
}

fn du_mib(dir: &Path) -> f64 {
    fn walk(p: &Path) -> u64 {
        let Ok(rd) = std::fs::read_dir(p) else {
            return 0;
        };
        rd.flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    }
    walk(dir) as f64 / (1 << 20) as f64
}

/// RocksDB's own memory, in MiB: block cache, memtables, table readers.
fn rocksdb_mib(store: &ChainStore) -> (f64, f64, f64) {
    let db = store.db();
    let sum = |prop: &str| -> f64 {
        stave::store::cf::ALL
            .iter()
            .filter_map(|n| db.cf_handle(n))
            .filter_map(|cf| db.property_int_value_cf(&cf, prop).ok().flatten())
            .sum::<u64>() as f64
            / (1 << 20) as f64
    };
    let cache = db
        .cf_handle(stave::store::cf::STATE)
        .and_then(|cf| {
            db.property_int_value_cf(&cf, "rocksdb.block-cache-usage")
                .ok()
                .flatten()
        })
        .unwrap_or(0) as f64
        / (1 << 20) as f64;
    (
        cache,
        sum("rocksdb.cur-size-all-mem-tables"),
        sum("rocksdb.estimate-table-readers-mem"),
    )
}

/// Runs `blocks` blocks of `size` signed one-key `kv.Set`s on `copy`, a
/// checkpoint of the kept store at `dir` (whose size on disk is reported).
fn run(dir: &Path, copy: &Path, keys: u64, size: usize, blocks: usize) {
    let rss_open = rss::current_rss_mib();
    let store = ChainStore::open(copy).expect("open checkpoint");
    let mut app = App::load(store.clone(), AppConfig::default()).expect("load");
    let mut height = store.commit_info().expect("info").height.unwrap_or(0);
    let signed = kv_blocks::signed_blocks(&kv_blocks::keys(size, 0x33), blocks, "scale");
    let t = kv_blocks::run_blocks(&mut app, &mut height, &signed);
    let (fin, com) = (t.finalize_ms, t.commit_ms);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let (cache, memtables, readers) = rocksdb_mib(&store);
    println!(
        "| {keys} | {:.0} | {size} | {blocks} | {:>7.0} | {:.1} / {:.1} | {:.1} / {:.1} | {:.0} (before opening {:.0}) | {:.0} | {cache:.0} / {memtables:.0} / {readers:.0} |",
        du_mib(dir),
        t.tx_per_sec,
        median(&mut fin.clone()),
        max(&fin),
        median(&mut com.clone()),
        max(&com),
        rss::current_rss_mib(),
        rss_open,
        rss::peak_rss_mib(),
    );
}

fn main() {
    let args = kv_blocks::bench_args();
    let num = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let keys = num(0, 1_000_000);
    let (size, blocks) = (num(1, 1000) as usize, num(2, 20).max(1) as usize);
    let dir = stores_dir().join(keys.to_string());
    if let Some(copy) = std::env::var_os("STAVE_SCALE_COPY") {
        run(&dir, Path::new(&copy), keys, size, blocks);
        return;
    }
    if !dir.exists() {
        std::fs::create_dir_all(stores_dir()).expect("stores dir");
        build(&dir, keys);
    }
    // The checkpoint is taken here, so the measured process opens only the copy.
    let work = tempfile::tempdir().expect("tempdir");
    let copy = work.path().join("chain");
    {
        let store = ChainStore::open(&dir).expect("open kept store");
        rocksdb::checkpoint::Checkpoint::new(store.db())
            .and_then(|c| c.create_checkpoint(&copy))
            .expect("checkpoint");
    }
    println!("| keys | disk MiB | txs/block | blocks | tx/s | FinalizeBlock ms median / max | Commit ms median / max | RSS MiB at the end | peak RSS MiB | block cache / memtables / table readers MiB |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    // The measured run in its own process, so its RSS is not the build's.
    let status = std::process::Command::new(std::env::current_exe().expect("exe"))
        .args([keys.to_string(), size.to_string(), blocks.to_string()])
        .env("STAVE_SCALE_COPY", &copy)
        .status()
        .expect("run child");
    assert!(status.success(), "measured run failed");
}
