//! Property: after any sequence of token and kvdb operations, the index
//! space equals indexes rebuilt from primary data alone, and no tuple ever
//! has two live tokens. Txs carry one to three actions, so a tx whose later
//! action fails must leave no trace of its earlier ones (index rows and
//! count deltas included). Every sequence starts with a lone create, so it
//! cannot pass vacuously: some token operations succeed in each, and no
//! correctly signed operation is ever refused as forged or unauthenticated.

mod inproc;
use std::collections::{BTreeMap, BTreeSet};

use inproc::kv::*;
use inproc::*;
use proptest::prelude::*;
use stave::keyspaces::kv::db::KvEntry;
use stave::keyspaces::kv::keys::{self, Sel};
use stave::keyspaces::kv::token::{postings, query, tuple_hash, Op, StoredToken, TokenRead};
use stave::keyspaces::kv::{KvTokenParams, KvdbOp};
use stave::store::{ChainStore, Space, StateRead};
use stave::tx::{Action, Code};

#[derive(Debug, Clone)]
struct Intent {
    ctl: u8,
    key: u8,
    kind: u8,
    tags: u8,
    stale: bool,
    gen_skew: u8,
}

fn intent() -> impl Strategy<Value = Intent> {
    (
        1u8..4,
        0u8..3,
        0u8..8,
        any::<u8>(),
        prop::bool::weighted(0.15),
        prop::sample::select(vec![0u8, 0, 0, 0, 1, 2]),
    )
        .prop_map(|(ctl, key, kind, tags, stale, gen_skew)| Intent {
            ctl,
            key,
            kind,
            tags,
            stale,
            gen_skew,
        })
}

const TAGS: [&str; 4] = ["red", "green", "blue", "big"];

fn tag_list(mask: u8) -> Vec<&'static str> {
    TAGS.iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, t)| *t)
        .collect()
}

/// Resolves an intent against committed state into an action.
fn action(node: &Node, i: &Intent, n: usize) -> Action {
    let k = format!("k{}", i.key);
    let tuple = tuple_hash(PID, &k, &controller(i.ctl));
    let rec = node.store.view().tuple(&tuple).unwrap();
    let generation = rec.generation + 1 - (i.gen_skew.min(1) as u64).min(rec.generation);
    let live = rec.live.unwrap_or([0; 32]);
    let named = if i.stale { [7; 32] } else { live };
    let value = format!("v{n}");
    let t = tag_list(i.tags);
    match i.kind {
        0 | 1 => create(i.ctl, &k, &value, &t, generation),
        2 | 3 => update(i.ctl, &k, &value, &t, generation, named),
        4 => delete(i.ctl, &k, generation, named),
        5 => kvdb(
            "p",
            &k,
            KvdbOp::ZAdd {
                member: vec![i.tags % 5],
                score: format!("{}", i.tags as i32 - 100),
            },
        ),
        6 => kvdb(
            "p",
            &k,
            KvdbOp::Expire {
                ttl_ms: 1000 * (i.tags % 3) as u64,
            },
        ),
        _ => kvdb(
            "p",
            &k,
            if i.stale {
                KvdbOp::Del
            } else {
                KvdbOp::ZRem(vec![vec![i.tags % 5]])
            },
        ),
    }
}

/// Blocks of txs of intents. The first tx is a lone create (generation 1
/// on a fresh tuple, so it succeeds).
fn sequence() -> impl Strategy<Value = Vec<Vec<Vec<Intent>>>> {
    let tx = prop::collection::vec(intent(), 1..4);
    prop::collection::vec(prop::collection::vec(tx, 1..5), 1..8).prop_map(|mut blocks| {
        if let Some(first) = blocks.first_mut().and_then(|b| b.first_mut()) {
            first.truncate(1);
            first[0].kind = 0;
        }
        blocks
    })
}

