//! Issue 19 on the real 4-validator localnet (real `stave` and `cometbft`
//! binaries, gRPC over 127.0.0.1): a flood of the most expensive valid txs
//! Stave knows, covering every item of the gas schedule, keeps every node
//! committing, and every node ends with the same app hash.
//!
//! | kind | schedule items it stresses |
//! | --- | --- |
//! | `kv.Set` of 60 KiB | `tx_byte` (bytes decoded), `write_byte` |
//! | 64 `kv.Set`s of 32 bytes | `write` (keys written), `read` |
//! | 16 `KvTokenCreate`s, 4 tags each | `signature` (embedded), `point`, `read_byte`, index writes |
//! | 64 kvdb `SAdd`s of 16 members | `read`, `write`, `write_byte` |
//! | a Casbin model and 30 rules of bounded repetitions | `compile_weight` (model text parsed, rules measured) |
//! | `ApplyGroup` naming 32 keys | `point` (32 decompressions in decode) |
//! | 2 `RecordGrant`s under a ROLE_BASED policy whose model holds 90 heavy patterns | `eval_op`, `compile_weight` (at every evaluation) |
//! | 32 `RotateTakedownAuthority`s by a lone authority | `iter_row` (the rotation votes are listed) |
//!
//! Every tx declares its simulated gas plus 10%, so the blocks fill up to
//! `max_block_gas` by declared gas: the test requires at least one block
//! whose txs declare more than half of it, and none over it. Every tx must
//! commit with code 0. Then every node must commit three more blocks, and
//! all must agree on the app hash.
//!
//! Binaries and CI behaviour as in `e2e_localnet.rs`. Base port 22000.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig};
use common::rights::{manifest, operator, publish_single, set_key, WAIT};
use ed25519_dalek::SigningKey;
use futures::StreamExt;
use stave::client::StaveClient;
use stave::keyspaces::casbin::{AddCasbinModel, AddCasbinRule};
use stave::keyspaces::grants::RecordGrant;
use stave::keyspaces::groups::{ApplyGroup, RotateTakedownAuthority, VoteGroup};
use stave::keyspaces::kv::token::client as token;
use stave::keyspaces::kv::{KvSet, KvdbAction, KvdbOp};
use stave::keyspaces::policies::SetPolicy;
use stave::keyspaces::uploads::sign_manifest;
use stave::proto::governance as gpb;
use stave::proto::query::AccountRequest;
use stave::proto::rights as pb;
use stave::proto::tx::{BroadcastAndWaitRequest, BroadcastAndWaitResponse, SimulateRequest};
use stave::tx::{build::sign_tx_with_gas, Action};

const CID: &[u8] = &stave::media::cid::fixture_cid(b"bafk-e2e-flood");
const GROUP: &str = "flood-authority";
/// Fresh signers per kind of bulk tx.
const PER_KIND: usize = 24;
/// Txs in flight at once.
const IN_FLIGHT: usize = 48;
/// Sequential txs of each validator's grants and of the authority's rotations.
const SEQUENTIAL: u64 = 3;
/// `RecordGrant`s per tx: each evaluates the heavy model, about 125 million
/// gas (its compile is charged at every evaluation), so 2 make a tx of
/// about a fifth of `max_block_gas`.
const GRANTS_PER_TX: usize = 2;

fn fresh() -> SigningKey {
    SigningKey::generate(&mut rand::rngs::OsRng)
}

fn kv_set(k: String, len: usize) -> Action {
    Action::KvSet(KvSet {
        key: k.into_bytes(),
        value: vec![0xA5; len],
    })
}

/// A model whose matcher runs two regexes and a key match on every rule,
/// so a request walks all 30 heavy rules (none matches: the object, the
/// cid in hex, is shorter than their patterns) before it reaches the rule
/// that allows every consumer.
fn model_text() -> String {
    "[request_definition]\nr = sub, obj, act\n\n[policy_definition]\np = sub, obj, act\n\n\
     [policy_effect]\ne = some(where (p.eft == allow))\n\n\
     [matchers]\nm = regexMatch(r.obj, p.obj) && keyMatch2(r.act, p.act) && regexMatch(r.sub, p.sub)\n"
        .into()
}

