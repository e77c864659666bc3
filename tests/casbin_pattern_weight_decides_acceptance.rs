//! Review m4 (and the cheap-checks-first part of M1): whether a Casbin
//! pattern is accepted is decided by Stave's syntactic measure (the pattern
//! weight, `params.casbin.max_pattern_weight`), never by how the regex crate
//! counts compiled bytes. A pattern at the cap is accepted even though it
//! compiles to far more than the old 64 KiB compiled-size limit; one unit
//! over is refused with CASBIN_CAP_EXCEEDED and a stable message. A model's
//! total weight is capped too (`max_model_pattern_weight`), and removing a
//! rule gives its weight back. A taken slot is CONFLICT before any pattern
//! is looked at.

mod inproc;
use inproc::casbin::*;
use stave::keyspaces::casbin::measure::pattern_weight;
use stave::keyspaces::casbin::{enforce, CasbinDecision, CasbinParams, CasbinRequest};
use stave::tx::Code;

const MODEL: &str = "\
[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = r.sub == p.sub && regexMatch(r.obj, p.obj) && r.act == p.act
";

fn rule(sub: &str, pattern: &str) -> [String; 3] {
    [sub.into(), pattern.into(), "access".into()]
}

#[tokio::test(flavor = "multi_thread")]
async fn casbin_pattern_weight_decides_acceptance() {
    let params = CasbinParams::default();
    let cap = u64::from(params.max_pattern_weight);
    let at_cap = "[^a]{270}";
    let over = "[^a]{271}";
    assert_eq!(pattern_weight(at_cap).unwrap(), 8165);
    assert_eq!(pattern_weight(over).unwrap(), 8195);
    assert!((8165..8195).contains(&cap), "default cap {cap}");
    // what the old rule (compiled size under 64 KiB) refused
    assert!(regex::RegexBuilder::new(at_cap)
        .size_limit(64 * 1024)
        .build()
        .is_err());

    let mut chain = Chain::new().await;
    let m = model_id(1, "weights");
    chain.ok(1, add_model(&m, MODEL)).await;
    let r = rule("s0", at_cap);
    chain
        .ok(1, add_rule(&m, 0, "p", &[&r[0], &r[1], &r[2]]))
        .await;
    let view = chain.node.store.view();
    let req = CasbinRequest {
        sub: "s0",
        obj: &"b".repeat(300),
        act: "access",
        territory: "GB",
    };
    assert_eq!(enforce(&view, &m, &req).unwrap(), CasbinDecision::Allow);
    drop(view);

    let r = rule("s1", over);
    let log = chain
        .refused(
            1,
            add_rule(&m, 1, "p", &[&r[0], &r[1], &r[2]]),
            Code::CasbinCapExceeded,
        )
        .await;
    assert!(
        log.contains("casbin cap exceeded: regex pattern weight is 8195, over the limit of 8192"),
        "{log}"
    );

    // M1: a taken slot is CONFLICT before the over-weight pattern is parsed
    chain
        .refused(
            1,
            add_rule(&m, 0, "p", &[&r[0], &r[1], &r[2]]),
            Code::Conflict,
        )
        .await;

    // a matcher literal is measured the same way
    let literal = MODEL.replace(
        "regexMatch(r.obj, p.obj)",
        &format!("regexMatch(r.obj, \"{over}\")"),
    );
    let log = chain
        .refused(
            1,
            add_model(&model_id(1, "lit"), &literal),
            Code::CasbinCapExceeded,
        )
        .await;
    assert!(log.contains("regex pattern weight is 8195"), "{log}");

    // the model's total: 32 rules at the cap fit 262,144, a 33rd does not
    let total = params.max_model_pattern_weight;
    let fits = (total / 8165) as u32;
    assert_eq!(fits, 32);
    let mut actions = Vec::new();
    for i in 1..fits {
        let r = rule(&format!("s{i}"), at_cap);
        actions.push(add_rule(&m, i, "p", &[&r[0], &r[1], &r[2]]));
    }
    let (code, log) = chain.send_all(1, actions).await;
    assert_eq!(code, 0, "{log}");
    let r = rule("late", at_cap);
    let log = chain
        .refused(
            1,
            add_rule(&m, 40, "p", &[&r[0], &r[1], &r[2]]),
            Code::CasbinCapExceeded,
        )
        .await;
    assert!(
        log.contains("model pattern weight is 269445, over the limit of 262144"),
        "{log}"
    );
    // removing a rule gives its weight back
    chain.ok(1, remove_rule(&m, 3)).await;
    chain
        .ok(1, add_rule(&m, 40, "p", &[&r[0], &r[1], &r[2]]))
        .await;
}
