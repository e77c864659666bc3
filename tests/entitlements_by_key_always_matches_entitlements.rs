//! Index consistency: random sequences of grant and revoke (by owners,
//! admins and keys without rights, several per block, on two cids) leave
//! `entitlements_by_key/` equal to the index rebuilt from `entitlements/`,
//! and the owner count equal to the number of OWNER records, after every
//! committed block.

mod inproc;
use inproc::rights::*;
use proptest::prelude::*;
use prost::Message;
use stave::keyspaces::entitlements::{entitlements_cid_prefix, EntitlementsRead};
use stave::proto::rights::{Entitlement, Role};
use stave::tx::Action;

const CIDS: [&[u8]; 2] = [b"cid-a", b"cid-b"];
const KEYS: [u8; 6] = [UPLOADER, ADMIN, OWNER2, CONSUMER, DISTRIBUTOR, STRANGER];
const ROLES: [Role; 4] = [Role::Owner, Role::Admin, Role::Distributor, Role::Consumer];

#[derive(Debug, Clone)]
struct Op {
    signer: usize,
    target: usize,
    cid: usize,
    /// None = revoke.
    role: Option<usize>,
}

fn op() -> impl Strategy<Value = Op> {
    (
        0..3usize,
        0..KEYS.len(),
        0..CIDS.len(),
        proptest::option::weighted(0.7, 0..ROLES.len()),
    )
        .prop_map(|(signer, target, cid, role)| Op {
            signer,
            target,
            cid,
            role,
        })
}

fn action(o: &Op) -> Action {
    let (c, t) = (CIDS[o.cid], KEYS[o.target]);
    match o.role {
        Some(r) => grant(c, t, ROLES[r], None),
        None => revoke(c, t),
    }
}

fn check(w: &World) {
    let (rebuilt, stored) = index_vs_primary(&w.node);
    assert_eq!(
        rebuilt, stored,
        "entitlements_by_key differs from its rebuild"
    );
    let view = w.node.store.view();
    for c in CIDS {
        let c = &label_cid(c)[..];
        let records = view
            .prefix_list(&entitlements_cid_prefix(c), None, usize::MAX)
            .unwrap();
        assert_eq!(view.entitlement_count(c).unwrap(), records.len() as u64);
        let owners = records
            .iter()
            .filter(|(_, v)| Entitlement::decode(v.as_slice()).unwrap().role == Role::Owner as i32)
            .count() as u64;
        assert_eq!(view.owner_count(c).unwrap(), owners);
        assert!(owners >= 1, "a published cid never loses its last owner");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn entitlements_by_key_always_matches_entitlements(
        blocks in proptest::collection::vec(proptest::collection::vec(op(), 1..6), 1..12)
    ) {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let mut w = World::published(CIDS[0]).await;
            w.send(VALIDATORS[0], vec![upload_action(UPLOADER, manifest(CIDS[1]))]).await.ok();
            w.send(UPLOADER, vec![publish(CIDS[1])]).await.ok();
            w.send(UPLOADER, vec![grant(CIDS[0], ADMIN, Role::Admin, None)]).await.ok();
            check(&w);
            for ops in &blocks {
                // signers: UPLOADER, ADMIN, OWNER2 (an owner only if granted)
                let txs = ops.iter().map(|o| (KEYS[o.signer], vec![action(o)])).collect();
                w.send_block(txs).await;
                check(&w);
            }
        });
    }
}
