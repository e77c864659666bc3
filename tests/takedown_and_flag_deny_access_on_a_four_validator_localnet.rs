//! End-to-end on the real 4-validator localnet (real `stave` and `cometbft`
//! binaries, gRPC over 127.0.0.1): a publisher group is elected (3 of 4
//! validators approve); its member uploads and publishes a cid in the group
//! and grants a CONSUMER; then, on every node:
//! - the group's takedown authority flags the cid in DE: `CheckAccess`
//!   denies in DE (ACCESS_DENIED, the flag's reason) and still allows in GB;
//! - the authority requests a takedown: access is denied everywhere
//!   (TAKEDOWN_ACTIVE, PENDING);
//! - the owner files a counter-notice; 3 of 4 validators vote to confirm:
//!   the policy is TAKEN_DOWN and access stays denied (TAKEDOWN_ACTIVE,
//!   TAKEN_DOWN), for the owner too;
//! - `stave query groups takedown|flags|group` read the records back;
//! - a second cid of the group, taken down and then dismissed by 2 of 4
//!   votes, is open again; these steps (flag, member, request, votes) go
//!   through `stave tx flag|group|takedown`, signed from a keyring or a
//!   validator's home;
//! - all nodes end with identical app hashes.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 19000.

mod common;

use common::localnet::{binaries, Localnet, LocalnetConfig};
use common::rights::{access_until, manifest, operator, publish_single, set_key, submit, WAIT};
use ed25519_dalek::SigningKey;
use stave::keyspaces::entitlements::GrantEntitlement;
use stave::keyspaces::groups::{ApplyGroup, VoteGroup};
use stave::keyspaces::takedowns::{CounterNotice, SetFlag, TakedownRequest, TakedownResolve};
use stave::keyspaces::uploads::sign_manifest;
use stave::proto::governance as gpb;
use stave::proto::rights as pb;
use stave::tx::{Action, Code};

const CID: &[u8] = &stave::media::cid::fixture_cid(b"bafk-e2e-takedown");
const CID2: &[u8] = &stave::media::cid::fixture_cid(b"bafk-e2e-dismissed");
const GROUP: &str = "e2e-label";

fn key() -> SigningKey {
    SigningKey::generate(&mut rand::rngs::OsRng)
}

/// Registers, publishes and opens `cid` to `consumer` everywhere.
async fn release(
    net: &Localnet,
    ops: &[SigningKey],
    uploader: &SigningKey,
    cid: &[u8],
    consumer: &[u8],
) {
    let uc = sign_manifest(uploader, manifest(net, ops, cid, GROUP));
    let upload = Action::UploadComplete(uc.try_into().expect("valid UploadComplete"));
    submit(net, 0, &ops[0], vec![upload], "UploadComplete in the group").await;
    let publish = publish_single(cid);
    let grant = Action::GrantEntitlement(GrantEntitlement {
        cid: cid.to_vec(),
        pubkey: consumer.to_vec(),
        role: pb::Role::Consumer,
        scope: None,
    });
    submit(
        net,
        1,
        uploader,
        vec![publish, grant],
        "PublishRelease + CONSUMER grant",
    )
    .await;
}

/// Every node denies `who` on `cid` from `territory` with `code`, and the
/// reason contains `why`.
async fn denied_everywhere(
    net: &Localnet,
    cid: &[u8],
    who: &[u8],
    territory: &str,
    code: Code,
    why: &str,
) {
    for i in 0..net.nodes {
        let r = access_until(net, i, cid, who, territory, false).await;
        assert_eq!(r.code, code.value(), "node{i}: {r:?}");
        assert!(r.reason.contains(why), "node{i}: {r:?}");
    }
}

/// Every node denies `who` on `cid` in GB with TAKEDOWN_ACTIVE, naming `state`.
async fn under_takedown(net: &Localnet, cid: &[u8], who: &[u8], state: &str) {
    denied_everywhere(net, cid, who, "GB", Code::TakedownActive, state).await;
}

/// `voters` (validator operator keys, node i for key i) vote to confirm or
/// dismiss the takedown of `cid`, one tx each through their own node.
async fn vote(net: &Localnet, voters: &[SigningKey], cid: &[u8], confirm: bool) {
    for (i, op) in voters.iter().enumerate() {
        let what = format!("TakedownResolve confirm={confirm} by validator {i}");
        submit(net, i, op, vec![resolve(cid, confirm)], &what).await;
    }
}

