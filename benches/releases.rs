//! Release benchmarks.
//!
//! - `import <reps>`: the ERN 4.3 importer (`stave::ddex::xml::import`) on
//!   the label-shaped 10-track fixture (`tests/fixtures/ddex/album.xml`) and
//!   on a 200-track album with 40 per-territory deals (exported from code),
//!   `reps` times each; MB/s of XML.
//! - `finalize <tracks> <albums>`: FinalizeBlock + Commit through the app of
//!   a block holding one `PublishRelease` of a `tracks`-track album with 9
//!   deals (a worldwide stream deal and 8 per-territory download deals), for
//!   `albums` albums on one store; ms per block (median and max) and gas.
//!
//! Run: `cargo bench --bench releases` (both: 200 reps, 20 tracks, 20
//! albums) or `cargo bench --bench releases -- finalize 20 50`.

use std::time::Instant;

use ed25519_dalek::SigningKey;
use stave::app::{App, AppConfig};
use stave::ddex::{build, territory, xml};
use stave::keyspaces::releases::PublishRelease;
use stave::proto::ddex as dpb;
use stave::store::ChainStore;
use stave::tx::{
    build::{sign_tx, sign_tx_with_gas},
    Action,
};

#[path = "support/upload.rs"]
mod upload;
use upload::upload_complete;

const CHAIN: &str = "bench";
/// 2027-01-15, unix ns: block times after any message's creation.
const T0: i64 = 1_800_000_000_000_000_000;

fn cid(album: usize, track: usize) -> Vec<u8> {
    stave::media::cid::raw_cid(format!("bafk-release-{album:04}-{track:03}").as_bytes()).to_vec()
}

/// `build::album` plus 8 download deals, each in its own 25 territories.
fn album(album_no: usize, tracks: usize) -> dpb::NewReleaseMessage {
    let cids: Vec<Vec<u8>> = (0..tracks).map(|t| cid(album_no, t)).collect();
    let mut m = build::album_created(&cids, &cids[0], "2026-01-01T00:00:00Z");
    m.release_deal[0].deal[0]
        .deal_terms
        .as_mut()
        .expect("terms")
        .use_type = vec!["Stream".into()];
    for d in 0..8 {
        let codes = territory::CODES
            .iter()
            .skip(d * 25)
            .take(25)
            .map(|c| c.to_string())
            .collect();
        m.release_deal[0].deal.push(dpb::Deal {
            deal_terms: Some(dpb::DealTerms {
                territory_code: codes,
                commercial_model_type: vec!["PayAsYouGoModel".into()],
                use_type: vec!["PermanentDownload".into()],
                ..Default::default()
            }),
        });
    }
    m
}

fn import(reps: usize) {
    let fixture = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/ddex/album.xml"
    ))
    .expect("album.xml");
    let mut big = album(0, 200);
    for _ in 0..4 {
        let more = big.release_deal[0].deal.clone();
        big.release_deal.push(dpb::ReleaseDeal {
            deal_release_reference: vec!["R0".into()],
            deal: more
                .into_iter()
                .map(|mut d| {
                    if let Some(t) = d.deal_terms.as_mut() {
                        t.commercial_model_type = vec![format!("Model{}", t.territory_code.len())];
                    }
                    d
                })
                .collect(),
        });
    }
    let big = xml::export(&big).into_bytes();
    for (name, bytes) in [
        ("album.xml (10 tracks)", &fixture),
        ("200 tracks, 45 deals", &big),
    ] {
        let opts = xml::ImportOptions::default();
        let t = Instant::now();
        for _ in 0..reps {
            xml::import(bytes, &opts).expect("imports");
        }
        let s = t.elapsed().as_secs_f64();
        let mb = (bytes.len() * reps) as f64 / 1e6;
        println!(
            "import {name}: {} bytes, {reps} reps, {:.3} ms each, {:.1} MB/s",
            bytes.len(),
            s * 1e3 / reps as f64,
            mb / s
        );
    }
}

