//! A ROLE_BASED policy decides access through the Casbin model its owner
//! added: a consumer allowed by a rule (through a role) gets access, anyone
//! else is denied, and removing the role assignment takes access away. A
//! policy may name only a model that its setter owns.

mod inproc;
use inproc::casbin::{add_model, add_rule, model_id, pubhex, remove_rule, RBAC};
use inproc::rights::*;
use stave::proto::rights::{PolicyType as T, Role};
use stave::tx::Code;

fn ask(w: &World, cid: &[u8], who: u8) -> (bool, u32) {
    let r = w.check_access(cid, who, "GB").expect("CheckAccess answers");
    (r.allowed, r.code)
}

#[tokio::test(flavor = "multi_thread")]
async fn role_based_policy_decides_access_by_casbin_rules() {
    let c = b"cid-rbac";
    let mut w = World::published(c).await;
    let model = model_id(UPLOADER, "listeners");
    let obj = hex::encode(label_cid(c));
    w.send(UPLOADER, vec![add_model(&model, RBAC)]).await.ok();
    w.send(
        UPLOADER,
        vec![
            add_rule(&model, 0, "p", &["listener", &obj, "access"]),
            add_rule(&model, 1, "g", &[&pubhex(CONSUMER), "listener"]),
        ],
    )
    .await
    .ok();

    // Someone else's model cannot govern this cid, even for its OWNER.
    let foreign = model_id(STRANGER, "mine");
    w.send(STRANGER, vec![add_model(&foreign, RBAC)]).await.ok();
    w.refused(
        UPLOADER,
        vec![policy(c, T::RoleBased, &foreign, b"")],
        Code::ModelNotOwned,
    )
    .await;

    w.send(UPLOADER, vec![policy(c, T::RoleBased, &model, b"")])
        .await
        .ok();
    assert_eq!(ask(&w, c, CONSUMER), (true, 0), "CONSUMER holds the role");
    assert_eq!(
        ask(&w, c, STRANGER),
        (false, Code::AccessDenied.value()),
        "no rule names STRANGER"
    );

    // An entitlement alone does not open a ROLE_BASED cid.
    w.send(UPLOADER, vec![grant(c, STRANGER, Role::Consumer, None)])
        .await
        .ok();
    assert_eq!(ask(&w, c, STRANGER), (false, Code::AccessDenied.value()));

    w.send(UPLOADER, vec![remove_rule(&model, 1)]).await.ok();
    assert_eq!(
        ask(&w, c, CONSUMER),
        (false, Code::AccessDenied.value()),
        "the role assignment is gone"
    );
}
