//! Review M3: deleting a collection used to give its bytes back at once,
//! while its members stayed in state until the GC (a bounded number of rows
//! per block) removed them. Delete-and-refill then grew state without limit
//! under one account's quota. Now orphaned members stay charged until the GC
//! really deletes them, so live plus orphaned bytes never pass the quota.

mod inproc;
use inproc::kv::*;
use inproc::*;
use stave::keyspaces::accounts::AccountsRead;
use stave::keyspaces::kv::KvdbOp as Op;
use stave::tx::Code;

const QUOTA: u64 = 4096;
const GC_PER_BLOCK: u64 = 8;
const MEMBERS: usize = 100;
const MEMBER_BYTES: usize = 30;

fn refill(round: usize) -> Op {
    Op::SAdd(
        (0..MEMBERS)
            .map(|i| format!("{round:04}-{i:025}").into_bytes())
            .collect(),
    )
}

/// Member rows in state (live and orphaned) and their bytes, counted from
/// the rows themselves: every member here is a 30-byte set member.
fn member_rows(node: &Node) -> (usize, u64) {
    let rows = node.store.prefix_list(b"kvdbm/", None, usize::MAX).unwrap();
    let n = rows.len();
    (n, (n * MEMBER_BYTES) as u64)
}

fn stored_bytes(node: &Node) -> u64 {
    node.store
        .view()
        .account(&owner(1))
        .unwrap()
        .map(|a| a.stored_bytes)
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn delete_and_refill_stays_within_the_quota_counting_orphans() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = Node::open(dir.path());
    node.init_chain(serde_json::json!({"params": {
        "max_stored_bytes_per_account": QUOTA,
        "kv_tokens": {"kvdb_gc_per_block": GC_PER_BLOCK}
    }}))
    .await;
    let (_, r) = node
        .block(1, vec![signed_large(1, 0, vec![kvdb("d", "s", refill(0))])])
        .await;
    assert_eq!(code(&r, 0), 0, "{}", r.tx_results[0].log);
    assert_eq!(member_rows(&node).0, MEMBERS);

    // Each block: delete the set, then refill it in a second tx. Before the
    // fix every refill succeeded and orphans piled up beyond the quota.
    let mut nonce = 1;
    let mut refused = 0;
    let mut refilled = 0;
    for h in 2..40u64 {
        let del = signed(1, nonce, vec![kvdb("d", "s", Op::Del)]);
        let add = signed_large(1, nonce + 1, vec![kvdb("d", "s", refill(h as usize))]);
        nonce += 2;
        let (_, r) = node.block(h, vec![del, add]).await;
        let (rows, bytes) = member_rows(&node);
        let charged = stored_bytes(&node);
        assert!(charged <= QUOTA, "height {h}: {charged} bytes charged");
        assert!(
            bytes <= charged,
            "height {h}: {rows} member rows hold {bytes} bytes, only {charged} charged"
        );
        match code(&r, 1) {
            0 => refilled += 1,
            c if c == Code::QuotaExceeded.value() => refused += 1,
            c => panic!("height {h}: refill got code {c}: {}", r.tx_results[1].log),
        }
    }
    assert!(
        refused > 0,
        "a refill while orphans are charged must be refused"
    );
    assert!(
        refilled > 0,
        "once the GC has collected, a refill fits again"
    );

    // Quiet blocks: the GC drains every orphan and gives back its bytes.
    for h in 40..80u64 {
        node.block(h, vec![]).await;
    }
    let live = node
        .store
        .prefix_list(b"kvdb/", None, usize::MAX)
        .unwrap()
        .len();
    let (rows, bytes) = member_rows(&node);
    assert!(node
        .store
        .prefix_list(b"kvdbgc/", None, 1)
        .unwrap()
        .is_empty());
    let header = if live == 1 { 1 } else { 0 }; // key "s"
    assert_eq!(rows, if live == 1 { MEMBERS } else { 0 });
    assert_eq!(
        stored_bytes(&node),
        bytes + header + stave::keyspaces::accounts::storage::ACCOUNT_RECORD_BYTES,
        "every orphan byte given back (the account's own record stays charged)"
    );
}
