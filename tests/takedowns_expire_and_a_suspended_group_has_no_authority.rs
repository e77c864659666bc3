//! A takedown the validators leave undecided for `election_blocks` is
//! DISMISSED at the end of the block it falls due, and the policy it
//! replaced is restored, so a request nobody votes on never denies content
//! for good. A SUSPENDED group's authority can neither request a takedown,
//! set or clear a flag, nor rotate the authority set; once the validators
//! remove the group, the cid's OWNER may clear the flags it left. ClearFlag
//! with a code that is not ISO 3166-1 gets UNKNOWN_JURISDICTION.

mod inproc;
use inproc::governance_content::*;
use inproc::rights::*;
use stave::keyspaces::groups::RotateTakedownAuthority;
use stave::keyspaces::takedowns::TakedownsRead;
use stave::proto::governance::ElectionKind;
use stave::proto::rights::PolicyType;
use stave::tx::{Action, Code};

const CID: &[u8] = b"bafy-expiry-1";

#[tokio::test(flavor = "multi_thread")]
async fn an_undecided_takedown_expires_dismissed_and_restores_the_policy() {
    let w = World::with_governance(serde_json::json!({ "election_blocks": 4 })).await;
    let mut w = grouped_in(w, CID).await;
    w.send(UPLOADER, vec![policy(CID, PolicyType::Public, "", b"")])
        .await
        .ok();
    w.send(AUTHORITY, vec![takedown(CID)]).await.ok();
    let requested = w.height;
    assert_eq!(policy_type(&w, CID), Some(PolicyType::TakedownPending));
    // one vote, not enough either way
    w.send(VALIDATORS[0], vec![resolve(CID, true)]).await.ok();
    while w.height < requested + 4 {
        assert_eq!(takedown_record(&w, CID).status, 1, "PENDING until due");
        w.send_block(vec![]).await;
    }
    let t = takedown_record(&w, CID);
    assert_eq!((t.status, t.resolved_at), (3, requested + 4), "DISMISSED");
    let e = t.election.unwrap();
    assert_eq!((e.status, e.closed_at), (4, requested + 4), "EXPIRED");
    assert_eq!(policy_type(&w, CID), Some(PolicyType::Public));
    assert_eq!(access_code(&w, CID, STRANGER, "US"), None);
    w.refused(
        VALIDATORS[1],
        vec![resolve(CID, true)],
        Code::ElectionClosed,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decided_takedown_is_not_touched_when_its_old_due_height_passes() {
    let w = World::with_governance(serde_json::json!({ "election_blocks": 4 })).await;
    let mut w = grouped_in(w, CID).await;
    w.send(AUTHORITY, vec![takedown(CID)]).await.ok();
    for v in &VALIDATORS[..3] {
        w.send(*v, vec![resolve(CID, true)]).await.ok();
    }
    let confirmed = takedown_record(&w, CID);
    assert_eq!(confirmed.status, 2);
    for _ in 0..5 {
        w.send_block(vec![]).await;
    }
    assert_eq!(takedown_record(&w, CID), confirmed);
    assert_eq!(policy_type(&w, CID), Some(PolicyType::TakenDown));
}

fn rotate(to: u8) -> Action {
    Action::RotateTakedownAuthority(RotateTakedownAuthority {
        group_id: GROUP.into(),
        takedown_authorities: vec![pk(to).to_vec()],
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suspended_groups_authority_has_no_powers() {
    let mut w = grouped(CID).await;
    w.send(AUTHORITY, vec![set_flag(CID, "DE")]).await.ok();
    // While the group is ACTIVE its flags are its authority's alone.
    w.refused(
        UPLOADER,
        vec![clear_flag(CID, "DE")],
        Code::NotTakedownAuthority,
    )
    .await;
    for v in &VALIDATORS[..3] {
        w.send(*v, vec![vote_group(GROUP, ElectionKind::Suspend, true)])
            .await
            .ok();
    }
    for refused in [
        takedown(CID),
        set_flag(CID, "FR"),
        clear_flag(CID, "DE"),
        rotate(OTHER_AUTHORITY),
    ] {
        w.refused(AUTHORITY, vec![refused], Code::NotTakedownAuthority)
            .await;
    }
    let r = w.send(AUTHORITY, vec![clear_flag(CID, "XX")]).await;
    r.is(Code::UnknownJurisdiction);

    // Review m2: a suspension may be lifted, so the flag stays, and the
    // OWNER may not clear it yet.
    let flag = |w: &World| {
        w.node
            .store
            .committed()
            .flag(&label_cid(CID), "DE")
            .unwrap()
    };
    w.refused(
        UPLOADER,
        vec![clear_flag(CID, "DE")],
        Code::NotTakedownAuthority,
    )
    .await;
    assert!(flag(&w).is_some());
    // Once the validators remove the group its flag would otherwise stay
    // for good: the cid's OWNER may clear it now; a stranger still may not.
    for v in &VALIDATORS[..3] {
        w.send(*v, vec![vote_group(GROUP, ElectionKind::Remove, true)])
            .await
            .ok();
    }
    w.refused(
        STRANGER,
        vec![clear_flag(CID, "DE")],
        Code::NotTakedownAuthority,
    )
    .await;
    assert!(flag(&w).is_some());
    w.send(UPLOADER, vec![clear_flag(CID, "DE")]).await.ok();
    assert_eq!(flag(&w), None);
}

/// Malformed governance actions, all in one block: each tx gets its stable
/// code from FinalizeBlock, and nothing but its nonce (if any) changes.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_governance_actions_get_their_codes_in_finalize_block() {
    use stave::keyspaces::groups::{ApplyGroup, SetGroupMember};
    use stave::keyspaces::takedowns::TakedownRequest;
    let mut w = grouped(CID).await;
    let before = rights_dump(&w.node);
    let bad_key = Action::ApplyGroup(ApplyGroup {
        group_id: "g2".into(),
        takedown_authorities: vec![vec![1; 31]],
        members: vec![],
    });
    let no_authority = Action::ApplyGroup(ApplyGroup {
        group_id: "g3".into(),
        takedown_authorities: vec![],
        members: vec![],
    });
    let bad_member = Action::SetGroupMember(SetGroupMember {
        group_id: GROUP.into(),
        member: vec![],
        add: true,
    });
    let short_evidence = Action::TakedownRequest(TakedownRequest {
        cid: CID.to_vec(),
        reason: "x".into(),
        evidence_hash: vec![1; 31],
    });
    let long_reason = Action::TakedownRequest(TakedownRequest {
        cid: CID.to_vec(),
        reason: "r".repeat(5000),
        evidence_hash: vec![1; 32],
    });
    let empty_cid = set_flag(b"", "DE");
    // Review M2: a key list costs point decompressions to decode, so one
    // action names at most `max_keys_per_action` (32) keys, all valid here.
    let pk = |seed: u8| inproc::key(seed).verifying_key().to_bytes().to_vec();
    let too_many_keys = Action::ApplyGroup(ApplyGroup {
        group_id: "g4".into(),
        takedown_authorities: vec![pk(100)],
        members: (101..133).map(pk).collect(),
    });
    // Review M2: decoding stops once a tx has parsed `max_keys_per_tx`
    // (256) keys: nine ApplyGroups of 30 keys each, every one within its
    // own cap.
    let many_groups: Vec<Action> = (0..9u8)
        .map(|g| {
            Action::ApplyGroup(ApplyGroup {
                group_id: format!("many{g}"),
                takedown_authorities: vec![pk(100 + g)],
                members: (0..29u8).map(pk).collect(),
            })
        })
        .collect();
    let bad_kind = Action::VoteGroup(stave::keyspaces::groups::VoteGroup {
        group_id: GROUP.into(),
        kind: 99,
        approve: true,
    });
    let txs = vec![
        (STRANGER, vec![bad_key]),
        (OWNER2, vec![no_authority]),
        (AUTHORITY, vec![bad_member]),
        (OTHER_AUTHORITY, vec![short_evidence]),
        (UPLOADER, vec![long_reason]),
        (CONSUMER, vec![empty_cid]),
        (VALIDATORS[0], vec![bad_kind]),
        (VALIDATORS[1], vec![too_many_keys]),
        (VALIDATORS[2], many_groups),
    ];
    let codes = w.send_block(txs).await;
    assert_eq!(codes, vec![Code::InvalidArgument.value(); 9]);
    assert_eq!(rights_dump(&w.node), before);
}

/// Governance actions malformed on the wire (lengths the domain types
/// refuse), each in its own tx of one block: a stable code each, and no
/// state change at all (a decode failure consumes no nonce).
#[tokio::test(flavor = "multi_thread")]
async fn governance_actions_malformed_on_the_wire_change_nothing() {
    use ed25519_dalek::Signer;
    use prost::Message;
    use stave::proto::governance as gpb;
    use stave::proto::tx as tpb;
    let mut w = grouped(CID).await;
    let before = inproc::state_dump(&w.node.store);
    let nonces: std::collections::BTreeMap<u8, u64> = [VALIDATORS[0], STRANGER, VALIDATORS[1]]
        .into_iter()
        .map(|s| (s, w.nonce(s)))
        .collect();
    let raw = |seed: u8, kind: tpb::action::Kind| -> Vec<u8> {
        let k = inproc::key(seed);
        let body = tpb::TxBody {
            chain_id: inproc::CHAIN.into(),
            signer: k.verifying_key().to_bytes().to_vec(),
            nonce: w.nonce(seed),
            actions: vec![tpb::Action { kind: Some(kind) }],
            memo: String::new(),
            gas_limit: stave::tx::build::DEFAULT_GAS_LIMIT,
        }
        .encode_to_vec();
        let sig = k.sign(&stave::tx::sign_bytes(&body)).to_bytes().to_vec();
        tpb::Tx {
            body_bytes: body,
            signature: sig,
            pow_nonce: 0,
        }
        .encode_to_vec()
    };
    use tpb::action::Kind;
    let txs = vec![
        raw(
            VALIDATORS[0],
            Kind::VoteValidator(gpb::VoteValidator {
                subject: vec![1; 31],
                kind: gpb::ElectionKind::Admit as i32,
                approve: true,
            }),
        ),
        raw(
            STRANGER,
            Kind::ApplyValidator(gpb::ApplyValidator {
                consensus_key: vec![2; 32],
                consensus_key_signature: vec![3; 63],
                x25519_key: vec![4; 32],
                address: "127.0.0.1:1".into(),
                jurisdictions: vec!["DE".into()],
                identity: String::new(),
                client_endpoint: String::new(),
            }),
        ),
        raw(
            VALIDATORS[1],
            Kind::VoteValidator(gpb::VoteValidator {
                subject: vec![5; 32],
                kind: 77,
                approve: true,
            }),
        ),
    ];
    w.height += 1;
    let (_, r) = w
        .node
        .block(w.height, txs.into_iter().map(Into::into).collect())
        .await;
    let decode = stave::tx::TxError::Decode(String::new()).code().value();
    assert_eq!(r.tx_results.len(), 3);
    for t in &r.tx_results {
        assert_eq!(t.code.value(), decode, "{}", t.log);
        assert!(t.log.contains("action 0"), "{}", t.log);
    }
    assert!(r.validator_updates.is_empty());
    // nothing changed, nonces included
    assert_eq!(before, inproc::state_dump(&w.node.store));
    for seed in [VALIDATORS[0], STRANGER, VALIDATORS[1]] {
        assert_eq!(w.nonce(seed), nonces[&seed], "seed {seed}");
    }
}
