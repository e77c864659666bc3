//! `docs/gas-per-action.md` is generated from the node: one representative
//! tx per action, each its own block on one in-process node, its
//! `gas_used` as FinalizeBlock reports it. The test fails when the figures
//! in the file are not what the node charges; after a schedule or code
//! change, rewrite the file with
//! `STAVE_WRITE_DOCS=1 cargo test --release --test docs_gas_per_action_matches_the_node`.

mod inproc;

use inproc::casbin::{add_model, add_rule, model_id, pubhex, remove_rule, RBAC};
use inproc::governance::{
    admit, apply, endpoints, leave, operator_rotation, pubkey, rotation, x25519_rotation,
};
use inproc::governance_content::*;
use inproc::kv::{create, delete, kvdb, live, update};
use inproc::rights::*;
use inproc::{del, key, set, CHAIN};
use stave::keyspaces::accounts::SetAccountQuota;
use stave::keyspaces::groups::{RotateTakedownAuthority, SetGroupMember};
use stave::keyspaces::kv::KvdbOp;
use stave::proto::governance as gpb;
use stave::proto::rights::{PolicyType, Role};
use stave::tx::{build::sign_tx_with_gas, Action};

const DOC: &str = include_str!("../docs/gas-per-action.md");
const CID: &[u8] = b"bafk-gas-doc";
const CID2: &[u8] = b"bafk-gas-doc-2";
const LOOSE: &[u8] = b"bafk-gas-doc-loose";

struct Doc {
    w: World,
    rows: Vec<(String, String, u64)>,
}

impl Doc {
    /// Runs `action` by `seed` in its own block; it must apply.
    async fn row(&mut self, seed: u8, action: Action, name: &str, what: &str) {
        let nonce = self.w.nonce(seed);
        let tx = sign_tx_with_gas(&key(seed), CHAIN, nonce, vec![action], "", 100_000_000);
        write_fuzz_seed(name, &self.rows, &tx);
        self.w.height += 1;
        let (_, r) = self.w.node.block(self.w.height, vec![tx.into()]).await;
        let t = &r.tx_results[0];
        assert_eq!(t.code.value(), 0, "{name}: {}", t.log);
        self.rows
            .push((name.into(), what.into(), t.gas_used as u64));
    }
}

/// With `STAVE_FUZZ_SEEDS=DIR`, writes `tx` (a tx of one action of every
/// kind, as this test builds them) as seeds of the `tx_envelope` fuzz
/// target: its raw mode (byte 0, the tx) and its signed mode (byte 1, the
/// body).
fn write_fuzz_seed(name: &str, rows: &[(String, String, u64)], tx: &[u8]) {
    use prost::Message;
    let Ok(dir) = std::env::var("STAVE_FUZZ_SEEDS") else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    let n = rows.len();
    let body = stave::proto::tx::Tx::decode(tx).unwrap().body_bytes;
    std::fs::write(
        dir.join(format!("seed-{n:02}-{name}-raw")),
        [&[0u8][..], tx].concat(),
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("seed-{n:02}-{name}-body")),
        [&[1u8][..], &body].concat(),
    )
    .unwrap();
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

