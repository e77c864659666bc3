//! Review B1 at its 512 models, with byte budgets scaled down (4 and 2 MiB
//! for 256 and 32; BENCHMARKS (f) has peak RSS at the real budgets): one
//! account fills the models with patterns near
//! the pattern-weight cap, read by both `regexMatch` and `keyMatch2`, and
//! has each evaluated. The consensus cache's accounted bytes never exceed
//! its budget (least recently used entries go first; a model bigger than the
//! whole budget is evaluated and not kept). Public `Enforce` calls over a
//! real gRPC socket are answered alike, but never read or fill the
//! consensus cache: they go through the query cache, which keeps its own
//! (smaller) budget.

mod inproc;
use inproc::casbin::*;
use stave::grpc::casbin::CasbinQueryServiceImpl;
use stave::keyspaces::casbin::{cache, enforce, eval::Compiled, CacheUse, CasbinDecision};
use stave::keyspaces::casbin::{CasbinParams, CasbinRead, CasbinRequest, ModelId};
use stave::proto::casbin::casbin_query_service_client::CasbinQueryServiceClient;
use stave::proto::casbin::casbin_query_service_server::CasbinQueryServiceServer;
use stave::proto::casbin::EnforceRequest;
use stave::tx::Action;

const MODELS: usize = 512;
const CONSENSUS_BUDGET: usize = 4 << 20;
const QUERY_BUDGET: usize = 2 << 20;
const ATTACKER: u8 = 7;

/// Six fields, each read as a regex and as a keyMatch2 pattern.
fn attacker_model() -> String {
    let fields = ["a", "b", "c", "d", "e", "f"];
    let calls: Vec<String> = fields
        .iter()
        .flat_map(|f| {
            [
                format!("regexMatch(r.obj, p.{f})"),
                format!("keyMatch2(r.obj, p.{f})"),
            ]
        })
        .collect();
    format!(
        "[request_definition]\nr = sub, obj, act\n[policy_definition]\np = a, b, c, d, e, f\n\
         [policy_effect]\ne = some(where (p.eft == allow))\n[matchers]\nm = {}\n",
        calls.join(" || ")
    )
}

/// A model with `rules` rules of six Unicode-class patterns each, in one tx.
fn attacker_actions(id: &str, rules: u32) -> Vec<Action> {
    let mut actions = vec![add_model(id, &attacker_model())];
    for j in 0..rules {
        let values: Vec<String> = (0..6)
            .map(|k| format!("[^a]{{{}}}", 24 + k + 6 * j))
            .collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        actions.push(add_rule(id, j, "p", &refs));
    }
    actions
}

fn ask(obj: &str) -> CasbinRequest<'_> {
    CasbinRequest {
        sub: "anyone",
        obj,
        act: "access",
        territory: "GB",
    }
}

fn consensus_state() -> (usize, usize) {
    let s = cache::stats(CacheUse::Consensus);
    (s.bytes, s.entries)
}

#[tokio::test(flavor = "multi_thread")]
async fn casbin_cache_stays_within_its_byte_budget() {
    cache::set_budget(CacheUse::Consensus, CONSENSUS_BUDGET);
    cache::set_budget(CacheUse::Query, QUERY_BUDGET);
    let mut chain = Chain::new().await;
    let mut ids: Vec<String> = (0..MODELS)
        .map(|i| model_id(ATTACKER, &format!("m{i}")))
        .collect();
    for id in &ids {
        let (code, log) = chain.send_all(ATTACKER, attacker_actions(id, 2)).await;
        assert_eq!(code, 0, "{log}");
    }
    let big = model_id(ATTACKER, "big");
    let (code, log) = chain.send_all(ATTACKER, attacker_actions(&big, 10)).await;
    assert_eq!(code, 0, "{log}");

    // the big model alone is larger than the whole budget
    let view = chain.node.store.view();
    let stored = view
        .casbin_model(&ModelId::parse(&big).unwrap())
        .unwrap()
        .unwrap();
    let rules = view.casbin_rules(&stored).unwrap();
    let built = Compiled::build(&stored.perm_model, &rules, &CasbinParams::default()).unwrap();
    assert!(
        built.memory_usage() > CONSENSUS_BUDGET,
        "{}",
        built.memory_usage()
    );
    drop(built);

    // consensus path: every model evaluated, the budget never exceeded
    let long = "x".repeat(80);
    let mut most = 0;
    for id in &ids {
        assert_eq!(
            enforce(&view, id, &ask(&long)).unwrap(),
            CasbinDecision::Allow
        );
        assert!(matches!(
            enforce(&view, id, &ask("a")).unwrap(),
            CasbinDecision::Deny(_)
        ));
        let (bytes, entries) = consensus_state();
        assert!(bytes <= CONSENSUS_BUDGET, "{bytes} bytes accounted");
        most = most.max(entries);
    }
    assert!(most >= 2, "the cache keeps models ({most})");
    assert!(
        cache::entries(CacheUse::Consensus) < MODELS,
        "the byte budget evicts (count cap alone would keep all {MODELS})"
    );
    let before = consensus_state();
    assert_eq!(
        enforce(&view, &big, &ask(&long)).unwrap(),
        CasbinDecision::Allow
    );
    let after = consensus_state();
    assert!(after.0 <= CONSENSUS_BUDGET, "{after:?}");
    assert_eq!(after.1, before.1, "the oversized model was not cached");
    drop(view);

    // query path: real gRPC; the same answers, the consensus cache untouched
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let svc = CasbinQueryServiceServer::new(CasbinQueryServiceImpl {
        store: chain.node.store.clone(),
    });
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(svc)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let mut client = CasbinQueryServiceClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let before = cache::stats(CacheUse::Consensus);
    ids.push(big);
    for id in &ids {
        let r = client
            .enforce(EnforceRequest {
                model_id: id.clone(),
                sub: "anyone".into(),
                obj: long.clone(),
                act: "access".into(),
                territory: "GB".into(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.decision, "allow", "{id}: {}", r.reason);
        let q = cache::accounted_bytes(CacheUse::Query);
        assert!(q <= QUERY_BUDGET, "{q} query bytes accounted");
        let now = cache::stats(CacheUse::Consensus);
        assert_eq!(
            now, before,
            "{id}: a query read or filled the consensus cache"
        );
    }
    assert!(cache::entries(CacheUse::Query) >= 1);
}
