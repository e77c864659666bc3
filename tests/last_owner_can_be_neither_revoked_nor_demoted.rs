//! Rule 3: the last OWNER of a cid can be neither revoked nor demoted; with
//! a second OWNER, either can go.

mod inproc;
use inproc::rights::*;
use stave::proto::rights::Role;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn last_owner_can_be_neither_revoked_nor_demoted() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    w.refused(UPLOADER, vec![revoke(c, UPLOADER)], Code::LastOwner)
        .await;
    w.refused(
        UPLOADER,
        vec![grant(c, UPLOADER, Role::Admin, None)],
        Code::LastOwner,
    )
    .await;
    // re-granting OWNER to the last owner (a scope change) is not a demotion
    w.send(UPLOADER, vec![grant(c, UPLOADER, Role::Owner, None)])
        .await
        .ok();

    w.send(UPLOADER, vec![grant(c, OWNER2, Role::Owner, None)])
        .await
        .ok();
    w.send(OWNER2, vec![grant(c, UPLOADER, Role::Admin, None)])
        .await
        .ok();
    assert_eq!(w.role(c, UPLOADER), Some(Role::Admin));
    // OWNER2 is now the last owner
    w.refused(OWNER2, vec![revoke(c, OWNER2)], Code::LastOwner)
        .await;
    w.refused(UPLOADER, vec![revoke(c, OWNER2)], Code::RoleNotGrantable)
        .await;
}
