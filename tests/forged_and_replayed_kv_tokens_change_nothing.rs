//! Bad tokens each get their own code and change nothing (a forged or
//! malformed token never authenticates its tx; a replay that does
//! authenticate consumes only the relayer's nonce).

mod inproc;
use inproc::kv::*;
use inproc::*;
use stave::keyspaces::kv::token::client;
use stave::tx::{Action, Code};

fn forged() -> Action {
    // Signed by key 2 but naming controller 1.
    let mut c = client::create(&key(2), CHAIN, PID, "name", b"evil", "", 1);
    c.token.controller = controller(1);
    Action::KvTokenCreate(c)
}

fn tampered() -> Action {
    let mut c = client::create(&key(1), CHAIN, PID, "name", b"Ada", "", 1);
    c.token.value = b"Eve".to_vec();
    Action::KvTokenCreate(c)
}

fn raw(seed: u8, pid: &str, k: &str, v: &[u8], tags: &str) -> Action {
    Action::KvTokenCreate(client::create(&key(seed), CHAIN, pid, k, v, tags, 1))
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_tokens_get_their_own_codes_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let mut other_chain = client::create(&key(1), "other-chain", PID, "name", b"Ada", "", 1);
    other_chain.generation = 1;
    let mut bad_ctl = client::create(&key(1), CHAIN, PID, "name", b"Ada", "", 1);
    bad_ctl.token.controller = controller(1).to_uppercase();
    let cases: Vec<(&str, Action, Code)> = vec![
        ("forged", forged(), Code::KvTokenForged),
        ("tampered value", tampered(), Code::KvTokenForged),
        (
            "signed for another chain",
            Action::KvTokenCreate(other_chain),
            Code::KvTokenForged,
        ),
        (
            "controller not lowercase hex",
            Action::KvTokenCreate(bad_ctl),
            Code::KvBadController,
        ),
        ("empty key", raw(1, PID, "", b"v", ""), Code::KvBadKey),
        (
            "oversized value",
            raw(1, PID, "k", &vec![b'x'; 65 * 1024], ""),
            Code::KvValueTooLarge,
        ),
        (
            "protocol id with a space",
            raw(1, "[1, \"profile data\"]", "k", b"v", ""),
            Code::KvBadProtocolId,
        ),
        (
            "protocol name too short",
            raw(1, "[1,\"abc\"]", "k", b"v", ""),
            Code::KvBadProtocolId,
        ),
        (
            "tags not canonical",
            raw(1, PID, "k", b"v", "[\"a\", \"b\"]"),
            Code::KvBadTags,
        ),
        (
            "duplicate tags",
            raw(1, PID, "k", b"v", "[\"a\",\"a\"]"),
            Code::KvBadTags,
        ),
        (
            "empty tag list spelled []",
            raw(1, PID, "k", b"v", "[]"),
            Code::KvBadTags,
        ),
    ];
    let before = state_dump(&node.store);
    for (i, (name, action, want)) in cases.into_iter().enumerate() {
        let tx = signed(9, 0, vec![action]);
        let c = node.check_tx(tx.clone(), false).await;
        assert_eq!(c.code.value(), want.value(), "{name} (CheckTx): {}", c.log);
        let (_, r) = node.block(i as u64 + 1, vec![tx]).await;
        assert_eq!(code(&r, 0), want.value(), "{name}: {}", r.tx_results[0].log);
    }
    assert_eq!(state_dump(&node.store), before, "bad tokens changed state");
}

#[tokio::test(flavor = "multi_thread")]
async fn old_tokens_never_replay() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let c1 = create(1, "name", "v1", &[], 1);
    node.block(1, vec![signed(9, 0, vec![c1.clone()])]).await;
    let t1 = live(&node, 1, "name").unwrap();
    let u2 = update(1, "name", "v2", &[], 2, t1.id);
    node.block(2, vec![signed(9, 1, vec![u2.clone()])]).await;
    let t2 = live(&node, 1, "name").unwrap();

    // Rolling back: replaying the old update or the old create.
    let (_, r) = node.block(3, vec![signed(9, 2, vec![u2.clone()])]).await;
    assert_eq!(
        code(&r, 0),
        Code::KvTokenReplayed.value(),
        "{}",
        r.tx_results[0].log
    );
    let (_, r) = node.block(4, vec![signed(9, 3, vec![c1.clone()])]).await;
    assert_eq!(
        code(&r, 0),
        Code::KvTokenReplayed.value(),
        "{}",
        r.tx_results[0].log
    );
    assert_eq!(live(&node, 1, "name").unwrap().id, t2.id);

    // Resurrecting after a delete.
    node.block(5, vec![signed(9, 4, vec![delete(1, "name", 3, t2.id)])])
        .await;
    let before = state_dump(&node.store);
    let (_, r) = node.block(6, vec![signed(9, 5, vec![c1.clone()])]).await;
    assert_eq!(code(&r, 0), Code::KvTokenReplayed.value());
    let (_, r) = node.block(7, vec![signed(9, 6, vec![u2])]).await;
    assert_eq!(code(&r, 0), Code::KvTokenReplayed.value());
    assert!(live(&node, 1, "name").is_none());
    // Only the relayer's nonce moved.
    let after = state_dump(&node.store);
    let relayer = stave::keyspaces::accounts::account_key(&owner(9));
    let strip = |d: Vec<(Vec<u8>, Vec<u8>)>| {
        d.into_iter()
            .filter(|(k, _)| *k != relayer)
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(after), strip(before));
}