async fn kv_rows(d: &mut Doc) {
    let s = STRANGER;
    d.row(
        s,
        set("k", &"v".repeat(32)),
        "KvSet",
        "a new key, 32-byte value",
    )
    .await;
    d.row(s, del("k"), "KvDelete", "that key").await;
    let value = KvdbOp::Set {
        value: b("sixteen bytes!!!"),
        ttl_ms: 0,
    };
    d.row(s, kvdb("db", "s", value), "kvdb set", "16-byte value")
        .await;
    let expire = KvdbOp::Expire { ttl_ms: 60_000 };
    d.row(s, kvdb("db", "s", expire), "kvdb expire", "on that key")
        .await;
    let incr = KvdbOp::IncrBy(5);
    d.row(s, kvdb("db", "n", incr), "kvdb incr_by", "a new counter")
        .await;
    let hset = KvdbOp::HSet {
        field: b("f"),
        value: b("v"),
    };
    d.row(s, kvdb("db", "h", hset), "kvdb hset", "a new hash")
        .await;
    let hdel = KvdbOp::HDel { field: b("f") };
    d.row(s, kvdb("db", "h", hdel), "kvdb hdel", "its field")
        .await;
    let members = (0..4u8).map(|m| vec![m; 8]).collect();
    d.row(
        s,
        kvdb("db", "set", KvdbOp::SAdd(members)),
        "kvdb sadd",
        "4 members of 8 bytes",
    )
    .await;
    let srem = KvdbOp::SRem(vec![vec![0; 8]]);
    d.row(s, kvdb("db", "set", srem), "kvdb srem", "one of them")
        .await;
    let zadd = KvdbOp::ZAdd {
        member: b("m"),
        score: "1.5".into(),
    };
    d.row(s, kvdb("db", "z", zadd), "kvdb zadd", "a new sorted set")
        .await;
    let zrem = KvdbOp::ZRem(vec![b("m")]);
    d.row(s, kvdb("db", "z", zrem), "kvdb zrem", "its member")
        .await;
    let push = KvdbOp::Push {
        values: vec![b("a"), b("b")],
        left: false,
    };
    d.row(
        s,
        kvdb("db", "l", push),
        "kvdb push",
        "2 values, a new list",
    )
    .await;
    let pop = KvdbOp::Pop { left: true };
    d.row(s, kvdb("db", "l", pop), "kvdb pop", "one of them")
        .await;
    d.row(
        s,
        kvdb("db", "set", KvdbOp::Del),
        "kvdb del",
        "the set (its members go to the GC queue)",
    )
    .await;
    let c = CONSUMER;
    d.row(
        s,
        create(c, "name", &"v".repeat(32), &["a", "b"], 1),
        "KvTokenCreate",
        "32-byte value, 2 tags, relayed",
    )
    .await;
    let t = live(&d.w.node, c, "name").expect("created").id;
    d.row(
        s,
        update(c, "name", &"w".repeat(32), &["a"], 2, t),
        "KvTokenUpdate",
        "new value, one tag dropped",
    )
    .await;
    let t = live(&d.w.node, c, "name").expect("updated").id;
    d.row(s, delete(c, "name", 3, t), "KvTokenDelete", "that token")
        .await;
}

async fn rights_rows(d: &mut Doc) {
    let up = upload_action(UPLOADER, manifest(CID2));
    d.row(
        VALIDATORS[0],
        up,
        "UploadComplete",
        "3 replicas, 3 DEK holders, no group",
    )
    .await;
    d.row(
        UPLOADER,
        publish(CID2),
        "PublishRelease",
        "a one-track release, one worldwide deal, OWNER entitlement",
    )
    .await;
    let g = grant(CID, CONSUMER, Role::Consumer, None);
    d.row(UPLOADER, g, "GrantEntitlement", "CONSUMER, no scope")
        .await;
    let model = model_id(UPLOADER, "gas");
    d.row(
        UPLOADER,
        add_model(&model, RBAC),
        "AddCasbinModel",
        "the RBAC example of docs/casbin.md",
    )
    .await;
    let obj = hex::encode(label_cid(CID));
    let p = add_rule(&model, 0, "p", &["listener", &obj, "access"]);
    d.row(UPLOADER, p, "AddCasbinRule", "a `p` rule").await;
    let consumer = pubhex(STRANGER);
    let g = add_rule(&model, 1, "g", &[&consumer, "listener"]);
    d.row(UPLOADER, g, "AddCasbinRule", "a `g` rule").await;
    let extra = add_rule(&model, 2, "p", &["other", &obj, "access"]);
    d.row(UPLOADER, extra, "AddCasbinRule", "a third rule")
        .await;
    d.row(
        UPLOADER,
        remove_rule(&model, 2),
        "RemoveCasbinRule",
        "that rule",
    )
    .await;
    let p = policy(CID, PolicyType::RoleBased, &model, b"");
    d.row(UPLOADER, p, "SetPolicy", "ROLE_BASED over that model")
        .await;
    let r = record(CID, STRANGER, "GB");
    d.row(
        VALIDATORS[0],
        r,
        "RecordGrant",
        "allowed by the model's two rules",
    )
    .await;
    d.row(
        UPLOADER,
        revoke(CID, CONSUMER),
        "RevokeEntitlement",
        "the CONSUMER entitlement",
    )
    .await;
}