/// A rule of bounded repetitions of a negated class, the heaviest kind per
/// byte Casbin accepts.
fn heavy_rule(model: &str, slot: u32) -> Action {
    rule(
        model,
        slot,
        "p",
        (0..3)
            .map(|k| format!("[^a]{{{}}}", 40 + slot + k))
            .collect(),
    )
}

fn rule(model: &str, slot: u32, ptype: &str, values: Vec<String>) -> Action {
    Action::AddCasbinRule(AddCasbinRule {
        model_id: model.into(),
        rule_index: slot,
        ptype: ptype.into(),
        values,
    })
}

fn model_id(owner: &SigningKey, name: &str) -> String {
    format!("{}/{name}", hex::encode(set_key(owner)))
}

/// A model and its 30 heavy rules, owned by `owner`.
fn heavy_model(owner: &SigningKey, name: &str) -> Vec<Action> {
    let id = model_id(owner, name);
    let mut a = vec![Action::AddCasbinModel(AddCasbinModel {
        model_id: id.clone(),
        perm_model: model_text(),
    })];
    a.extend((0..30).map(|s| heavy_rule(&id, s)));
    a
}

/// The actions of one bulk tx of `kind` by the fresh signer `sk`.
fn bulk(kind: &str, sk: &SigningKey, chain: &str, n: usize) -> Vec<Action> {
    match kind {
        "kv_set_60k" => vec![kv_set(format!("big{n:03}"), 60 * 1024)],
        "kv_set_64x32" => (0..64)
            .map(|j| kv_set(format!("k{n:03}-{j:02}"), 32))
            .collect(),
        "kv_token_create_16" => (0..16)
            .map(|j| {
                let tags = token::tags_json(&["a", "b", "c", "d"]);
                let key = format!("t{j:02}");
                let t = token::create(sk, chain, "[1,\"flood\"]", &key, &[b'v'; 1024], &tags, 1);
                Action::KvTokenCreate(t)
            })
            .collect(),
        "kvdb_sadd_64" => (0..64)
            .map(|j| {
                Action::Kvdb(KvdbAction {
                    db: "flood".into(),
                    key: format!("s{j:02}").into_bytes(),
                    op: KvdbOp::SAdd((0..16).map(|m| vec![m; 32]).collect()),
                })
            })
            .collect(),
        "casbin_model_30" => heavy_model(sk, "flood"),
        "apply_group_32_keys" => vec![Action::ApplyGroup(ApplyGroup {
            group_id: format!("flood-{n:03}"),
            takedown_authorities: vec![set_key(sk)],
            members: (0..31).map(|_| set_key(&fresh())).collect(),
        })],
        other => panic!("unknown kind {other}"),
    }
}

const KINDS: [&str; 6] = [
    "kv_set_60k",
    "kv_set_64x32",
    "kv_token_create_16",
    "kvdb_sadd_64",
    "casbin_model_30",
    "apply_group_32_keys",
];

/// One gRPC client per node, cloned for every call: the client listener
/// admits 20 new connections a second per IP, so the test does not open
/// one per request.
struct Net<'a> {
    net: &'a Localnet,
    clients: Vec<StaveClient>,
}

impl Net<'_> {
    fn client(&self, node: usize) -> StaveClient {
        self.clients[node].clone()
    }
}