fn dump(store: &ChainStore, space: Space, prefix: &[u8]) -> BTreeSet<Vec<u8>> {
    store
        .view()
        .prefix_raw(space, prefix, None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

/// Postings, counts and history rows.
type TokenIndexes = (
    BTreeSet<Vec<u8>>,
    BTreeMap<Vec<u8>, u64>,
    BTreeMap<Vec<u8>, Vec<u8>>,
);

/// Postings and counts of the live tokens (a token is live when its tuple
/// record names it), and every tuple's history: its tokens in creation order.
fn rebuilt_token_indexes(store: &ChainStore) -> TokenIndexes {
    let p = KvTokenParams::default();
    let mut ix = BTreeSet::new();
    let mut counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut by_tuple: BTreeMap<[u8; 32], Vec<StoredToken>> = BTreeMap::new();
    for (k, _) in store
        .prefix_list(keys::tokens_root(), None, usize::MAX)
        .unwrap()
    {
        let id: [u8; 32] = k[keys::tokens_root().len()..].try_into().unwrap();
        let t: StoredToken = store.view().stored_token(&id).unwrap().unwrap();
        let tuple = tuple_hash(&t.token.protocol_id, &t.token.key, &t.token.controller);
        if store.view().tuple(&tuple).unwrap().live == Some(t.id) {
            for (sel, h) in postings(&t.token, &p) {
                ix.insert(keys::ix_key(sel, &h, t.seq, &t.id));
                *counts.entry(keys::ix_count_key(sel, &h)).or_default() += 1;
            }
        }
        by_tuple.entry(tuple).or_default().push(t);
    }
    let mut history = BTreeMap::new();
    for (tuple, mut tokens) in by_tuple {
        tokens.sort_by_key(|t| t.seq);
        check_token_chain(store, &tuple, &tokens);
        for (n, t) in tokens.iter().enumerate() {
            history.insert(keys::history_key(&tuple, n as u64), t.id.to_vec());
        }
    }
    let _ = Sel::Tag;
    (ix, counts, history)
}

/// A tuple's tokens, in creation order, form chains: each token but the
/// last was either deleted or replaced by the update after it, never both;
/// the tuple record names the last token exactly when it is not deleted (so
/// at most one token is live); the history query serves exactly these
/// marks, whole or page by page.
fn check_token_chain(store: &ChainStore, tuple: &[u8; 32], tokens: &[StoredToken]) {
    let rec = store.view().tuple(tuple).unwrap();
    assert_eq!(rec.history_len, tokens.len() as u64, "history length");
    let mut want = tokens.to_vec();
    for (i, t) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1);
        let replaced = next.is_some_and(|n| n.op == Op::Update as u32);
        assert_eq!(t.spent_by, None, "stored records carry no successor");
        match next {
            Some(_) => assert!(t.deleted() != replaced, "token {i}: deleted xor replaced"),
            None => assert_eq!(rec.live == Some(t.id), !t.deleted(), "last token"),
        }
        if let (true, Some(n)) = (replaced, next) {
            want[i].spent_height = n.created_height;
            want[i].spent_by = Some(n.id);
        }
    }
    if tokens.last().is_none_or(|t| t.deleted()) {
        assert_eq!(
            rec.live, None,
            "a tuple whose last token is deleted has no live token"
        );
    }
    let t0 = &tokens[0].token;
    let view = store.view();
    let (whole, next) =
        query::history(&view, &t0.protocol_id, &t0.key, &t0.controller, 0, 1000).unwrap();
    assert_eq!((&whole, next), (&want, None), "history marks");
    let mut paged = Vec::new();
    let mut from = Some(0);
    for _ in 0..=want.len() {
        let Some(f) = from else { break };
        let (page, next) =
            query::history(&view, &t0.protocol_id, &t0.key, &t0.controller, f, 1).unwrap();
        paged.extend(page);
        from = next;
    }
    assert_eq!(
        from,
        None,
        "history paging did not end after {} pages",
        want.len() + 1
    );
    assert_eq!(paged, want, "paged history marks");
}

/// The expiry queue (verifiable state) and the score order of live sorted
/// sets (index space), rebuilt from the kvdb entries and their members.
fn rebuilt_kvdb_indexes(store: &ChainStore) -> (BTreeSet<Vec<u8>>, BTreeSet<Vec<u8>>) {
    let mut expiry = BTreeSet::new();
    let mut live_prefixes = BTreeSet::new();
    for (k, v) in store
        .prefix_list(keys::kvdb_root(), None, usize::MAX)
        .unwrap()
    {
        let e: KvEntry = prost::Message::decode(v.as_slice())
            .map(|p: stave::proto::kv::KvEntry| p.try_into().unwrap())
            .unwrap();
        let owner: [u8; 32] = k[5..37].try_into().unwrap();
        let rest = &k[38..];
        let slash = rest.iter().position(|b| *b == b'/').unwrap();
        let db = std::str::from_utf8(&rest[..slash]).unwrap();
        let key = &rest[slash + 1..];
        if e.expire_ms != 0 {
            expiry.insert(keys::expiry_key(e.expire_ms, &owner, db, key));
        }
        live_prefixes.insert(keys::member_prefix(&owner, db, key, e.incarnation));
    }
    let mut z = BTreeSet::new();
    for (k, v) in store
        .prefix_list(keys::members_root(), None, usize::MAX)
        .unwrap()
    {
        let (plen, tag) = keys::split_member_key(&k).unwrap();
        if tag == b'z' && live_prefixes.contains(&k[..plen]) {
            let score = i128::from_be_bytes(v.as_slice().try_into().unwrap());
            z.insert(keys::zorder_key(&k[..plen], score, &k[plen + 1..]));
        }
    }
    (expiry, z)
}