async fn governance_rows(d: &mut Doc) {
    let a = AUTHORITY;
    d.row(a, set_flag(CID, "DE"), "SetFlag", "one jurisdiction")
        .await;
    d.row(a, clear_flag(CID, "DE"), "ClearFlag", "that flag")
        .await;
    d.row(
        a,
        takedown(CID),
        "TakedownRequest",
        "by the group's authority",
    )
    .await;
    d.row(UPLOADER, counter(CID), "CounterNotice", "by the owner")
        .await;
    d.row(
        VALIDATORS[0],
        resolve(CID, true),
        "TakedownResolve",
        "one validator's vote",
    )
    .await;
    d.w.send(
        VALIDATORS[0],
        vec![upload_action(UPLOADER, manifest(LOOSE))],
    )
    .await
    .ok();
    d.row(
        VALIDATORS[1],
        validator_takedown(LOOSE),
        "ValidatorTakedownRequest",
        "of an upload with no group",
    )
    .await;
    let apply = apply_group("second", OWNER2, &[DISTRIBUTOR]);
    d.row(OWNER2, apply, "ApplyGroup", "one authority, one member")
        .await;
    let vote = vote_group("second", gpb::ElectionKind::Admit, true);
    d.row(VALIDATORS[0], vote, "VoteGroup", "an ADMIT vote")
        .await;
    let member = Action::SetGroupMember(SetGroupMember {
        group_id: GROUP.into(),
        member: pk(ADMIN).to_vec(),
        add: true,
    });
    d.row(a, member, "SetGroupMember", "add a member").await;
    let rotate = Action::RotateTakedownAuthority(RotateTakedownAuthority {
        group_id: GROUP.into(),
        takedown_authorities: vec![pk(a).to_vec()],
    });
    d.row(
        a,
        rotate,
        "RotateTakedownAuthority",
        "a lone authority re-names itself",
    )
    .await;
    let sponsor = Action::SetAccountQuota(SetAccountQuota {
        account: pk(OWNER2).to_vec(),
        amount: 1 << 20,
        group_id: String::new(),
    });
    d.row(
        VALIDATORS[1],
        sponsor,
        "SetAccountQuota",
        "a validator sponsors 1 MiB",
    )
    .await;
}

/// The validator lifecycle, last: a validator leaves at the end.
async fn validator_rows(d: &mut Doc) {
    const APPLICANT: u8 = 30;
    d.row(
        APPLICANT,
        apply(APPLICANT),
        "ApplyValidator",
        "a new operator, two jurisdictions",
    )
    .await;
    d.row(
        VALIDATORS[0],
        admit(APPLICANT),
        "VoteValidator",
        "an ADMIT vote, not yet decided",
    )
    .await;
    let upgrade = Action::ScheduleUpgrade(stave::keyspaces::upgrades::ScheduleUpgrade {
        name: "v2".into(),
        height: 1_000_000,
        app_version: 2,
    });
    d.row(
        VALIDATORS[1],
        upgrade,
        "ScheduleUpgrade",
        "the first vote, not yet decided",
    )
    .await;
    d.row(
        VALIDATORS[2],
        rotation(VALIDATORS[2], 40),
        "RotateConsensusKey",
        "an ACTIVE validator to a new key",
    )
    .await;
    d.row(
        VALIDATORS[2],
        x25519_rotation(41),
        "RotateX25519Key",
        "a validator to a new X25519 key",
    )
    .await;
    d.row(
        VALIDATORS[2],
        operator_rotation(pubkey(VALIDATORS[2]), 42, 42),
        "RotateOperatorKey",
        "a validator hands signing to a new operator key",
    )
    .await;
    let moved = endpoints("127.0.0.1:27001", "node204.example:9090");
    d.row(
        VALIDATORS[3],
        moved,
        "UpdateValidatorEndpoints",
        "both endpoints",
    )
    .await;
    d.row(
        VALIDATORS[3],
        leave(),
        "LeaveValidator",
        "an ACTIVE validator starts unbonding",
    )
    .await;
}

fn render(rows: &[(String, String, u64)]) -> String {
    let mut out = String::from(
        "# Gas per action\n\n\
         What one representative tx of each action used, as FinalizeBlock reported it under the\n\
         default schedule ([gas.md](gas.md)): one action per tx, a 64-byte signature, the signer's\n\
         account already on chain unless it is new. Gas follows what an action touches, so larger\n\
         values, more members or a heavier Casbin model cost more; `Simulate` (and `stave tx`)\n\
         give the figure for a given tx. Generated by\n\
         `STAVE_WRITE_DOCS=1 cargo test --release --test docs_gas_per_action_matches_the_node`;\n\
         the test fails when a figure here is not what the node charges.\n\n\
         | action | the tx measured | gas used |\n| --- | --- | ---: |\n",
    );
    for (name, what, gas) in rows {
        out.push_str(&format!("| `{name}` | {what} | {gas} |\n"));
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn docs_gas_per_action_lists_what_the_node_charges() {
    let mut d = Doc {
        w: grouped(CID).await,
        rows: Vec::new(),
    };
    kv_rows(&mut d).await;
    rights_rows(&mut d).await;
    governance_rows(&mut d).await;
    validator_rows(&mut d).await;
    let want = render(&d.rows);
    if std::env::var_os("STAVE_WRITE_DOCS").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/gas-per-action.md");
        std::fs::write(path, &want).unwrap();
        return;
    }
    assert_eq!(DOC, want, "docs/gas-per-action.md is stale: see its header");
}
