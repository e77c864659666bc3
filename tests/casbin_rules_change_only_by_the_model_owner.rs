//! AddCasbinRule and RemoveCasbinRule are allowed to the model's owner and
//! refused to anyone else with CASBIN_NOT_OWNER, changing nothing. A taken
//! slot, or a rule the model already has in another slot, is CONFLICT.

mod inproc;
use inproc::casbin::*;
use stave::keyspaces::casbin::{enforce, CasbinDecision, CasbinRequest};
use stave::tx::Code;

#[tokio::test(flavor = "multi_thread")]
async fn only_the_owner_adds_and_removes_rules() {
    let mut chain = Chain::new().await;
    let m = model_id(1, "rbac");
    chain.ok(1, add_model(&m, RBAC)).await;
    chain
        .ok(1, add_rule(&m, 0, "p", &["admin", "song", "access"]))
        .await;

    // another key may neither add nor remove
    let log = chain
        .refused(
            2,
            add_rule(&m, 1, "g", &["mallory", "admin"]),
            Code::CasbinNotOwner,
        )
        .await;
    assert!(log.contains(&pubhex(2)) && log.contains(&m), "{log}");
    chain
        .refused(2, remove_rule(&m, 0), Code::CasbinNotOwner)
        .await;

    // the owner may
    chain.ok(1, add_rule(&m, 1, "g", &["alice", "admin"])).await;
    let view = chain.node.store.view();
    let req = CasbinRequest {
        sub: "alice",
        obj: "song",
        act: "access",
        territory: "US",
    };
    assert_eq!(enforce(&view, &m, &req).unwrap(), CasbinDecision::Allow);
    drop(view);
    chain.ok(1, remove_rule(&m, 1)).await;
    let view = chain.node.store.view();
    assert!(matches!(
        enforce(&view, &m, &req).unwrap(),
        CasbinDecision::Deny(_)
    ));
    drop(view);

    // unknown models are not found, whoever asks
    chain
        .refused(
            1,
            add_rule(&model_id(1, "none"), 0, "p", &["a", "b", "c"]),
            Code::NotFound,
        )
        .await;
    chain.refused(1, remove_rule(&m, 1), Code::NotFound).await;

    // a taken slot, and the same rule in another slot, conflict
    chain
        .refused(
            1,
            add_rule(&m, 0, "p", &["x", "song", "access"]),
            Code::Conflict,
        )
        .await;
    let log = chain
        .refused(
            1,
            add_rule(&m, 5, "p", &["admin", "song", "access"]),
            Code::Conflict,
        )
        .await;
    assert!(log.contains("in slot 0"), "{log}");
}