async fn allowed_everywhere(net: &Localnet, cid: &[u8], who: &[u8], territory: &str) {
    for i in 0..net.nodes {
        access_until(net, i, cid, who, territory, true).await;
    }
}

async fn policy_type(net: &Localnet, node: usize, cid: &[u8]) -> Option<pb::PolicyType> {
    let mut c = net.client(node).await;
    let r = c
        .rights
        .get_policy(pb::CidRequest {
            cid: cid.to_vec(),
            ..Default::default()
        })
        .await
        .expect("GetPolicy")
        .into_inner();
    r.policy
        .map(|p| pb::PolicyType::try_from(p.r#type).expect("known type"))
}

fn takedown(cid: &[u8]) -> Action {
    Action::TakedownRequest(TakedownRequest {
        cid: cid.to_vec(),
        reason: "infringes catalogue #12".into(),
        evidence_hash: vec![0xab; 32],
    })
}

fn resolve(cid: &[u8], confirm: bool) -> Action {
    Action::TakedownResolve(TakedownResolve {
        cid: cid.to_vec(),
        confirm,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn takedown_and_flag_deny_access_on_a_four_validator_localnet() {
    let Some(bins) = binaries("takedown_and_flag_deny_access_on_a_four_validator_localnet") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 19000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let ops: Vec<SigningKey> = (0..net.nodes).map(|i| operator(&net, i)).collect();
    // the authority's key lives in a keyring, so the CLI can sign with it
    let keyring = tempfile::tempdir().expect("keyring dir");
    let keyring_dir = keyring.path().to_str().expect("utf-8 path").to_string();
    let authority = stave::keyfile::create_ed25519(&keyring.path().join("authority.json"))
        .expect("authority key");
    let (uploader, consumer) = (key(), key());
    let consumer_pk = set_key(&consumer);

    // the group: applied for by its member, admitted by 3 of 4 validators
    let apply = Action::ApplyGroup(ApplyGroup {
        group_id: GROUP.into(),
        takedown_authorities: vec![set_key(&authority)],
        members: vec![set_key(&uploader)],
    });
    submit(&net, 0, &uploader, vec![apply], "ApplyGroup").await;
    for (i, op) in ops.iter().enumerate().take(3) {
        let vote = Action::VoteGroup(VoteGroup {
            group_id: GROUP.into(),
            kind: gpb::ElectionKind::Admit as i32,
            approve: true,
        });
        submit(
            &net,
            i,
            op,
            vec![vote],
            &format!("VoteGroup admit by validator {i}"),
        )
        .await;
    }
    release(&net, &ops, &uploader, CID, &consumer_pk).await;
    allowed_everywhere(&net, CID, &consumer_pk, "DE").await;

    // a jurisdiction flag closes DE only
    let flag = Action::SetFlag(SetFlag {
        cid: CID.to_vec(),
        jurisdiction: "DE".into(),
        reason: "court order 7/26".into(),
    });
    submit(
        &net,
        2,
        &authority,
        vec![flag],
        "SetFlag DE by the authority",
    )
    .await;
    denied_everywhere(
        &net,
        CID,
        &consumer_pk,
        "DE",
        Code::AccessDenied,
        "court order 7/26",
    )
    .await;
    allowed_everywhere(&net, CID, &consumer_pk, "GB").await;

    // request → counter-notice → confirmed by vote
    submit(&net, 3, &authority, vec![takedown(CID)], "TakedownRequest").await;
    under_takedown(&net, CID, &consumer_pk, "PENDING").await;
    let counter = Action::CounterNotice(CounterNotice {
        cid: CID.to_vec(),
        content: b"we hold the master rights".to_vec(),
    });
    submit(
        &net,
        0,
        &uploader,
        vec![counter],
        "CounterNotice by the owner",
    )
    .await;
    under_takedown(&net, CID, &consumer_pk, "PENDING").await;
    vote(&net, &ops[..3], CID, true).await;
    under_takedown(&net, CID, &consumer_pk, "TAKEN_DOWN").await;
    under_takedown(&net, CID, &set_key(&uploader), "TAKEN_DOWN").await;
    for i in 0..net.nodes {
        assert_eq!(
            policy_type(&net, i, CID).await,
            Some(pb::PolicyType::TakenDown),
            "node{i}"
        );
    }

    // the CLI reads the same records through another node's gRPC
    let url = net.grpc_url(3);
    let cid_hex = hex::encode(CID);
    let cli = |what: &str, args: &[&str]| {
        let mut full = vec!["--output", "json", "query", "groups"];
        full.extend_from_slice(args);
        full.extend_from_slice(&["--node", &url]);
        let out = net.stave_cmd(&full);
        net.expect_success(what, &out);
        net.json_of(what, &out)
    };
    let t = cli("query groups takedown", &["takedown", &cid_hex]);
    assert_eq!(t["takedown"]["status"], "CONFIRMED", "{t}");
    assert_eq!(
        t["takedown"]["counter_notice_by"],
        hex::encode(set_key(&uploader)),
        "{t}"
    );
    let f = cli("query groups flags", &["flags", &cid_hex]);
    assert_eq!(f["flags"][0]["jurisdiction"], "DE", "{f}");
    assert_eq!(f["flags"][0]["reason"], "court order 7/26", "{f}");
    let g = cli("query groups group", &["group", GROUP]);
    assert_eq!(g["group"]["status"], "ACTIVE", "{g}");

    // the same actions through `stave tx`: the authority (keyring) adds a
    // member and flags; a dismissed takedown (2 of 4 against: over 1/3)
    // reopens access, the votes signed with the validators' homes
    release(&net, &ops, &uploader, CID2, &consumer_pk).await;
    let cid2_hex = hex::encode(CID2);
    let consumer_hex = hex::encode(&consumer_pk);
    let tx = |what: &str, node: usize, args: &[&str]| {
        let url = net.grpc_url(node);
        let mut full = vec!["--output", "json", "tx"];
        full.extend_from_slice(args);
        full.extend_from_slice(&["--node", &url]);
        let out = net.stave_cmd(&full);
        net.expect_success(what, &out);
        let j = net.json_of(what, &out);
        assert_eq!(
            (j["code"].as_u64(), j["committed"].as_bool()),
            (Some(0), Some(true)),
            "{what}: {j}"
        );
        j["height"]
            .as_u64()
            .unwrap_or_else(|| net.fail(&format!("{what}: no height: {j}")))
    };
    let by_authority = ["--from", "authority", "--keyring-dir", &keyring_dir];
    let member = [
        &["group", "member", GROUP, &consumer_hex][..],
        &by_authority[..],
    ]
    .concat();
    let height = tx("tx group member", 1, &member);
    // committed on node 1; node 3, which the CLI reads, may be a block behind
    net.wait_stave_height(3, height, WAIT).await;
    let g = cli("query groups group", &["group", GROUP]);
    assert_eq!(g["group"]["members"][1], consumer_hex, "{g}");
    let flag = [
        &["flag", "set", &cid2_hex, "FR", "--reason", "cli order"][..],
        &by_authority[..],
    ]
    .concat();
    // the authority's next tx goes through node 2: a node that has neither
    // committed the member tx nor admitted it would ask for its nonce again
    net.wait_stave_height(2, height, WAIT).await;
    tx("tx flag set", 2, &flag);
    denied_everywhere(
        &net,
        CID2,
        &consumer_pk,
        "FR",
        Code::AccessDenied,
        "cli order",
    )
    .await;
    let evidence = hex::encode([0xcd; 32]);
    let request = [
        &[
            "takedown",
            "request",
            &cid2_hex,
            "--reason",
            "cli claim",
            "--evidence",
            &evidence,
        ][..],
        &by_authority[..],
    ]
    .concat();
    tx("tx takedown request", 3, &request);
    under_takedown(&net, CID2, &consumer_pk, "PENDING").await;
    let mut last_vote = 0;
    for i in 0..2 {
        // the CLI simulates on node i to size its gas: a node a block behind
        // the previous vote would price this one as not reaching the
        // threshold, which costs less than the resolution it triggers
        net.wait_stave_height(i, last_vote, WAIT).await;
        let home = net.stave_home(i);
        let home = home.to_str().expect("utf-8 home");
        let args = [
            "takedown",
            "resolve",
            &cid2_hex,
            "--dismiss",
            "--home",
            home,
        ];
        last_vote = tx(
            &format!("tx takedown resolve --dismiss by validator {i}"),
            i,
            &args,
        );
    }
    allowed_everywhere(&net, CID2, &consumer_pk, "GB").await;
    under_takedown(&net, CID, &consumer_pk, "TAKEN_DOWN").await;

    let h = net.assert_app_hashes_agree(WAIT).await;
    eprintln!("takedown flow: all nodes agree on the app hash at height {h}");
}
