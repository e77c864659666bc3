//! Rule 3: only OWNER and ADMIN may grant or revoke; a DISTRIBUTOR, a
//! CONSUMER or a key without a role is refused with ROLE_NOT_GRANTABLE.

mod inproc;
use inproc::rights::*;
use stave::proto::rights::Role;
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn distributor_and_consumer_cannot_grant() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    w.send(
        UPLOADER,
        vec![grant(c, DISTRIBUTOR, Role::Distributor, None)],
    )
    .await
    .ok();
    w.send(UPLOADER, vec![grant(c, CONSUMER, Role::Consumer, None)])
        .await
        .ok();
    for signer in [DISTRIBUTOR, CONSUMER, STRANGER] {
        w.refused(
            signer,
            vec![grant(c, OWNER2, Role::Consumer, None)],
            Code::RoleNotGrantable,
        )
        .await;
        w.refused(signer, vec![revoke(c, CONSUMER)], Code::RoleNotGrantable)
            .await;
    }
    // a consumer cannot even change its own scope
    w.refused(
        CONSUMER,
        vec![grant(c, CONSUMER, Role::Consumer, territories(&["US"]))],
        Code::RoleNotGrantable,
    )
    .await;
}
