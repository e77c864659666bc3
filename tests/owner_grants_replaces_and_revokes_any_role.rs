//! Rule 3: an OWNER grants, replaces or revokes any role; one record per
//! (cid, pubkey), so a grant replaces the role held.

mod inproc;
use inproc::rights::*;
use stave::keyspaces::entitlements::EntitlementsRead;
use stave::proto::rights::Role;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn owner_grants_replaces_and_revokes_any_role() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    for role in [
        Role::Consumer,
        Role::Distributor,
        Role::Admin,
        Role::Owner,
        Role::Consumer,
    ] {
        w.send(UPLOADER, vec![grant(c, OWNER2, role, None)])
            .await
            .ok();
        assert_eq!(w.role(c, OWNER2), Some(role));
        let (rebuilt, stored) = index_vs_primary(&w.node);
        assert_eq!(rebuilt, stored);
    }
    // The grantor pays for a record (both of its rows) until it is revoked.
    let stored = |w: &World| {
        use stave::keyspaces::accounts::AccountsRead;
        let view = w.node.store.view();
        view.account(&pk(UPLOADER)).unwrap().unwrap().stored_bytes
    };
    let before = stored(&w);
    w.send(UPLOADER, vec![grant(c, ADMIN, Role::Admin, None)])
        .await
        .ok();
    let record = w
        .node
        .store
        .view()
        .entitlement(&label_cid(c), &pk(ADMIN))
        .unwrap()
        .unwrap();
    let charged = stave::keyspaces::entitlements::entitlement_bytes(&pk(ADMIN), &record);
    assert!(charged > 2 * 32);
    assert_eq!(stored(&w), before + charged);
    w.send(UPLOADER, vec![revoke(c, ADMIN)]).await.ok();
    assert_eq!(w.role(c, ADMIN), None);
    assert_eq!(stored(&w), before, "the revoke gave the bytes back");
    // revoking a key without a record: NOT_FOUND, nothing changes
    w.refused(UPLOADER, vec![revoke(c, STRANGER)], Code::NotFound)
        .await;
    // granting on an unknown cid
    w.refused(
        UPLOADER,
        vec![grant(b"nope", STRANGER, Role::Consumer, None)],
        Code::UnknownCid,
    )
    .await;
}
