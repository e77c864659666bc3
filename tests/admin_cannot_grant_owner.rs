//! Rule 3: an ADMIN grants, replaces or revokes DISTRIBUTOR and CONSUMER
//! only, and never touches an OWNER or ADMIN record.

mod inproc;
use inproc::rights::*;
use stave::proto::rights::Role;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn admin_cannot_grant_owner() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    w.send(UPLOADER, vec![grant(c, ADMIN, Role::Admin, None)])
        .await
        .ok();

    // refused: granting OWNER or ADMIN, touching the OWNER
    w.refused(
        ADMIN,
        vec![grant(c, STRANGER, Role::Owner, None)],
        Code::RoleNotGrantable,
    )
    .await;
    w.refused(
        ADMIN,
        vec![grant(c, STRANGER, Role::Admin, None)],
        Code::RoleNotGrantable,
    )
    .await;
    w.refused(
        ADMIN,
        vec![grant(c, UPLOADER, Role::Consumer, None)],
        Code::RoleNotGrantable,
    )
    .await;
    w.refused(ADMIN, vec![revoke(c, UPLOADER)], Code::RoleNotGrantable)
        .await;

    // allowed: DISTRIBUTOR and CONSUMER, replace between them, revoke
    w.send(ADMIN, vec![grant(c, DISTRIBUTOR, Role::Distributor, None)])
        .await
        .ok();
    w.send(ADMIN, vec![grant(c, CONSUMER, Role::Distributor, None)])
        .await
        .ok();
    w.send(
        ADMIN,
        vec![grant(c, CONSUMER, Role::Consumer, territories(&["GB"]))],
    )
    .await
    .ok();
    assert_eq!(w.role(c, CONSUMER), Some(Role::Consumer));
    // refused: promoting a CONSUMER to ADMIN
    w.refused(
        ADMIN,
        vec![grant(c, CONSUMER, Role::Admin, None)],
        Code::RoleNotGrantable,
    )
    .await;
    w.send(ADMIN, vec![revoke(c, DISTRIBUTOR)]).await.ok();
    assert_eq!(w.role(c, DISTRIBUTOR), None);

    // an ADMIN cannot touch another ADMIN
    w.send(UPLOADER, vec![grant(c, OWNER2, Role::Admin, None)])
        .await
        .ok();
    w.refused(ADMIN, vec![revoke(c, OWNER2)], Code::RoleNotGrantable)
        .await;
    w.refused(
        ADMIN,
        vec![grant(c, OWNER2, Role::Consumer, None)],
        Code::RoleNotGrantable,
    )
    .await;
}
