//! End-to-end on the real 4-validator localnet (real `stave` and `cometbft`
//! binaries, gRPC over 127.0.0.1), on a WAV uploaded through the pipeline
//! (`stave content upload`, 3 replicas that also hold the DEK), published,
//! with a DIRECT_GRANT entitlement for a consumer in GB:
//! - `stave content fetch` in GB gets the key from a holder and the blob
//!   from the replicas, and writes the FLAC whose cid is on chain;
//! - the same consumer declaring DE is refused (ACCESS_DENIED);
//! - a request sent to the non-holder is refused (NOT_A_HOLDER, naming the
//!   holders), a replayed one (ACCESS_REPLAYED), a forged one
//!   (ACCESS_SIGNATURE), one with a low-order X25519 key (BAD_X25519_KEY)
//!   and a range outside the blob (RANGE_INVALID): nothing delivered;
//! - the delivery is recorded on chain by the holder's recorder: the grant
//!   shows in `GrantsByKey` on every node;
//! - once PUBLIC, a stranger with no entitlement fetches it, and the blob
//!   downloads with no request at all;
//! - after a confirmed takedown, the consumer and the stranger are refused
//!   (TAKEDOWN_ACTIVE);
//! - a replica leaves the validator set: EndBlock names the one ACTIVE
//!   validator outside the sets in its place, which fetches the blob and
//!   its DEK from peers and confirms on chain; within a bounded time the
//!   sets hold 3 ACTIVE validators again, each holding the hash-verified
//!   blob, and nothing is listed under-replicated;
//! - with node 0 stopped, the uploader recovers the content through the
//!   chain's recovery copy and the other replicas.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 27000.

mod common;

use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig};
use common::rights::{one_grant_by_key, operator, publish_single, set_key, submit};
use common::upload::{admit_group, write_wav};
use ed25519_dalek::SigningKey;
use serde_json::Value;
use sha2::{Digest, Sha256};
use stave::client::content::{self as cc, Consumer, Peer};
use stave::keyfile;
use stave::proto::content as cpb;
use stave::proto::rights as pb;
use stave::tx::{Action, Code};

const WAIT: Duration = Duration::from_secs(120);
const GROUP: &str = "e2e-access";

fn hex_field(net: &Localnet, j: &Value, f: &str) -> Vec<u8> {
    j[f].as_str()
        .and_then(|s| hex::decode(s).ok())
        .unwrap_or_else(|| net.fail(&format!("no hex {f} in {j}")))
}

/// `stave content fetch|access …` as the keyring's `from`, declaring
/// `territory`; the command's output.
fn consumer_cmd(
    net: &Localnet,
    cmd: &str,
    cid: &[u8],
    from: &str,
    dir: &std::path::Path,
    territory: &str,
    out: Option<&std::path::Path>,
) -> std::process::Output {
    let (cid, keyring) = (hex::encode(cid), dir.to_str().expect("utf-8").to_string());
    let x = dir.join(format!("{from}.x25519"));
    let node = net.grpc_url(1);
    let mut args = vec![
        "--output",
        "json",
        "content",
        cmd,
        &cid,
        "--from",
        from,
        "--x25519",
        x.to_str().expect("utf-8"),
        "--territory",
        territory,
        "--keyring-dir",
        &keyring,
        "--node",
        &node,
    ];
    let out_s;
    if let Some(o) = out {
        out_s = o.to_str().expect("utf-8").to_string();
        args.extend(["--out", &out_s]);
    }
    net.stave_cmd(&args)
}

/// Expects `out` to have failed with `code` in its message.
fn refused_with(net: &Localnet, what: &str, out: &std::process::Output, code: Code) {
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!("code {} {}", code.value(), code.name());
    if out.status.success() || !err.contains(&want) {
        net.fail(&format!("{what}: want {want}, got {:?}: {err}", out.status));
    }
}

fn digest(cid: &[u8]) -> Vec<u8> {
    cid[4..].to_vec()
}

