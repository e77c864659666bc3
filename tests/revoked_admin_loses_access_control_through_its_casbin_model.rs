//! Review M5: a ROLE_BASED policy's Casbin model keeps its power only while
//! the model's owner holds OWNER or ADMIN on the cid. An ADMIN sets
//! ROLE_BASED with its own model; the OWNER revokes the ADMIN; the ex-ADMIN
//! adds a rule allowing a consumer. RecordGrant for that consumer is then
//! refused with CASBIN_EVALUATION_FAILED, and CheckAccess denies with the
//! same code, naming the owner's lost role. Granting the role back restores
//! the model's power; a demotion to CONSUMER removes it again.
//!
//! CheckAccess goes through the query cache: it leaves the consensus cache
//! (filled by RecordGrant) as it was.

mod inproc;
use inproc::casbin::{add_model, add_rule, model_id, pubhex, RBAC};
use inproc::rights::*;
use stave::keyspaces::casbin::{cache, CacheUse};
use stave::proto::rights::{PolicyType as T, Role};
use stave::tx::Code;

fn ask(w: &World, cid: &[u8], who: u8) -> (bool, u32, String) {
    let r = w.check_access(cid, who, "GB").expect("CheckAccess answers");
    (r.allowed, r.code, r.reason)
}

#[tokio::test(flavor = "multi_thread")]
async fn revoked_admin_loses_access_control_through_its_casbin_model() {
    let c = b"cid-m5";
    let obj = hex::encode(label_cid(c));
    let v = VALIDATORS[0];
    let mut w = World::published(c).await;
    w.send(UPLOADER, vec![grant(c, ADMIN, Role::Admin, None)])
        .await
        .ok();
    let model = model_id(ADMIN, "admins-own");
    w.send(ADMIN, vec![add_model(&model, RBAC)]).await.ok();
    w.send(
        ADMIN,
        vec![add_rule(
            &model,
            0,
            "p",
            &[&pubhex(CONSUMER), &obj, "access"],
        )],
    )
    .await
    .ok();
    w.send(ADMIN, vec![policy(c, T::RoleBased, &model, b"")])
        .await
        .ok();

    // while ADMIN holds ADMIN, its model decides
    w.send(v, vec![record(c, CONSUMER, "GB")]).await.ok();
    let consensus = cache::stats(CacheUse::Consensus);
    assert!(
        consensus.entries >= 1,
        "RecordGrant evaluated through the consensus cache"
    );
    assert!(ask(&w, c, CONSUMER).0);
    assert!(ask(&w, c, CONSUMER).0);
    assert_eq!(cache::stats(CacheUse::Query).entries, 1);
    assert_eq!(
        cache::stats(CacheUse::Consensus),
        consensus,
        "CheckAccess read or filled the consensus cache"
    );

    // the OWNER revokes the ADMIN, who then opens the cid to STRANGER
    w.send(UPLOADER, vec![revoke(c, ADMIN)]).await.ok();
    w.send(
        ADMIN,
        vec![add_rule(
            &model,
            1,
            "p",
            &[&pubhex(STRANGER), &obj, "access"],
        )],
    )
    .await
    .ok();
    let r = w
        .refused(
            v,
            vec![record(c, STRANGER, "GB")],
            Code::CasbinEvaluationFailed,
        )
        .await;
    assert!(
        r.log.contains(&hex::encode(pk(ADMIN))) && r.log.contains("not OWNER or ADMIN"),
        "{}",
        r.log
    );
    let (allowed, code, reason) = ask(&w, c, STRANGER);
    assert_eq!(
        (allowed, code),
        (false, Code::CasbinEvaluationFailed.value()),
        "{reason}"
    );
    assert_eq!(
        ask(&w, c, CONSUMER).1,
        Code::CasbinEvaluationFailed.value(),
        "the model allows no one now"
    );

    // the role granted back restores the model's power
    w.send(UPLOADER, vec![grant(c, ADMIN, Role::Admin, None)])
        .await
        .ok();
    assert!(ask(&w, c, STRANGER).0);
    w.send(v, vec![record(c, STRANGER, "GB")]).await.ok();

    // a demotion to CONSUMER takes it away again
    w.send(UPLOADER, vec![grant(c, ADMIN, Role::Consumer, None)])
        .await
        .ok();
    let (allowed, code, _) = ask(&w, c, STRANGER);
    assert_eq!(
        (allowed, code),
        (false, Code::CasbinEvaluationFailed.value())
    );
    w.refused(
        v,
        vec![record(c, CONSUMER, "GB")],
        Code::CasbinEvaluationFailed,
    )
    .await;
}
