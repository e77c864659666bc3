//! The tuple lifecycle: create only without a live token, update and delete
//! naming the live token, a relayer may carry the controller's tokens, and
//! history keeps every token oldest to newest across delete and re-create.

mod inproc;
use inproc::kv::*;
use inproc::*;
use stave::keyspaces::kv::token::query;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn lifecycle_through_a_relayer_with_full_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    // Signer 9 relays controller 1's tokens.
    let (_, r) = node
        .block(
            1,
            vec![signed(9, 0, vec![create(1, "name", "Ada", &["a"], 1)])],
        )
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    let t1 = live(&node, 1, "name").expect("live after create");
    assert_eq!(t1.token.controller, controller(1));

    // A second create on a live tuple fails.
    let (_, r) = node
        .block(
            2,
            vec![signed(9, 1, vec![create(1, "name", "Bob", &[], 2)])],
        )
        .await;
    assert_eq!(
        code(&r, 0),
        Code::KvTokenLiveExists.value(),
        "{}",
        r.tx_results[0].log
    );

    let (_, r) = node
        .block(
            3,
            vec![signed(
                9,
                2,
                vec![update(1, "name", "Ada L", &["b"], 2, t1.id)],
            )],
        )
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    let t2 = live(&node, 1, "name").unwrap();
    assert_ne!(t2.id, t1.id);

    // Update naming the spent token: stale, even with the next generation.
    let (_, r) = node
        .block(
            4,
            vec![signed(9, 3, vec![update(1, "name", "X", &[], 3, t1.id)])],
        )
        .await;
    assert_eq!(
        code(&r, 0),
        Code::KvTokenStale.value(),
        "{}",
        r.tx_results[0].log
    );

    let (_, r) = node
        .block(5, vec![signed(2, 0, vec![delete(1, "name", 3, t2.id)])])
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    assert!(live(&node, 1, "name").is_none());

    // Update or delete with no live token.
    let (_, r) = node
        .block(6, vec![signed(2, 1, vec![delete(1, "name", 4, t2.id)])])
        .await;
    assert_eq!(
        code(&r, 0),
        Code::KvTokenNoLive.value(),
        "{}",
        r.tx_results[0].log
    );

    // Re-create: generation keeps growing; history shows both chains.
    let (_, r) = node
        .block(
            7,
            vec![signed(1, 0, vec![create(1, "name", "Ada 2", &[], 4)])],
        )
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    let h = history(&node, 1, "name");
    assert_eq!(values(&h), ["Ada", "Ada L", "Ada 2"]);
    assert_eq!(
        h.iter().map(|t| t.generation).collect::<Vec<_>>(),
        [1, 2, 4]
    );
    assert_eq!((h[0].spent_height, h[0].spent_by), (3, Some(t2.id)));
    assert_eq!((h[1].spent_height, h[1].spent_by), (5, None));
    assert!(!h[2].deleted() && h[2].spent_by.is_none());
    assert_eq!(live(&node, 1, "name").map(|t| t.id), Some(h[2].id));
    // Pages carry the same marks: the last token of a page takes its
    // successor from the next position.
    let view = node.store.view();
    let mut paged = Vec::new();
    let mut from = Some(0);
    while let Some(f) = from {
        let (page, next) = query::history(&view, PID, "name", &controller(1), f, 1).unwrap();
        assert_eq!(page.len(), 1);
        paged.extend(page);
        from = next;
    }
    assert_eq!(paged, h);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_creates_of_one_tuple_in_one_block_leave_one_live_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(default_genesis()).await;
    let (_, r) = node
        .block(
            1,
            vec![
                signed(5, 0, vec![create(1, "k", "first", &[], 1)]),
                signed(6, 0, vec![create(1, "k", "second", &[], 1)]),
            ],
        )
        .await;
    assert_eq!(code(&r, 0), 0);
    assert_eq!(
        code(&r, 1),
        Code::KvTokenReplayed.value(),
        "{}",
        r.tx_results[1].log
    );
    assert_eq!(values(&history(&node, 1, "k")), ["first"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_controller_cannot_pass_its_live_token_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(
        serde_json::json!({"params": {"kv_tokens": {"max_live_tokens_per_controller": 2}}}),
    )
    .await;
    let (_, r) = node
        .block(
            1,
            vec![signed(
                1,
                0,
                vec![create(1, "a", "1", &[], 1), create(1, "b", "1", &[], 1)],
            )],
        )
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    let (_, r) = node
        .block(2, vec![signed(1, 1, vec![create(1, "c", "1", &[], 1)])])
        .await;
    assert_eq!(
        code(&r, 0),
        Code::KvTooManyTokens.value(),
        "{}",
        r.tx_results[0].log
    );
    let a = live(&node, 1, "a").unwrap();
    let (_, r) = node
        .block(
            3,
            vec![signed(
                1,
                2,
                vec![delete(1, "a", 2, a.id), create(1, "c", "1", &[], 1)],
            )],
        )
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
}