/// Score rows in index space, less those of deleted sorted sets still
/// queued for removal under `kvdbzgc/`.
fn live_score_rows(store: &ChainStore) -> BTreeSet<Vec<u8>> {
    let queued: BTreeSet<Vec<u8>> = dump(store, Space::Index, keys::zorder_gc_prefix())
        .into_iter()
        .map(|k| k[keys::zorder_gc_prefix().len()..].to_vec())
        .collect();
    let root = keys::zorder_root().len();
    dump(store, Space::Index, keys::zorder_root())
        .into_iter()
        .filter(|k| {
            let (plen, _) = keys::split_member_key(&k[root..]).unwrap();
            !queued.contains(&k[root..root + plen])
        })
        .collect()
}

fn check(node: &Node) {
    let (ix, counts, history) = rebuilt_token_indexes(&node.store);
    assert_eq!(dump(&node.store, Space::Index, keys::ix_root()), ix);
    let stored_history: BTreeMap<Vec<u8>, Vec<u8>> = node
        .store
        .view()
        .prefix_raw(Space::Index, keys::history_root(), None, usize::MAX)
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(stored_history, history);
    let stored_counts: BTreeMap<Vec<u8>, u64> = node
        .store
        .view()
        .prefix_raw(Space::Index, keys::ix_count_root(), None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(k, v)| (k, u64::from_be_bytes(v.as_slice().try_into().unwrap())))
        .collect();
    assert_eq!(stored_counts, counts);
    let (expiry, z) = rebuilt_kvdb_indexes(&node.store);
    assert_eq!(
        dump(&node.store, Space::State, keys::expiry_prefix()),
        expiry
    );
    assert_eq!(live_score_rows(&node.store), z);
    let _ = node.store.view().get_raw(b"x");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn indexes_always_equal_a_rebuild(blocks in sequence()) {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let mut node = Node::open(dir.path());
            node.init_chain(default_genesis()).await;
            let mut nonce = 0;
            let mut n = 0;
            let mut token_ok = 0;
            for (h, block) in blocks.iter().enumerate() {
                // Intents are resolved against the last commit, so intents
                // in one block (and in one tx) race each other on purpose.
                let mut txs = Vec::new();
                for intents in block {
                    let actions = intents
                        .iter()
                        .map(|i| {
                            n += 1;
                            action(&node, i, n)
                        })
                        .collect();
                    txs.push(signed(9, nonce, actions));
                    nonce += 1;
                }
                let (_, r) = node.block(h as u64 + 1, txs).await;
                for (j, intents) in block.iter().enumerate() {
                    let c = code(&r, j);
                    assert!(
                        c != Code::KvTokenForged.value() && c != Code::Signature.value(),
                        "a correctly signed operation was refused: code {c}: {}",
                        r.tx_results[j].log
                    );
                    if c == 0 && intents.iter().any(|i| i.kind <= 4) {
                        token_ok += 1;
                    }
                }
                check(&node);
            }
            assert!(token_ok > 0, "no token operation succeeded in {blocks:?}");
        });
    }
}

/// A tx whose first action (a tagged create) would succeed alone and whose
/// second fails: the tx changes nothing but its nonce, so no index row,
/// count delta or history row of the create survives. The same create sent
/// alone then counts once per selector.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_tx_leaves_no_index_rows_or_counts_of_its_earlier_actions() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let tagged = || create(1, "k0", "v", &["red", "big"], 1);
    let skipped_generation = create(2, "k1", "v", &[], 5);
    let (_, r) = node
        .block(1, vec![signed(9, 0, vec![tagged(), skipped_generation])])
        .await;
    assert_eq!(
        code(&r, 0),
        Code::KvTokenReplayed.value(),
        "the second action (a skipped generation) must fail the tx: {}",
        r.tx_results[0].log
    );
    check(&node);
    let spaces = [
        (Space::Index, keys::ix_root()),
        (Space::Index, keys::ix_count_root()),
        (Space::Index, keys::history_root()),
        (Space::State, keys::token_area_root()),
    ];
    for (space, prefix) in spaces {
        assert_eq!(
            dump(&node.store, space, prefix),
            BTreeSet::new(),
            "rows under {:?} after a failed tx",
            String::from_utf8_lossy(prefix)
        );
    }
    let (_, r) = node.block(2, vec![signed(9, 1, vec![tagged()])]).await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    check(&node);
    let counts: Vec<u64> = node
        .store
        .view()
        .prefix_raw(Space::Index, keys::ix_count_root(), None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(_, v)| u64::from_be_bytes(v.as_slice().try_into().unwrap()))
        .collect();
    // key, controller, protocol, red, big
    assert_eq!(counts, vec![1; 5]);
}
