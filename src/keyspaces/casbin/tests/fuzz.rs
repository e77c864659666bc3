//! Fuzz property test: random model texts (garbage and grammar-built),
//! random rules through the real actions, random requests. Nothing panics,
//! every decision is deterministic (twice, cold cache, rebuilt state), and
//! where casbin-rs can evaluate the model it decides the same.

use casbin::CoreApi;
use proptest::prelude::*;

use super::*;

const REQ: [&str; 4] = ["sub", "obj", "act", "territory"];
const VALUES: [&str; 16] = [
    "alice",
    "bob",
    "admin",
    "editor",
    "song",
    "/res/1",
    "/res/:id",
    "/res/*",
    "a.*",
    "(",
    "read",
    "10.0.0.0/8",
    "10.1.2.3",
    "allow",
    "deny",
    "US",
];
const ROLES: [&str; 4] = ["alice", "bob", "admin", "editor"];

fn atom(r: Vec<&'static str>, p: Vec<&'static str>) -> impl Strategy<Value = String> {
    // one name in ten is undefined, so refusals stay covered
    let pick = |v: Vec<&'static str>| prop_oneof![9 => prop::sample::select(v), 1 => Just("zzz")];
    (
        pick(r),
        pick(p),
        0..9u8,
        prop::sample::select(VALUES.to_vec()),
    )
        .prop_map(|(a, b, k, v)| match k {
            0 => format!("r.{a} == p.{b}"),
            1 => format!("r.{a} != p.{b}"),
            2 => format!("g(r.{a}, p.{b})"),
            3 => format!("keyMatch(r.{a}, p.{b})"),
            4 => format!("keyMatch2(r.{a}, p.{b})"),
            5 => format!("regexMatch(r.{a}, p.{b})"),
            6 => format!("regexMatch(r.{a}, \"{v}\")"),
            7 => format!("ipMatch(r.{a}, p.{b})"),
            _ => format!("r.{a} == \"{v}\""),
        })
}

fn matcher(r: Vec<&'static str>, p: Vec<&'static str>) -> impl Strategy<Value = String> {
    atom(r, p).prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} && {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} || {b})")),
            inner.prop_map(|a| format!("!({a})")),
        ]
    })
}

fn model_text() -> impl Strategy<Value = String> {
    let effects = prop::sample::select(vec![
        "some(where (p.eft == allow))",
        "!some(where (p.eft == deny))",
        "some(where (p.eft == allow)) && !some(where (p.eft == deny))",
        "priority(p.eft) || deny",
    ]);
    let r = prop::sample::subsequence(REQ.to_vec(), 1..=4);
    let p = prop::sample::select(vec![
        vec!["sub", "obj", "act"],
        vec!["sub", "obj", "act", "eft"],
        vec!["sub", "obj"],
        vec!["sub", "eft"],
    ]);
    (r, p)
        .prop_flat_map(move |(r, p)| {
            let has_eft = p.contains(&"eft");
            let effect = if has_eft {
                effects.clone().boxed()
            } else {
                Just("some(where (p.eft == allow))").boxed()
            };
            let fields = (r.join(", "), p.join(", "));
            (
                Just(fields),
                prop::bool::weighted(0.8),
                effect,
                matcher(r, p),
            )
        })
        .prop_map(|((r, p), g, e, m)| {
            let g = if g {
                "[role_definition]\ng = _, _\n"
            } else {
                ""
            };
            format!(
                "[request_definition]\nr = {r}\n[policy_definition]\np = {p}\n{g}\
             [policy_effect]\ne = {e}\n[matchers]\nm = {m}\n"
            )
        })
}

#[derive(Debug, Clone)]
enum Op {
    Add(u32, bool, Vec<String>),
    Remove(u32),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let value = prop::sample::select(VALUES.to_vec()).prop_map(String::from);
    let role = prop::sample::select(ROLES.to_vec()).prop_map(String::from);
    let add_p =
        (0..12u32, prop::collection::vec(value, 1..5)).prop_map(|(i, v)| Op::Add(i, false, v));
    let add_g = (0..12u32, role.clone(), role).prop_map(|(i, a, b)| Op::Add(i, true, vec![a, b]));
    let op = prop_oneof![4 => add_p, 3 => add_g, 1 => (0..12u32).prop_map(Op::Remove)];
    prop::collection::vec(op, 0..16)
}