async fn nonce(n: &Net<'_>, node: usize, key: &SigningKey) -> u64 {
    let net = n.net;
    let mut c = n.client(node);
    c.query
        .account(AccountRequest {
            pubkey: set_key(key),
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner().nonce)
        .unwrap_or_else(|e| net.fail(&format!("Account: {e}")))
}

/// Signs `actions` declaring their simulated gas (on `node`) plus 10%.
async fn signed(
    n: &Net<'_>,
    node: usize,
    key: &SigningKey,
    nonce: u64,
    actions: Vec<Action>,
) -> Vec<u8> {
    let net = n.net;
    let probe = sign_tx_with_gas(
        key,
        &net.chain_id,
        nonce,
        actions.clone(),
        "",
        u64::MAX >> 8,
    );
    let mut c = n.client(node);
    let sim =
        c.tx.simulate(SimulateRequest { tx: probe })
            .await
            .unwrap_or_else(|e| net.fail(&format!("Simulate: {e}")))
            .into_inner();
    if sim.code != 0 {
        net.fail(&format!("Simulate refused a flood tx: {sim:?}"));
    }
    let gas = sim.gas_used + sim.gas_used / 10;
    sign_tx_with_gas(key, &net.chain_id, nonce, actions, "", gas)
}

async fn broadcast(n: &Net<'_>, node: usize, tx: Vec<u8>) -> BroadcastAndWaitResponse {
    let net = n.net;
    let mut c = n.client(node);
    // Under the listener's 60 s request timeout.
    c.tx.broadcast_and_wait(BroadcastAndWaitRequest {
        tx,
        timeout_ms: 55_000,
    })
    .await
    .unwrap_or_else(|e| net.fail(&format!("BroadcastAndWait on node{node}: {e}")))
    .into_inner()
}

/// One setup tx by `key` through node 0, committed with code 0; waits for
/// every node to reach its height.
async fn setup(n: &Net<'_>, key: &SigningKey, actions: Vec<Action>, what: &str) {
    let net = n.net;
    let next = nonce(n, 0, key).await;
    let tx = signed(n, 0, key, next, actions).await;
    let r = broadcast(n, 0, tx).await;
    if !r.committed || r.code != 0 {
        net.fail(&format!("{what}: {r:?}"));
    }
    for i in 0..net.nodes {
        net.wait_stave_height(i, r.height, WAIT).await;
    }
}

/// `count` txs of `actions(i)` by `key`, one after another through `node`.
async fn sequence(
    n: &Net<'_>,
    node: usize,
    key: &SigningKey,
    count: u64,
    actions: impl Fn(u64) -> Vec<Action>,
) -> Vec<BroadcastAndWaitResponse> {
    let mut out = Vec::new();
    for i in 0..count {
        let next = nonce(n, node, key).await;
        let tx = signed(n, node, key, next, actions(i)).await;
        out.push(broadcast(n, node, tx).await);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_expensive_txs_keeps_every_node_committing() {
    let Some(bins) = binaries("e2e_expensive_tx_flood_keeps_every_node_committing") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, 22000));
    net.up();
    for i in 0..net.nodes {
        net.wait_stave_height(i, 1, WAIT).await;
    }
    let ops: Vec<SigningKey> = (0..net.nodes).map(|i| operator(&net, i)).collect();
    let (uploader, authority) = (fresh(), fresh());
    let mut clients = Vec::new();
    for i in 0..net.nodes {
        clients.push(net.client(i).await);
    }
    let n = &Net { net: &net, clients };

    // The release, its ROLE_BASED policy over a heavy model, and a group
    // whose lone authority can rotate (to itself) as often as it likes.
    let uc = sign_manifest(&uploader, manifest(&net, &ops, CID, ""));
    let upload = Action::UploadComplete(uc.try_into().expect("valid UploadComplete"));
    setup(n, &ops[0], vec![upload], "UploadComplete").await;
    let publish = publish_single(CID);
    setup(n, &uploader, vec![publish], "PublishRelease").await;
    let model = model_id(&uploader, "flood");
    let mut rules = heavy_model(&uploader, "flood");
    let hex_only = "^[0-9a-f]+$".to_string();
    let allow = vec![hex_only.clone(), hex_only, "access".into()];
    rules.push(rule(&model, 30, "p", allow));
    setup(n, &uploader, rules, "the heavy model").await;
    let policy = Action::SetPolicy(SetPolicy {
        cid: CID.to_vec(),
        policy_type: pb::PolicyType::RoleBased,
        casbin_model_id: model,
        script_cid: vec![],
    });
    setup(n, &uploader, vec![policy], "SetPolicy").await;
    let apply = Action::ApplyGroup(ApplyGroup {
        group_id: GROUP.into(),
        takedown_authorities: vec![set_key(&authority)],
        members: vec![],
    });
    setup(n, &authority, vec![apply], "ApplyGroup").await;
    for op in &ops[..3] {
        let vote = Action::VoteGroup(VoteGroup {
            group_id: GROUP.into(),
            kind: gpb::ElectionKind::Admit as i32,
            approve: true,
        });
        setup(n, op, vec![vote], "VoteGroup").await;
    }

    // The flood: bulk txs from fresh signers, all at once over every node,
    // beside each validator's grants and the authority's rotations.
    let start = net.max_comet_height().await;
    let mut bulk_txs = Vec::new();
    for kind in KINDS {
        // ApplyGroup opens an application: at most 16 are open at once.
        let count = if kind == "apply_group_32_keys" {
            12
        } else {
            PER_KIND
        };
        for i in 0..count {
            let sk = fresh();
            let node = i % net.nodes;
            let tx = signed(n, node, &sk, 0, bulk(kind, &sk, &net.chain_id, i)).await;
            bulk_txs.push((kind.to_string(), node, tx));
        }
    }
    let bulk_run = futures::stream::iter(bulk_txs)
        .map(|(kind, node, tx)| async move { (kind, broadcast(n, node, tx).await) })
        .buffer_unordered(IN_FLIGHT)
        .collect::<Vec<_>>();
    // A grant of a cid to a consumer is recorded once per block: a fresh
    // consumer for each.
    let grants = futures::future::join_all(ops.iter().enumerate().map(|(i, op)| {
        sequence(n, i, op, SEQUENTIAL, move |_| {
            (0..GRANTS_PER_TX)
                .map(|_| {
                    Action::RecordGrant(RecordGrant {
                        cid: CID.to_vec(),
                        consumer_pubkey: set_key(&fresh()),
                        territory: "GB".into(),
                        context: Vec::new(),
                        count: 0,
                        use_type: 0,
                    })
                })
                .collect()
        })
    }));
    let rotations = sequence(n, 0, &authority, SEQUENTIAL, |_| {
        (0..32)
            .map(|_| {
                Action::RotateTakedownAuthority(RotateTakedownAuthority {
                    group_id: GROUP.into(),
                    takedown_authorities: vec![set_key(&authority)],
                })
            })
            .collect()
    });
    let (bulk_results, grants, rotations) = tokio::join!(bulk_run, grants, rotations);
    let mut results: Vec<(String, BroadcastAndWaitResponse)> = bulk_results;
    results.extend(
        grants
            .into_iter()
            .flatten()
            .map(|r| ("record_grant_2".into(), r)),
    );
    results.extend(
        rotations
            .into_iter()
            .map(|r| ("rotate_authority_32".into(), r)),
    );

    let mut declared: BTreeMap<u64, u64> = BTreeMap::new();
    let mut per_kind: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    for (kind, r) in &results {
        if !r.committed || r.code != 0 {
            net.fail(&format!("{kind}: not committed with code 0: {r:?}"));
        }
        assert!(
            r.gas_used > 0 && r.gas_used <= r.gas_wanted,
            "{kind}: {r:?}"
        );
        *declared.entry(r.height).or_default() += r.gas_wanted;
        let e = per_kind.entry(kind.clone()).or_default();
        e.0 += 1;
        e.1 = e.1.max(r.gas_used);
    }
    eprintln!("flood from height {start}: declared gas per height {declared:?}");
    eprintln!("per kind (txs, most gas one used): {per_kind:?}");
    assert_eq!(per_kind.len(), KINDS.len() + 2, "every kind committed");
    let max_block_gas = stave::gas::GasParams::default().max_block_gas;
    assert!(
        declared.values().all(|g| *g <= max_block_gas),
        "a block declared more than max_block_gas: {declared:?}"
    );
    assert!(
        declared.values().any(|g| *g > max_block_gas / 2),
        "no block was filled past half of max_block_gas: {declared:?}"
    );

    let last = declared.keys().max().copied().unwrap_or(start);
    for i in 0..net.nodes {
        net.wait_stave_height(i, last + 3, Duration::from_secs(120))
            .await;
    }
    net.assert_app_hashes_agree(WAIT).await;
    net.down();
}
