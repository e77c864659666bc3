//! Rule 4: only an OWNER or ADMIN of the cid may set its policy; the
//! takedown states are not settable; a policy may name only a Casbin model
//! that the setter owns; each type takes only its own fields.

mod inproc;
use inproc::rights::*;
use stave::keyspaces::policies::{type_of, PoliciesRead};
use stave::proto::rights::{PolicyType as T, Role};
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn set_policy_requires_owner_or_admin() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    w.send(UPLOADER, vec![grant(c, ADMIN, Role::Admin, None)])
        .await
        .ok();
    w.send(
        UPLOADER,
        vec![grant(c, DISTRIBUTOR, Role::Distributor, None)],
    )
    .await
    .ok();

    for signer in [DISTRIBUTOR, STRANGER] {
        w.refused(
            signer,
            vec![policy(c, T::Public, "", b"")],
            Code::RoleNotGrantable,
        )
        .await;
    }
    w.refused(
        UPLOADER,
        vec![policy(b"nope", T::Public, "", b"")],
        Code::UnknownCid,
    )
    .await;

    w.send(UPLOADER, vec![policy(c, T::Public, "", b"")])
        .await
        .ok();
    w.send(ADMIN, vec![policy(c, T::DirectGrant, "", b"")])
        .await
        .ok();
    let p = w
        .node
        .store
        .committed()
        .policy(&label_cid(c))
        .unwrap()
        .expect("policy");
    assert_eq!(type_of(&p), T::DirectGrant);
    assert_eq!(p.owner_pubkey, pk(ADMIN).to_vec());
}

#[tokio::test(flavor = "multi_thread")]
async fn takedown_states_and_foreign_models_are_refused() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    for t in [T::TakedownPending, T::TakenDown] {
        w.refused(
            UPLOADER,
            vec![policy(c, t, "", b"")],
            Code::PolicyTypeReserved,
        )
        .await;
    }
    // a ROLE_BASED policy naming a model that does not exist is refused (a
    // model owned by someone else: role_based_policy_decides_access_by_casbin_rules)
    let model = format!("{}/m1", hex::encode(pk(UPLOADER)));
    w.refused(
        UPLOADER,
        vec![policy(c, T::RoleBased, &model, b"")],
        Code::ModelNotOwned,
    )
    .await;
    w.refused(
        UPLOADER,
        vec![policy(c, T::Conditional, &model, b"")],
        Code::ModelNotOwned,
    )
    .await;
    // each type takes only its own fields
    w.refused(
        UPLOADER,
        vec![policy(c, T::RoleBased, "", b"")],
        Code::InvalidPolicy,
    )
    .await;
    w.refused(
        UPLOADER,
        vec![policy(c, T::Public, &model, b"")],
        Code::InvalidPolicy,
    )
    .await;
    w.refused(
        UPLOADER,
        vec![policy(c, T::Programmable, "", b"")],
        Code::InvalidPolicy,
    )
    .await;
    w.send(
        UPLOADER,
        vec![policy(c, T::Programmable, "", b"script-cid")],
    )
    .await
    .ok();
}
