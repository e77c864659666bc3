//! End-to-end on the real 4-validator localnet (real `stave` and `cometbft`
//! binaries, gRPC over 127.0.0.1): a label's ERN 4.3 album becomes a
//! streamable release whose deals decide access.
//!
//! 1. Three uploads are registered; `stave release import` publishes the
//!    3-track album from `tests/fixtures/ddex/album3.xml.tmpl`.
//! 2. A CONSUMER may stream in FR on every node; a PermanentDownload in FR
//!    is refused with NO_DEAL.
//! 3. A PermanentDownload in GB is refused until the deal's StartDateTime
//!    (set ~20 s after the wall clock, which the localnet's block time
//!    follows), then allowed on every node.
//! 4. The update (`album3_update.xml.tmpl`) withdraws GB: access there is
//!    refused on every node, streaming in FR still works, and the first
//!    version is kept in the history.
//! 5. `stave query release ID --ern` renders XML that imports to the stored
//!    message; the app hashes agree.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 28000.

mod common;

use std::time::{SystemTime, UNIX_EPOCH};

use common::localnet::{binaries, Localnet, LocalnetConfig};
use common::rights::{access_for, manifest, operator, set_key, submit, WAIT};
use ed25519_dalek::SigningKey;
use stave::ddex::time::format_date_time;
use stave::ddex::xml::{self, ImportOptions};
use stave::keyfile;
use stave::keyspaces::entitlements::GrantEntitlement;
use stave::keyspaces::uploads::sign_manifest;
use stave::proto::ddex::UseType;
use stave::proto::rights as pb;
use stave::tx::{Action, Code};

const TEMPLATE: &str = include_str!("fixtures/ddex/album3.xml.tmpl");
const UPDATE: &str = include_str!("fixtures/ddex/album3_update.xml.tmpl");
const ICPN: &str = "4006381333931";
const STREAM: i32 = UseType::OnDemandStream as i32;
const DOWNLOAD: i32 = UseType::PermanentDownload as i32;

fn cids() -> Vec<Vec<u8>> {
    (1..=3u8)
        .map(|i| {
            stave::media::cid::fixture_cid(&[b"bafk-release-track-", &[b'0' + i][..]].concat())
                .to_vec()
        })
        .collect()
}

fn fill(template: &str, created: &str, gb_start: &str) -> String {
    let c = cids();
    let mut s = template
        .replace("{{ICPN}}", ICPN)
        .replace("{{CREATED}}", created)
        .replace("{{GB_START}}", gb_start)
        .replace("{{COVER}}", &hex::encode([0xc0; 32]));
    for (i, cid) in c.iter().enumerate() {
        s = s
            .replace(&format!("{{{{CID{}}}}}", i + 1), &hex::encode(cid))
            .replace(
                &format!("{{{{ISRC{}}}}}", i + 1),
                &format!("GBSTV260000{}", i + 1),
            );
    }
    s
}

fn import(net: &Localnet, file: &std::path::Path, keyring: &str, node: usize) {
    let url = net.grpc_url(node);
    let out = net.stave_cmd(&[
        "--output",
        "json",
        "release",
        "import",
        file.to_str().expect("utf-8"),
        "--from",
        "label",
        "--keyring-dir",
        keyring,
        "--node",
        &url,
    ]);
    let text = net.expect_success("stave release import", &out);
    eprintln!("release import: {text}");
}

async fn denied(net: &Localnet, who: &[u8], territory: &str, use_type: i32, code: Code) {
    for i in 0..net.nodes {
        let r = access_for(net, i, &cids()[0], who, territory, use_type, false).await;
        assert_eq!(r.code, code.value(), "node{i}: {r:?}");
    }
}