fn apply_ops(text: &str, ops: &[Op]) -> (MemState, String, bool) {
    let mut s = genesis();
    let m = id(8, "fuzz");
    let accepted = run(&mut s, owner(8), add_model(&m, text)).is_ok();
    for op in ops {
        let a = match op {
            Op::Add(i, g, v) => {
                let v: Vec<&str> = v.iter().map(String::as_str).collect();
                add_rule(&m, *i, if *g { "g" } else { "p" }, &v)
            }
            Op::Remove(i) => remove_rule(&m, *i),
        };
        let _ = run(&mut s, owner(8), a);
    }
    (s, m, accepted)
}

fn decide(s: &MemState, m: &str, r: &CasbinRequest<'_>) -> CasbinDecision {
    enforce(s, m, r).expect("no store fault in memory")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn garbage_model_texts_never_panic(text in "[\\[\\]a-z_=,.()!&|\" \n#;:/*0-9]{0,300}") {
        let p = CasbinParams::default();
        let _ = model::parse_model(&text, &p, false);
        let mut s = genesis();
        let _ = run(&mut s, owner(8), add_model(&id(8, "g"), &text));
    }

    #[test]
    fn random_models_and_rules_evaluate_deterministically_and_like_casbin(
        text in model_text(),
        ops in ops(),
        reqs in prop::collection::vec(
            (prop::sample::select(ROLES.to_vec()), prop::sample::select(VALUES.to_vec()),
             prop::sample::select(vec!["read", "write", "allow"]), prop::sample::select(vec!["US", "DE"])),
            1..6),
    ) {
        let (s, m, accepted) = apply_ops(&text, &ops);
        let (rebuilt, _, _) = apply_ops(&text, &ops);
        let casbin_rs = (accepted && !text.contains("ipMatch"))
            .then(|| adapter::enforcer(s.clone(), &ModelId::parse(&m).unwrap()).expect("casbin-rs loads the subset"));
        for (sub, obj, act, territory) in reqs {
            let r = CasbinRequest { sub, obj, act, territory };
            let warm = decide(&s, &m, &r);
            prop_assert_eq!(&warm, &decide(&s, &m, &r));
            cache::clear();
            prop_assert_eq!(&warm, &decide(&rebuilt, &m, &r));
            prop_assert_eq!(accepted, !matches!(warm, CasbinDecision::Failed(_)), "{:?}", warm);
            if let Some(e) = &casbin_rs {
                let model = model::parse_model(&text, &CasbinParams::default(), true).unwrap();
                let rvals: Vec<&str> = model.request.iter().map(|f| match f.as_str() {
                    "sub" => sub, "obj" => obj, "act" => act, _ => territory,
                }).collect();
                let theirs = e.enforce(rvals).expect("casbin-rs evaluates the subset");
                prop_assert_eq!(warm == CasbinDecision::Allow, theirs, "{}", text);
            }
        }
    }
}

/// The generators reach the interesting cases: accepted models, rules that
/// land, and both allow and deny decisions (otherwise the property above
/// would pass vacuously).
#[test]
fn the_fuzz_generators_reach_accepted_models_and_both_decisions() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut accepted, mut with_rules, mut allows, mut denies) = (0, 0, 0, 0);
    for _ in 0..300 {
        let text = model_text().new_tree(&mut runner).unwrap().current();
        let ops = ops().new_tree(&mut runner).unwrap().current();
        let (s, m, ok) = apply_ops(&text, &ops);
        if !ok {
            continue;
        }
        accepted += 1;
        let model = s
            .casbin_model(&ModelId::parse(&m).unwrap())
            .unwrap()
            .unwrap();
        with_rules += usize::from(!model.rule_indices.is_empty());
        for sub in ROLES {
            match decide(
                &s,
                &m,
                &CasbinRequest {
                    sub,
                    obj: "song",
                    act: "read",
                    territory: "US",
                },
            ) {
                CasbinDecision::Allow => allows += 1,
                CasbinDecision::Deny(_) => denies += 1,
                CasbinDecision::Failed(why) => panic!("accepted model failed: {why}"),
            }
        }
    }
    assert!(
        accepted >= 30,
        "only {accepted}/300 generated models were accepted"
    );
    assert!(
        with_rules >= 15,
        "only {with_rules} accepted models got rules"
    );
    assert!(
        allows >= 10 && denies >= 10,
        "allows {allows}, denies {denies}"
    );
}