async fn grant_everywhere(net: &Localnet, cid: &[u8], consumer: &[u8]) -> pb::Grant {
    let mut last = None;
    for i in 0..net.nodes {
        let g = one_grant_by_key(net, i, consumer).await;
        assert_eq!(g.cid, cid, "node{i}");
        assert_eq!(g.territory, "GB", "node{i}");
        assert!(g.count >= 1, "node{i}: {g:?}");
        last = Some(g);
    }
    last.expect("4 nodes")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_licensed_consumer_gets_the_key_and_the_file_and_every_delivery_is_on_chain() {
    let Some(bins) = binaries("e2e_access_and_delivery") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 27000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let dir = tempfile::tempdir().expect("keyring dir");
    let keyring = dir.path().to_str().expect("utf-8").to_string();
    let uploader = keyfile::create_ed25519(&dir.path().join("label.json")).expect("key");
    let fan = keyfile::create_ed25519(&dir.path().join("fan.json")).expect("key");
    keyfile::create_ed25519(&dir.path().join("stranger.json")).expect("key");
    let authority = admit_group(&net, GROUP, &uploader).await;
    let wav = dir.path().join("track.wav");
    write_wav(&wav, 4);

    let url0 = net.grpc_url(0);
    let out = net.stave_cmd(&[
        "--output",
        "json",
        "content",
        "upload",
        wav.to_str().expect("utf-8"),
        "--from",
        "label",
        "--keyring-dir",
        &keyring,
        "--node",
        &url0,
        "--copies",
        "3",
        "--group",
        GROUP,
    ]);
    net.expect_success("stave content upload", &out);
    let j = net.json_of("stave content upload", &out);
    let (cid, enc_cid) = (
        hex_field(&net, &j, "flac_cid"),
        hex_field(&net, &j, "encrypted_cid"),
    );
    // node 1 may be a block behind node 0, which registered it
    let upload = net
        .wait_for("node1 to have the upload", WAIT, || async {
            let mut c1 = net.client(1).await;
            cc::upload_of(&mut c1, &cid)
                .await
                .map_err(|e| e.to_string())
        })
        .await;
    assert_eq!(upload.dek_holder_set.len(), 3);

    let publish = publish_single(&cid);
    submit(&net, 1, &uploader, vec![publish], "PublishRelease").await;
    let grant = Action::GrantEntitlement(stave::keyspaces::entitlements::GrantEntitlement {
        cid: cid.clone(),
        pubkey: set_key(&fan),
        role: pb::Role::Consumer,
        scope: Some(pb::Scope {
            territories: vec!["GB".into()],
            ..Default::default()
        }),
    });
    submit(
        &net,
        2,
        &uploader,
        vec![grant],
        "GrantEntitlement CONSUMER in GB",
    )
    .await;

    // the licensed consumer, in GB: key, file, both cids
    let flac = dir.path().join("fan.flac");
    let out = consumer_cmd(&net, "fetch", &cid, "fan", dir.path(), "GB", Some(&flac));
    net.expect_success("stave content fetch (GB)", &out);
    let f = net.json_of("stave content fetch", &out);
    assert_eq!(f["verified"], true, "{f}");
    let bytes = std::fs::read(&flac).expect("the FLAC");
    assert_eq!(
        Sha256::digest(&bytes).to_vec(),
        digest(&cid),
        "the file flac_cid names"
    );
    assert_eq!(&bytes[..4], b"fLaC");
    assert_eq!(f["bytes"].as_u64(), Some(bytes.len() as u64));

    // the same consumer declaring DE
    let out = consumer_cmd(&net, "access", &cid, "fan", dir.path(), "DE", None);
    refused_with(&net, "access from DE", &out, Code::AccessDenied);

    refusals(&net, &cid, &upload, &fan, dir.path()).await;
    let g = grant_everywhere(&net, &cid, &set_key(&fan)).await;
    assert!(upload.dek_holder_set.contains(&g.validator_pubkey), "{g:?}");

    public(&net, &uploader, &cid, &upload, dir.path()).await;
    takedown(&net, &authority, &cid, dir.path()).await;
    churn(&net, &cid).await;

    // node 0 (the processing validator) stopped: the uploader recovers
    net.stop(0);
    let out_path = dir.path().join("recovered.flac");
    let out = net.stave_cmd(&[
        "--output",
        "json",
        "content",
        "recover",
        &hex::encode(&cid),
        "--recovery-key",
        dir.path().join("label.json").to_str().expect("utf-8"),
        "--territory",
        "GB",
        "--out",
        out_path.to_str().expect("utf-8"),
        "--node",
        &net.grpc_url(1),
    ]);
    net.expect_success("stave content recover (node 0 stopped)", &out);
    let rec = std::fs::read(&out_path).expect("recovered");
    assert_eq!(rec, bytes, "the uploader recovers the same FLAC");
    assert_eq!(enc_cid, upload.encrypted_cid);
    net.restart(0);
}

/// Requests the node refuses, each with its code, none delivering.
async fn refusals(
    net: &Localnet,
    cid: &[u8],
    upload: &pb::Upload,
    fan: &SigningKey,
    dir: &std::path::Path,
) {
    let me = Consumer {
        key: fan.clone(),
        x25519: keyfile::load_x25519(&dir.join("fan.x25519")).expect("x25519"),
        use_type: 0,
    };
    let holders = cc::peers(&mut net.client(1).await, &upload.dek_holder_set)
        .await
        .expect("holders");
    let ops: Vec<[u8; 32]> = (0..net.nodes)
        .map(|i| operator(net, i).verifying_key().to_bytes())
        .collect();
    let outsider = ops
        .iter()
        .position(|k| !upload.dek_holder_set.iter().any(|h| h.as_slice() == k))
        .expect("one validator holds no DEK");
    let at = |i: usize| Peer::unrotated(ops[i], net.grpc_url(i));
    let code = |r: Result<cc::Key, tonic::Status>| match r {
        Ok(_) => net.fail("delivered where it must refuse"),
        Err(s) => (stave::access::code_of(&s), s.message().to_string()),
    };
    let req = |to: [u8; 32]| me.request(&net.chain_id, cid, Some(to), "GB", &[]);
    let (c, msg) = code(cc::request_access(&at(outsider), &me, req(ops[outsider])).await);
    assert_eq!(c, Some(Code::NotAHolder), "{msg}");
    for h in &upload.dek_holder_set {
        assert!(
            msg.contains(&hex::encode(h)),
            "the holders are listed: {msg}"
        );
    }
    // signed for one holder, sent to another
    let h0 = &holders[0];
    let h1 = &holders[1];
    let (c, _) = code(cc::request_access(h1, &me, req(h0.key)).await);
    assert_eq!(c, Some(Code::AccessWrongTarget));
    // replayed
    let once = req(h0.key);
    cc::request_access(h0, &me, once.clone())
        .await
        .expect("first answer");
    let (c, _) = code(cc::request_access(h0, &me, once).await);
    assert_eq!(c, Some(Code::AccessReplayed));
    // forged: another key's signature over the fan's request
    let mut forged = req(h0.key);
    forged.signature = stave::access::sign_request(
        &SigningKey::from_bytes(&[7; 32]),
        forged.request.clone().expect("request"),
    )
    .signature;
    let (c, _) = code(cc::request_access(h0, &me, forged).await);
    assert_eq!(c, Some(Code::AccessSignature));
    // a low-order X25519 key, signed
    let mut r = req(h0.key).request.expect("request");
    r.consumer_x25519 = vec![0; 32];
    let (c, _) = code(cc::request_access(h0, &me, stave::access::sign_request(fan, r)).await);
    assert_eq!(c, Some(Code::BadX25519Key));
    // a range outside the blob
    let mut client = stave::client::StaveClient::connect(&h0.endpoint)
        .await
        .expect("connect");
    let s = client
        .content
        .download(cpb::DownloadRequest {
            access: Some(me.request(&net.chain_id, cid, None, "GB", &[])),
            cid: upload.encrypted_cid.clone(),
            offset: upload.encrypted_size,
            length: 0,
        })
        .await
        .expect_err("outside the blob");
    assert_eq!(
        stave::access::code_of(&s),
        Some(Code::RangeInvalid),
        "{s:?}"
    );
}

/// PUBLIC: a stranger fetches with no entitlement; the blob downloads with
/// no request.
async fn public(
    net: &Localnet,
    uploader: &SigningKey,
    cid: &[u8],
    upload: &pb::Upload,
    dir: &std::path::Path,
) {
    let set = Action::SetPolicy(stave::keyspaces::policies::SetPolicy {
        cid: cid.to_vec(),
        policy_type: pb::PolicyType::Public,
        casbin_model_id: String::new(),
        script_cid: Vec::new(),
    });
    submit(net, 1, uploader, vec![set], "SetPolicy PUBLIC").await;
    let flac = dir.join("stranger.flac");
    let out = consumer_cmd(net, "fetch", cid, "stranger", dir, "FR", Some(&flac));
    net.expect_success("stave content fetch (PUBLIC, no entitlement)", &out);
    let bytes = std::fs::read(&flac).expect("FLAC");
    assert_eq!(Sha256::digest(&bytes).to_vec(), digest(cid));
    // no request at all, from a replica: the ciphertext, which hashes to
    // encrypted_cid
    let replicas = cc::peers(&mut net.client(1).await, &upload.replication_set)
        .await
        .expect("replicas");
    let mut c = stave::client::StaveClient::connect(&replicas[0].endpoint)
        .await
        .expect("connect");
    let mut s = c
        .content
        .download(cpb::DownloadRequest {
            access: None,
            cid: upload.encrypted_cid.clone(),
            offset: 0,
            length: 0,
        })
        .await
        .expect("an unsigned PUBLIC download")
        .into_inner();
    let mut h = Sha256::new();
    while let Some(m) = s.message().await.expect("chunk") {
        h.update(&m.data);
    }
    assert_eq!(h.finalize().to_vec(), digest(&upload.encrypted_cid));
}

/// A confirmed takedown: the consumer and the stranger are refused.
async fn takedown(net: &Localnet, authority: &SigningKey, cid: &[u8], dir: &std::path::Path) {
    use stave::keyspaces::takedowns::{TakedownRequest, TakedownResolve};
    let req = Action::TakedownRequest(TakedownRequest {
        cid: cid.to_vec(),
        reason: "infringes catalogue #12".into(),
        evidence_hash: vec![0xab; 32],
    });
    submit(net, 3, authority, vec![req], "TakedownRequest").await;
    for i in 0..3 {
        let vote = Action::TakedownResolve(TakedownResolve {
            cid: cid.to_vec(),
            confirm: true,
        });
        let what = format!("TakedownResolve confirm by validator {i}");
        submit(net, i, &operator(net, i), vec![vote], &what).await;
    }
    for who in ["fan", "stranger"] {
        let out = consumer_cmd(net, "access", cid, who, dir, "GB", None);
        refused_with(
            net,
            &format!("{who} after the takedown"),
            &out,
            Code::TakedownActive,
        );
    }
}

/// A replica other than node 0 leaves; the outsider takes its place.
async fn churn(net: &Localnet, cid: &[u8]) {
    use stave::keyspaces::validators::LeaveValidator;
    let ops: Vec<Vec<u8>> = (0..net.nodes).map(|i| set_key(&operator(net, i))).collect();
    let before = cc::upload_of(&mut net.client(0).await, cid)
        .await
        .expect("upload");
    let leaver = (1..net.nodes)
        .find(|i| before.replication_set.contains(&ops[*i]))
        .expect("a replica besides node 0");
    let outsider = (0..net.nodes)
        .find(|i| !before.replication_set.contains(&ops[*i]))
        .expect("one validator outside the set");
    let leave = vec![Action::LeaveValidator(LeaveValidator)];
    submit(net, leaver, &operator(net, leaver), leave, "LeaveValidator").await;
    let after = net
        .wait_for(
            "the sets to be whole again without the leaver",
            WAIT,
            || async {
                let u = cc::upload_of(&mut net.client(0).await, cid)
                    .await
                    .map_err(|e| e.to_string())?;
                let whole = u.handover.is_none()
                    && u.replication_set.len() == 3
                    && u.replication_set.contains(&ops[outsider])
                    && !u.replication_set.contains(&ops[leaver])
                    && !u.dek_holder_set.contains(&ops[leaver]);
                if whole {
                    Ok(u)
                } else {
                    Err(format!(
                        "sets {:?}, handover {:?}",
                        u.replication_set.len(),
                        u.handover
                    ))
                }
            },
        )
        .await;
    assert!(after.dek_holder_set.contains(&ops[outsider]));
    let mut c = net.client(0).await;
    for member in &after.replication_set {
        let i = ops
            .iter()
            .position(|o| o == member)
            .expect("a localnet validator");
        let v = c
            .governance
            .validator(stave::proto::governance::ValidatorRequest {
                operator_key: member.clone(),
                ..Default::default()
            })
            .await
            .expect("Validator")
            .into_inner();
        assert_eq!(
            v.validator.map(|v| v.status),
            Some("ACTIVE".into()),
            "node{i}"
        );
        let blob = net
            .stave_home(i)
            .join("content")
            .join(hex::encode(&after.encrypted_cid));
        let bytes = std::fs::read(&blob).unwrap_or_else(|e| net.fail(&format!("node{i}: {e}")));
        assert_eq!(
            Sha256::digest(&bytes).to_vec(),
            digest(&after.encrypted_cid),
            "node{i}"
        );
    }
    for i in 0..net.nodes {
        net.wait_for(
            &format!("node{i}: nothing under-replicated"),
            WAIT,
            || async move {
                let r = net
                    .client(i)
                    .await
                    .rights
                    .under_replicated(pb::PageRequest::default())
                    .await
                    .map_err(|e| e.to_string())?
                    .into_inner();
                match r.uploads.as_slice() {
                    [] => Ok(()),
                    some => Err(format!("{some:?}")),
                }
            },
        )
        .await;
    }
}
