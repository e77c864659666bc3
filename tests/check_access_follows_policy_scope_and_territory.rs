//! Rule 8: `CheckAccess` at the latest committed height combines the policy
//! type, the entitlement and its scope (territory, time window), and the
//! release's territories; PROGRAMMABLE is a distinct "unsupported policy
//! type" error; ROLE_BASED without an evaluable Casbin model is a deny with
//! CASBIN_EVALUATION_FAILED.

mod inproc;
use inproc::rights::*;
use stave::grpc::rights::check_access;
use stave::proto::rights::{CheckAccessRequest, PolicyType as T, Role};
use stave::tx::Code;

fn ask(w: &World, cid: &[u8], who: u8, territory: &str) -> Result<(bool, u32), tonic::Code> {
    let req = CheckAccessRequest {
        cid: label_cid(cid),
        consumer_pubkey: pk(who).to_vec(),
        territory: territory.into(),
        context: Vec::new(),
        use_type: 0,
    };
    let view = w.node.store.view();
    check_access(&view, &req)
        .map(|r| (r.allowed, r.code))
        .map_err(|s| s.code())
}

#[tokio::test(flavor = "multi_thread")]
async fn check_access_follows_policy_scope_and_territory() {
    let c = b"cid-1";
    let mut w = World::published(c).await;
    assert_eq!(
        ask(&w, b"nope", CONSUMER, "GB"),
        Ok((false, Code::UnknownCid.value()))
    );
    assert_eq!(
        ask(&w, c, CONSUMER, "GB"),
        Ok((false, Code::AccessDenied.value()))
    );
    assert_eq!(ask(&w, c, UPLOADER, "GB"), Ok((true, 0)), "the OWNER");
    assert_eq!(
        ask(&w, c, CONSUMER, "XX"),
        Err(tonic::Code::InvalidArgument)
    );

    w.send(
        UPLOADER,
        vec![grant(c, CONSUMER, Role::Consumer, territories(&["GB"]))],
    )
    .await
    .ok();
    assert_eq!(ask(&w, c, CONSUMER, "GB"), Ok((true, 0)));
    assert_eq!(
        ask(&w, c, CONSUMER, "US"),
        Ok((false, Code::AccessDenied.value()))
    );

    w.send(UPLOADER, vec![policy(c, T::Public, "", b"")])
        .await
        .ok();
    assert_eq!(ask(&w, c, STRANGER, "US"), Ok((true, 0)));

    w.send(UPLOADER, vec![policy(c, T::Programmable, "", b"s")])
        .await
        .ok();
    assert_eq!(ask(&w, c, STRANGER, "US"), Err(tonic::Code::Unimplemented));
    assert_eq!(ask(&w, c, CONSUMER, "GB"), Err(tonic::Code::Unimplemented));

    // a release whose only deal is in FR: non-owners elsewhere get NO_DEAL
    let mut w = World::new().await;
    let c2 = b"cid-2";
    w.send(VALIDATORS[0], vec![upload_action(UPLOADER, manifest(c2))])
        .await
        .ok();
    let mut m = release_of(c2);
    m.release_deal[0].deal[0]
        .deal_terms
        .as_mut()
        .unwrap()
        .territory_code = vec!["FR".into()];
    w.send(UPLOADER, vec![publish_msg(m)]).await.ok();
    w.send(UPLOADER, vec![grant(c2, CONSUMER, Role::Consumer, None)])
        .await
        .ok();
    assert_eq!(ask(&w, c2, CONSUMER, "FR"), Ok((true, 0)));
    assert_eq!(
        ask(&w, c2, CONSUMER, "DE"),
        Ok((false, Code::NoDeal.value()))
    );
    assert_eq!(ask(&w, c2, UPLOADER, "DE"), Ok((true, 0)));
}
