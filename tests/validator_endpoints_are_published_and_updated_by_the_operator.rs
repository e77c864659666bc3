//! Every validator record publishes its public `client_endpoint` beside its
//! peer `address`, so a client finds every validator's API from chain state
//! (`GovernanceService.Validators`): genesis sets it, `ApplyValidator` sets
//! it, and `UpdateValidatorEndpoints` signed by the operator key of an
//! ACTIVE, CANDIDATE or UNBONDING record replaces both. Anyone else gets
//! `NOT_VALIDATOR_OPERATOR` (212) and changes nothing but its nonce; a
//! malformed endpoint gets `INVALID_ARGUMENT` (12) from the stateless checks
//! (CheckTx, and FinalizeBlock should one reach a block) and changes nothing
//! at all. A new peer address is on the peer allow-list once committed.

mod inproc;
use std::net::IpAddr;

use inproc::governance::*;
use inproc::*;
use stave::grpc::governance::GovernanceServiceImpl;
use stave::net::allow::AllowList;
use stave::proto::genesis as gen;
use stave::proto::governance as gpb;
use stave::proto::governance::governance_service_server::GovernanceService;
use stave::tx::Code;
use tonic::Request;

/// The endpoint fields of `op`'s record, read through the gRPC query
/// service: (status, address, client_endpoint).
async fn published(c: &Chain, op: u8) -> Option<(String, String, String)> {
    let svc = GovernanceServiceImpl {
        store: c.node.store.clone(),
    };
    let r = svc
        .validator(Request::new(gpb::ValidatorRequest {
            operator_key: pubkey(op).to_vec(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.height, c.height);
    let v = r.validator.filter(|_| r.found)?;
    let k: gen::GenesisValidator = v.record.unwrap().validator.unwrap();
    Some((v.status, k.address, k.client_endpoint))
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn genesis_and_applications_publish_client_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let svc = GovernanceServiceImpl {
        store: c.node.store.clone(),
    };
    let all = svc
        .validators(Request::new(gpb::ValidatorsRequest::default()))
        .await
        .unwrap()
        .into_inner();
    let mut listed: Vec<(Vec<u8>, String)> = all
        .validators
        .iter()
        .map(|v| {
            let k = v.record.clone().unwrap().validator.unwrap();
            (k.operator_key, k.client_endpoint)
        })
        .collect();
    listed.sort();
    let mut want: Vec<(Vec<u8>, String)> = (0..4)
        .map(|i| (pubkey(op_seed(i)).to_vec(), client_endpoint(i)))
        .collect();
    want.sort();
    assert_eq!(listed, want, "every genesis validator's client endpoint");

    assert_eq!(c.code(110, apply(110)).await, 0);
    assert_eq!(
        published(&c, 110).await,
        Some((
            "CANDIDATE".into(),
            "127.0.0.1:27000".into(),
            "node110.example:9090".into()
        ))
    );
    // an application may publish none
    let mut a = application(111);
    a.client_endpoint = String::new();
    let apply_none = stave::tx::Action::ApplyValidator(a);
    assert_eq!(c.code(111, apply_none).await, 0);
    assert_eq!(published(&c, 111).await.unwrap().2, "");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_replaces_both_endpoints_and_the_allow_list_follows() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let op = op_seed(0);
    let allow = AllowList::default();
    allow.refresh(&c.node.store).unwrap();
    assert!(!allow.contains(ip("127.0.0.9")));

    let r = c
        .send(op, vec![endpoints("127.0.0.9:26000", "api.example:443")])
        .await;
    assert_eq!(r.tx_results[0].code.value(), 0, "{}", r.tx_results[0].log);
    assert!(has_event(&r, "validator.endpoints_updated"));
    assert_eq!(
        published(&c, op).await,
        Some((
            "ACTIVE".into(),
            "127.0.0.9:26000".into(),
            "api.example:443".into()
        ))
    );
    allow.refresh(&c.node.store).unwrap();
    assert!(allow.contains(ip("127.0.0.9")), "the new peer address");

    // an empty client endpoint withdraws the published one
    assert_eq!(c.code(op, endpoints("127.0.0.9:26000", "")).await, 0);
    assert_eq!(published(&c, op).await.unwrap().2, "");

    // a CANDIDATE updates its own record too; it is not allow-listed
    assert_eq!(c.code(110, apply(110)).await, 0);
    assert_eq!(
        c.code(110, endpoints("127.0.0.10:1", "127.0.0.10:2")).await,
        0
    );
    assert_eq!(
        published(&c, 110).await,
        Some((
            "CANDIDATE".into(),
            "127.0.0.10:1".into(),
            "127.0.0.10:2".into()
        ))
    );
    allow.refresh(&c.node.store).unwrap();
    assert!(!allow.contains(ip("127.0.0.10")));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unbonding_validator_may_update_and_a_removed_one_may_not() {
    let dir = tempfile::tempdir().unwrap();
    let gov = serde_json::json!({ "unbonding_blocks": 2 });
    let mut c = Chain::start(Node::open(dir.path()), 4, gov).await;
    let op = op_seed(3);
    assert_eq!(c.code(op, leave()).await, 0);
    assert_eq!(c.status(op), "UNBONDING");
    assert_eq!(
        c.code(op, endpoints("127.0.0.11:1", "127.0.0.11:2")).await,
        0
    );
    assert_eq!(published(&c, op).await.unwrap().1, "127.0.0.11:1");
    for _ in 0..4 {
        c.empty().await;
    }
    assert_eq!(c.status(op), "REMOVED", "the record stays, REMOVED");
    let before = state_dump_but_accounts(&c.node.store);
    let r = c.send(op, vec![endpoints("127.0.0.12:1", "")]).await;
    assert_eq!(
        r.tx_results[0].code.value(),
        Code::NotValidatorOperator.value(),
        "{}",
        r.tx_results[0].log
    );
    assert!(
        r.tx_results[0].log.contains("REMOVED"),
        "{}",
        r.tx_results[0].log
    );
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stranger_or_a_malformed_endpoint_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Chain::start(Node::open(dir.path()), 4, serde_json::json!({})).await;
    let stranger = 150;
    let before = state_dump_but_accounts(&c.node.store);
    let r = c
        .send(stranger, vec![endpoints("127.0.0.13:1", "127.0.0.13:2")])
        .await;
    assert_eq!(
        r.tx_results[0].code.value(),
        Code::NotValidatorOperator.value(),
        "{}",
        r.tx_results[0].log
    );
    assert_eq!(state_dump_but_accounts(&c.node.store), before);
    let nonce =
        stave::keyspaces::accounts::AccountsRead::account(&c.node.store.view(), &pubkey(stranger))
            .unwrap()
            .map(|a| a.nonce);
    assert_eq!(nonce, Some(1), "the failed tx consumed its nonce");

    let op = op_seed(1);
    let long = format!("{}:1", "h".repeat(300));
    let cases = [
        ("empty address", endpoints("", "127.0.0.1:1")),
        ("address without a port", endpoints("127.0.0.1", "")),
        ("address over max_address_bytes", endpoints(&long, "")),
        (
            "client endpoint without a port",
            endpoints("127.0.0.1:1", "h"),
        ),
        (
            "client endpoint with port 0",
            endpoints("127.0.0.1:1", "h:0"),
        ),
        (
            "client endpoint with a space",
            endpoints("127.0.0.1:1", "a b:1"),
        ),
        (
            "client endpoint over the cap",
            endpoints("127.0.0.1:1", &long),
        ),
    ];
    for (name, action) in cases {
        let check = c.node.check_tx(signed(op, 0, vec![action]), false).await;
        assert_eq!(
            check.code.value(),
            Code::InvalidArgument.value(),
            "{name} in CheckTx: {}",
            check.log
        );
    }
    // an ApplyValidator with a malformed client endpoint too
    let mut a = application(110);
    a.client_endpoint = "no-port".into();
    let check = c
        .node
        .check_tx(
            signed(110, 0, vec![stave::tx::Action::ApplyValidator(a)]),
            false,
        )
        .await;
    assert_eq!(
        check.code.value(),
        Code::InvalidArgument.value(),
        "{}",
        check.log
    );
    assert!(check.log.contains("client_endpoint"), "{}", check.log);
    // in a block (block sync skips CheckTx): refused, not even the nonce used
    let everything = state_dump(&c.node.store);
    let r = c.send(op, vec![endpoints("127.0.0.1:1", "h:0")]).await;
    assert_eq!(r.tx_results[0].code.value(), Code::InvalidArgument.value());
    assert_eq!(state_dump(&c.node.store), everything);
    assert_eq!(
        published(&c, op).await.unwrap().2,
        client_endpoint(1),
        "unchanged"
    );
}
