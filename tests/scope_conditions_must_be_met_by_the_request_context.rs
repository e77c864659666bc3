//! Rule 3 (scope): an entitlement's custom conditions are key/value pairs
//! that the request's context must hold, each with the same value, for the
//! entitlement to cover it; in `CheckAccess` and in `RecordGrant` alike. A
//! context that is not canonical (empty key, keys not strictly ascending)
//! is refused: INVALID_ARGUMENT over gRPC, INVALID_SCOPE in a tx.

mod inproc;
use inproc::rights::*;
use stave::grpc::rights::check_access;
use stave::keyspaces::grants::{by_key, RecordGrant};
use stave::proto::rights::{CheckAccessRequest, Condition, Role, Scope};
use stave::tx::{Action, Code};

fn ctx(pairs: &[(&str, &str)]) -> Vec<Condition> {
    pairs
        .iter()
        .map(|(k, v)| Condition {
            key: k.to_string(),
            value: v.to_string(),
        })
        .collect()
}

fn ask(w: &World, cid: &[u8], context: Vec<Condition>) -> Result<(bool, u32, String), tonic::Code> {
    let req = CheckAccessRequest {
        cid: label_cid(cid),
        consumer_pubkey: pk(CONSUMER).to_vec(),
        territory: "GB".into(),
        context,
        use_type: 0,
    };
    check_access(&w.node.store.view(), &req)
        .map(|r| (r.allowed, r.code, r.reason))
        .map_err(|s| s.code())
}

fn record_with(cid: &[u8], context: Vec<Condition>) -> Action {
    Action::RecordGrant(RecordGrant {
        cid: label_cid(cid),
        consumer_pubkey: pk(CONSUMER).to_vec(),
        territory: "GB".into(),
        context,
        count: 0,
        use_type: 0,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn scope_conditions_must_be_met_by_the_request_context() {
    let c = b"cid-cond";
    let mut w = World::published(c).await;
    let scope = Scope {
        territories: vec!["GB".into()],
        conditions: ctx(&[("platform", "web"), ("tier", "gold")]),
        ..Default::default()
    };
    let r = w
        .send(
            UPLOADER,
            vec![grant(c, CONSUMER, Role::Consumer, Some(scope))],
        )
        .await;
    assert_eq!(r.code, 0, "{r:?}");

    // no context, a partial one, a wrong value: denied, naming the condition
    let (ok, code, why) = ask(&w, c, vec![]).unwrap();
    assert!(!ok && code == Code::AccessDenied.value(), "{why}");
    assert!(why.contains("platform=web"), "{why}");
    let (ok, _, why) = ask(&w, c, ctx(&[("platform", "web")])).unwrap();
    assert!(!ok && why.contains("tier=gold"), "{why}");
    let (ok, _, _) = ask(&w, c, ctx(&[("platform", "app"), ("tier", "gold")])).unwrap();
    assert!(!ok);
    // every condition met, with an extra key: allowed
    let full = ctx(&[("device", "tv"), ("platform", "web"), ("tier", "gold")]);
    assert_eq!(ask(&w, c, full.clone()).map(|r| r.0), Ok(true));
    // a non-canonical context is refused, not decided
    let unsorted = ctx(&[("tier", "gold"), ("platform", "web")]);
    assert_eq!(
        ask(&w, c, unsorted.clone()),
        Err(tonic::Code::InvalidArgument)
    );
    assert_eq!(
        ask(&w, c, ctx(&[("", "x")])),
        Err(tonic::Code::InvalidArgument)
    );

    // RecordGrant applies the same decision inside FinalizeBlock
    let holder = VALIDATORS[0];
    let r = w.send(holder, vec![record_with(c, vec![])]).await;
    assert_eq!(r.code, Code::AccessDenied.value(), "{r:?}");
    let r = w.send(holder, vec![record_with(c, unsorted)]).await;
    assert_eq!(r.code, Code::InvalidScope.value(), "{r:?}");
    let grants = |w: &World| by_key(&w.node.store.view(), &pk(CONSUMER), b"", 10).unwrap();
    assert!(grants(&w).0.is_empty());
    let r = w.send(holder, vec![record_with(c, full)]).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(grants(&w).0.len(), 1);
}
