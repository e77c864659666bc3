//! casbin-rs unwraps bad regexes and IPs when it evaluates them. Stave
//! checks every rule value against the functions that will read it when the
//! rule is added, so such a rule never reaches state: CASBIN_INVALID_RULE
//! (CASBIN_CAP_EXCEEDED for a pattern over the pattern-weight cap).

mod inproc;
use inproc::casbin::*;
use stave::keyspaces::casbin::{enforce, CasbinDecision, CasbinRequest};
use stave::tx::Code;

const MODEL: &str = "\
[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act, eft
[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))
[matchers]
m = ipMatch(p.sub, \"10.0.0.0/8\") && regexMatch(r.obj, p.obj) && keyMatch2(r.act, p.act)
";

#[tokio::test(flavor = "multi_thread")]
async fn bad_regexes_ips_and_effects_are_refused_at_add_time() {
    let mut chain = Chain::new().await;
    let m = model_id(1, "net");
    chain.ok(1, add_model(&m, MODEL)).await;
    let bad = [
        ["10.1.1.1", "(", "/a/:id", "allow"],
        ["10.1.1.1", "[z-a]", "/a/:id", "allow"],
        ["10.1.1.1", "s.*", "/a/(", "allow"],
        ["not-an-ip", "s.*", "/a/:id", "allow"],
        ["10.1.1.1/8", "s.*", "/a/:id", "allow"],
        ["10.1.1.1", "s.*", "/a/:id", "maybe"],
    ];
    for values in bad {
        let log = chain
            .refused(1, add_rule(&m, 0, "p", &values), Code::CasbinInvalidRule)
            .await;
        assert!(log.contains("invalid casbin rule"), "{values:?}: {log}");
    }
    // wrong value count, undeclared g
    chain
        .refused(
            1,
            add_rule(&m, 0, "p", &["10.1.1.1", "s"]),
            Code::CasbinInvalidRule,
        )
        .await;
    chain
        .refused(
            1,
            add_rule(&m, 0, "g", &["a", "b"]),
            Code::CasbinInvalidRule,
        )
        .await;
    // caps
    let long = "s".repeat(300);
    chain
        .refused(
            1,
            add_rule(&m, 0, "p", &["10.1.1.1", &long, "/a", "allow"]),
            Code::CasbinCapExceeded,
        )
        .await;
    // a pattern too big for the syntactic measure (pattern weight)
    let log = chain
        .refused(
            1,
            add_rule(
                &m,
                0,
                "p",
                &["10.1.1.1", "x{1000}{1000}", "/a/:id", "allow"],
            ),
            Code::CasbinCapExceeded,
        )
        .await;
    assert!(log.contains("regex pattern weight"), "{log}");

    // good values land and evaluate
    chain
        .ok(
            1,
            add_rule(&m, 0, "p", &["10.1.1.1", "song-.*", "/play/:id", "allow"]),
        )
        .await;
    let view = chain.node.store.view();
    let yes = CasbinRequest {
        sub: "x",
        obj: "song-1",
        act: "/play/7",
        territory: "US",
    };
    let no = CasbinRequest {
        sub: "x",
        obj: "film-1",
        act: "/play/7",
        territory: "US",
    };
    assert_eq!(enforce(&view, &m, &yes).unwrap(), CasbinDecision::Allow);
    assert!(matches!(
        enforce(&view, &m, &no).unwrap(),
        CasbinDecision::Deny(_)
    ));
}
