//! Models and rules are readable through ABCI query paths (with proofs) and
//! through the CasbinQueryService, whose Rules can read one subject through
//! the rules_by_sub index.

mod inproc;
use inproc::casbin::*;
use prost::Message;
use stave::grpc::casbin::CasbinQueryServiceImpl;
use stave::proto::casbin::casbin_query_service_server::CasbinQueryService;
use stave::proto::casbin::{self as pb, EnforceRequest, ModelRequest, RulesRequest};
use tonic::Request;

#[tokio::test(flavor = "multi_thread")]
async fn abci_paths_and_grpc_read_models_and_rules() {
    let mut chain = Chain::new().await;
    let m = model_id(1, "rbac");
    chain.ok(1, add_model(&m, RBAC)).await;
    chain
        .ok(1, add_rule(&m, 4, "p", &["admin", "song", "access"]))
        .await;
    chain.ok(1, add_rule(&m, 2, "g", &["alice", "admin"])).await;
    chain
        .ok(1, add_rule(&m, 9, "p", &["alice", "demo", "access"]))
        .await;

    let q = chain
        .node
        .query(&format!("/casbin/models/{m}"), &[], 0, true)
        .await;
    assert!(q.code.is_ok(), "{}", q.log);
    assert!(q.proof.is_some());
    let model = pb::CasbinModel::decode(q.value.as_ref()).unwrap();
    assert_eq!(
        (model.model_id.as_str(), model.rule_indices.clone()),
        (m.as_str(), vec![2, 4, 9])
    );
    let q = chain
        .node
        .query(&format!("/casbin/rules/{m}/4"), &[], 0, false)
        .await;
    let rule = pb::CasbinRule::decode(q.value.as_ref()).unwrap();
    assert_eq!(
        (rule.ptype.as_str(), rule.v0.as_str(), rule.v2.as_str()),
        ("p", "admin", "access")
    );
    let q = chain
        .node
        .query(&format!("/casbin/rules/{m}/x"), &[], 0, false)
        .await;
    assert!(q.code.is_err());

    let svc = CasbinQueryServiceImpl {
        store: chain.node.store.clone(),
    };
    let r = svc
        .model(Request::new(ModelRequest {
            model_id: m.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(r.found && r.model.unwrap().perm_model == RBAC);
    let all = RulesRequest {
        model_id: m.clone(),
        limit: 2,
        ..Default::default()
    };
    let r = svc
        .rules(Request::new(all.clone()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        r.rules.iter().map(|x| x.rule_index).collect::<Vec<_>>(),
        vec![2, 4]
    );
    assert!(r.has_more);
    let next = RulesRequest {
        start_after: r.next_index,
        has_start_after: true,
        ..all
    };
    let r = svc.rules(Request::new(next)).await.unwrap().into_inner();
    assert_eq!(
        r.rules.iter().map(|x| x.rule_index).collect::<Vec<_>>(),
        vec![9]
    );
    assert!(!r.has_more);
    let alice = RulesRequest {
        model_id: m.clone(),
        subject: "alice".into(),
        ..Default::default()
    };
    let r = svc.rules(Request::new(alice)).await.unwrap().into_inner();
    assert_eq!(
        r.rules.iter().map(|x| x.rule_index).collect::<Vec<_>>(),
        vec![2, 9]
    );

    let ask = |sub: &str| EnforceRequest {
        model_id: m.clone(),
        sub: sub.into(),
        obj: "song".into(),
        act: "access".into(),
        territory: "US".into(),
    };
    let r = svc
        .enforce(Request::new(ask("alice")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.decision, "allow");
    let r = svc
        .enforce(Request::new(ask("bob")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.decision, "deny");
    let missing = svc
        .model(Request::new(ModelRequest {
            model_id: "bad".into(),
        }))
        .await;
    assert!(missing.is_err());
}