/// CometBFT's validators at genesis: (consensus key, power).
type Comet = Vec<(Vec<u8>, u64)>;

fn genesis() -> (Vec<u8>, Comet, SigningKey) {
    let op = SigningKey::from_bytes(&[201; 32]);
    let cons = SigningKey::from_bytes(&[202; 32])
        .verifying_key()
        .to_bytes();
    let x = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([203; 32]));
    let g = serde_json::json!({
        "params": {"gas": {"max_block_gas": 10_000_000_000_000u64},
            "storage": {"pow_base": 1, "pow_retention": 0, "unsponsored_block_bytes": 1u64 << 40}},
        "validators": [{
        "operator_key": hex::encode(op.verifying_key().to_bytes()),
        "consensus_key": hex::encode(cons), "x25519_key": hex::encode(x.as_bytes()),
        "address": "127.0.0.1:1", "power": 10}]});
    (
        serde_json::to_vec(&g).expect("json"),
        vec![(cons.to_vec(), 10)],
        op,
    )
}

/// Runs one block; returns (FinalizeBlock ms, Commit ms, gas used).
fn block(app: &mut App, h: &mut u64, txs: &[Vec<u8>]) -> (f64, f64, u64) {
    *h += 1;
    let t = Instant::now();
    let out = app
        .finalize_block(*h, T0 + *h as i64 * 1_000_000_000, txs)
        .expect("finalize");
    let fin = t.elapsed().as_secs_f64() * 1e3;
    if let Some(bad) = out.txs.iter().find(|r| r.code.value() != 0) {
        panic!("a tx failed: {:?} {}", bad.code, bad.log);
    }
    let gas = out.txs.iter().map(|r| r.gas_used).sum();
    let t = Instant::now();
    app.commit().expect("commit");
    (fin, t.elapsed().as_secs_f64() * 1e3, gas)
}

fn finalize(tracks: usize, albums: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = App::load(
        ChainStore::open(dir.path()).expect("open"),
        AppConfig::default(),
    )
    .expect("load");
    let (g, comet, op) = genesis();
    app.init_chain(CHAIN, 0, &g, &comet).expect("genesis");
    let label = SigningKey::from_bytes(&[1; 32]);
    let mut h = 0;
    let mut nonce = 0u64;
    for a in 0..albums {
        let txs: Vec<Vec<u8>> = (0..tracks)
            .map(|t| {
                nonce += 1;
                sign_tx(
                    &op,
                    CHAIN,
                    nonce - 1,
                    vec![upload_complete(CHAIN, &label, &op, cid(a, t))],
                    "",
                )
            })
            .collect();
        block(&mut app, &mut h, &txs);
    }
    let mut runs = Vec::new();
    let mut bytes = 0;
    for a in 0..albums {
        let m = album(a, tracks);
        let publish = Action::PublishRelease(PublishRelease::unsigned(m));
        let tx = sign_tx_with_gas(&label, CHAIN, a as u64, vec![publish], "", 100_000_000);
        bytes = tx.len();
        runs.push(block(&mut app, &mut h, &[tx]));
    }
    let mut fin: Vec<f64> = runs.iter().map(|r| r.0).collect();
    fin.sort_by(f64::total_cmp);
    let mut com: Vec<f64> = runs.iter().map(|r| r.1).collect();
    com.sort_by(f64::total_cmp);
    println!(
        "finalize tracks={tracks} albums={albums} tx_bytes={bytes} gas={} finalize_ms median={:.2} max={:.2} commit_ms median={:.2} max={:.2}",
        runs[0].2,
        fin[fin.len() / 2],
        fin[fin.len() - 1],
        com[com.len() / 2],
        com[com.len() - 1]
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match args.first().map(String::as_str) {
        Some("import") => import(num(1, 200)),
        Some("finalize") => finalize(num(1, 20), num(2, 20)),
        _ => {
            import(200);
            finalize(20, 20);
        }
    }
}