async fn allowed(net: &Localnet, who: &[u8], territory: &str, use_type: i32) {
    for i in 0..net.nodes {
        for cid in cids() {
            access_for(net, i, &cid, who, territory, use_type, true).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn e2e_releases_and_deals() {
    let Some(bins) = binaries("e2e_releases_and_deals") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 28000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let ops: Vec<SigningKey> = (0..net.nodes).map(|i| operator(&net, i)).collect();
    let dir = tempfile::tempdir().expect("keyring dir");
    let keyring = dir.path().to_str().expect("utf-8").to_string();
    let label = keyfile::create_ed25519(&dir.path().join("label.json")).expect("key");
    let fan = SigningKey::generate(&mut rand::rngs::OsRng);
    let fan_pk = set_key(&fan);

    // 1. three uploads, then the album through the CLI
    let uploads: Vec<Action> = cids()
        .iter()
        .map(|c| {
            let uc = sign_manifest(&label, manifest(&net, &ops, c, ""));
            Action::UploadComplete(uc.try_into().expect("valid UploadComplete"))
        })
        .collect();
    submit(&net, 0, &ops[0], uploads, "three UploadCompletes").await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let gb_start = now + 20;
    let album = dir.path().join("album3.xml");
    std::fs::write(
        &album,
        fill(
            TEMPLATE,
            &format_date_time(now - 60),
            &format_date_time(gb_start),
        ),
    )
    .expect("write");
    import(&net, &album, &keyring, 1);
    let grants: Vec<Action> = cids()
        .into_iter()
        .map(|cid| {
            Action::GrantEntitlement(GrantEntitlement {
                cid,
                pubkey: fan_pk.clone(),
                role: pb::Role::Consumer,
                scope: None,
            })
        })
        .collect();
    submit(&net, 2, &label, grants, "CONSUMER on the three tracks").await;

    // 2. stream in FR, no download deal in FR
    allowed(&net, &fan_pk, "FR", STREAM).await;
    denied(&net, &fan_pk, "FR", DOWNLOAD, Code::NoDeal).await;

    // 3. the GB download deal starts at gb_start
    let before = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    assert!(
        before + 2 < gb_start,
        "setup took too long: {before} is within 2 s of the GB start {gb_start}"
    );
    denied(&net, &fan_pk, "GB", DOWNLOAD, Code::NoDeal).await;
    allowed(&net, &fan_pk, "GB", DOWNLOAD).await;
    let after = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    assert!(
        after + 2 >= gb_start,
        "GB opened at {after}, before {gb_start}"
    );

    // 4. the update withdraws GB
    let update = dir.path().join("album3_update.xml");
    std::fs::write(
        &update,
        fill(
            UPDATE,
            &format_date_time(now - 30),
            &format_date_time(gb_start),
        ),
    )
    .expect("write");
    import(&net, &update, &keyring, 3);
    denied(&net, &fan_pk, "GB", DOWNLOAD, Code::NoDeal).await;
    denied(&net, &fan_pk, "GB", STREAM, Code::NoDeal).await;
    allowed(&net, &fan_pk, "FR", STREAM).await;

    // 5. reads: history, by cid, by party, the ERN export
    let id = stave::ddex::ids::gtin14(ICPN).expect("icpn");
    let mut c = net.client(0).await;
    let versions = c
        .rights
        .release_versions(pb::ListVersionsRequest {
            release_id: id.clone(),
            cursor: Vec::new(),
            limit: 0,
        })
        .await
        .expect("versions")
        .into_inner();
    assert_eq!(versions.releases.len(), 1, "the first version is history");
    let by_cid = c
        .rights
        .releases_by_cid(pb::ListByCidRequest {
            cid: cids()[2].clone(),
            cursor: Vec::new(),
            limit: 0,
            ..Default::default()
        })
        .await
        .expect("by cid")
        .into_inner();
    assert_eq!(by_cid.releases.len(), 1);
    let stored = by_cid.releases[0].clone();
    assert_eq!(
        (stored.release_id.as_str(), stored.version),
        (id.as_str(), 1)
    );
    let tracks: Vec<(u32, u32)> = stored.tracks.iter().map(|t| (t.disc, t.track)).collect();
    assert_eq!(tracks, vec![(1, 1), (1, 2), (1, 3)]);
    let out = net.stave_cmd(&[
        "query",
        "release",
        ICPN,
        "--ern",
        "--node",
        &net.grpc_url(2),
    ]);
    let exported = net.expect_success("stave query release --ern", &out);
    let again = xml::import(exported.as_bytes(), &ImportOptions::default()).expect("re-import");
    assert_eq!(Some(&again.message), stored.message.as_ref());
    assert_eq!(xml::export(&again.message), exported);

    // Verified through node 1: the record is proven against a header the
    // light client verified from a root at node 0, and its publisher
    // signature (the label's, over chain id, cids and sha256 of the
    // message) holds; so does each record of the cid's listing.
    let trust = net.scratch.join("trust.json");
    let trust = trust.to_str().expect("utf-8");
    let (rpc0, rpc1, grpc1) = (net.rpc_url(0), net.rpc_url(1), net.grpc_url(1));
    let out = net.stave_cmd(&["light", "init", "--rpc", &rpc0, "--trust-file", trust]);
    net.expect_success("stave light init", &out);
    let args = [
        "--rpc",
        rpc1.as_str(),
        "--trust-file",
        trust,
        "--node",
        grpc1.as_str(),
        "--verify",
    ];
    let mut release = vec!["--output", "json", "query", "release", ICPN];
    release.extend_from_slice(&args);
    let out = net.stave_cmd(&release);
    net.expect_success("stave query release --verify", &out);
    let v = net.json_of("stave query release --verify", &out);
    assert_eq!(v["verified"]["chain_id"], net.chain_id.as_str(), "{v}");
    assert_eq!(
        v["release"]["publisher_signature"].as_str().map(str::len),
        Some(128),
        "{v}"
    );
    let cid = hex::encode(&cids()[0]);
    let mut list = vec![
        "--output",
        "json",
        "query",
        "releases",
        "--cid",
        cid.as_str(),
    ];
    list.extend_from_slice(&args);
    let out = net.stave_cmd(&list);
    net.expect_success("stave query releases --cid --verify", &out);
    let v = net.json_of("stave query releases --cid --verify", &out);
    assert_eq!(v["releases"].as_array().map(Vec::len), Some(1), "{v}");
    assert!(
        v["verified"]["proven_keys"].as_u64().unwrap_or(0) >= 1,
        "{v}"
    );

    let h = net.assert_app_hashes_agree(WAIT).await;
    eprintln!("releases and deals: all nodes agree on the app hash at height {h}");
}
