//! Local-store figures for BENCHMARKS.md:
//! - content encryption and decryption throughput (STREAM over
//!   ChaCha20-Poly1305, one thread, memory to memory);
//! - reconcile decision time for 10,000 assigned cids (content and DEKs):
//!   the pure `plan` on the first round (nothing local) and in steady state,
//!   and a steady-state round that reads 20,000 sync entries from a real
//!   local store first.
//!
//! Run: `cargo run --release --example local_store_bench`

use std::time::Instant;

use stave::crypto::{generate_dek, stream};
use stave::keyspaces::uploads::UploadsWrite;
use stave::local::assignments::{AssignmentSource, ChainAssignments};
use stave::local::reconcile::wanted;
use stave::local::reconcile::{plan, LocalView, Wanted};
use stave::local::sync::SyncExt;
use stave::local::LocalStore;
use stave::proto::rights::Upload;
use stave::store::{ChainStore, MemState, Overlay};

const MIB: usize = 1 << 20;
const CIDS: u32 = 10_000;

fn cid(i: u32) -> Vec<u8> {
    let mut c = vec![0u8; 32];
    c[..4].copy_from_slice(&i.to_be_bytes());
    c
}

fn crypto() {
    let dek = generate_dek();
    let plain = vec![0x5au8; 256 * MIB];
    let mut sealed = Vec::with_capacity(plain.len() + MIB);
    let t = Instant::now();
    stream::encrypt(&dek, &plain[..], &mut sealed).unwrap();
    let enc = t.elapsed().as_secs_f64();
    let mut out = Vec::with_capacity(plain.len());
    let t = Instant::now();
    stream::decrypt(&dek, &sealed[..], &mut out).unwrap();
    let dec = t.elapsed().as_secs_f64();
    assert_eq!(out.len(), plain.len());
    let mb = plain.len() as f64 / 1e6;
    println!("encrypt 256 MiB: {:.3} s = {:.0} MB/s", enc, mb / enc);
    println!("decrypt 256 MiB: {:.3} s = {:.0} MB/s", dec, mb / dec);
}

fn reconcile() {
    let wanted = Wanted {
        content: (0..CIDS).map(|i| (cid(i), 1_000_000)).collect(),
        deks: (0..CIDS).map(cid).collect(),
        dek_after_content: Default::default(),
    };
    let empty = LocalView::default();
    let t = Instant::now();
    let first = plan(&wanted, &empty, 0);
    println!(
        "plan, first round ({} writes, {} fetches): {:.1} ms",
        first.content_writes.len() + first.dek_writes.len(),
        first.fetch.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::open(dir.path()).unwrap();
    let t = Instant::now();
    store
        .put_sync_all(&first.content_writes, &first.dek_writes)
        .unwrap();
    println!(
        "write 20,000 PENDING entries (one synced batch, as the worker does): {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    let local = LocalView {
        content_sync: store.all_content_sync().unwrap(),
        dek_sync: store.all_dek_sync().unwrap(),
        in_flight: first.fetch.iter().cloned().collect(),
        ..Default::default()
    };
    let read = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let steady = plan(&wanted, &local, 0);
    let decide = t.elapsed().as_secs_f64();
    assert!(steady.fetch.is_empty() && steady.content_writes.is_empty());
    println!(
        "steady round: read 20,000 entries {:.1} ms + plan {:.1} ms",
        read * 1e3,
        decide * 1e3
    );
}

/// The chain half of a round: read every upload record from committed
/// state and derive what this validator should hold.
fn chain_read() {
    let me = [7u8; 32];
    let dir = tempfile::tempdir().unwrap();
    let store = ChainStore::open(dir.path()).unwrap();
    let base = MemState::default();
    let mut o = Overlay::new(&base);
    for i in 0..CIDS {
        let mut enc = cid(i);
        enc[31] = 1;
        o.put_upload(&Upload {
            flac_cid: cid(i),
            encrypted_cid: enc,
            encrypted_size: 1_000_000,
            replication_set: vec![me.to_vec(), [8u8; 32].to_vec()],
            dek_holder_set: vec![me.to_vec(), [8u8; 32].to_vec()],
            ..Default::default()
        })
        .unwrap();
    }
    store.commit_genesis("bench", 0, o.into_changes()).unwrap();
    let t = Instant::now();
    let all = ChainAssignments.all(&store.view()).unwrap();
    let w = wanted(&me, &all);
    assert_eq!(w.deks.len(), CIDS as usize);
    println!(
        "chain read: {} upload records -> wanted set: {:.1} ms",
        all.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
}

fn main() {
    crypto();
    reconcile();
    chain_read();
}
