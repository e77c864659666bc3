//! The model subset, rule checks and evaluator behaviour.

use super::*;
use crate::tx::Code;

fn model_with(matcher: &str, p: &str, effect: &str) -> String {
    format!(
        "[request_definition]\nr = sub, obj, act\n[policy_definition]\np = {p}\n\
         [role_definition]\ng = _, _\n[policy_effect]\ne = {effect}\n[matchers]\nm = {matcher}\n"
    )
}

const ALLOW: &str = "some(where (p.eft == allow))";

#[test]
fn the_documented_subset_is_accepted() {
    let p = CasbinParams::default();
    for m in [
        "g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act",
        "r.sub == p.sub && keyMatch(r.obj, p.obj) && (r.act == p.act || r.act == \"*\")",
        "regexMatch(r.obj, p.obj) && keyMatch2(r.act, p.act) && !(r.sub != p.sub)",
        "ipMatch(\"10.0.0.1\", p.obj) || !g(r.sub, \"admin\") && !!(r.sub == p.sub)",
    ] {
        model::parse_model(&model_with(m, "sub, obj, act", ALLOW), &p, false)
            .unwrap_or_else(|e| panic!("{m}: {e}"));
    }
}

#[test]
fn everything_outside_the_subset_is_refused_with_a_clear_message() {
    let p = CasbinParams::default();
    let cases = [
        ("1 / 0 == 1", "'1'"),
        ("r.sub == p.sub && 1/0", "'1'"),
        ("keyMatch4(r.obj, p.obj)", "not allowed"),
        ("eval(p.sub)", "not allowed"),
        ("r.obj in (\"a\", \"b\")", "in"),
        ("r.sub == p.sub; r.obj", "';'"),
        ("r.foo == p.sub", "r.foo is not defined"),
        ("!r.sub == p.sub", "must be followed"),
        ("regexMatch(p.obj, r.obj)", "second argument"),
        ("regexMatch(r.obj, \"(\")", "does not parse"),
        ("ipMatch(r.sub, \"10.0.0.300\")", "not an IP"),
        ("r.sub == \"p.sub\"", "field reference"),
        ("r.sub == p.sub ==", "after the end"),
        ("r.sub", "ends too early"),
    ];
    for (m, want) in cases {
        let e = model::parse_model(&model_with(m, "sub, obj, act", ALLOW), &p, false).expect_err(m);
        assert_eq!(e.code(), Code::CasbinInvalidModel, "{m}: {e}");
        assert!(e.to_string().contains(want), "{m}: {e}");
    }
    let nested = format!("{}r.sub == p.sub{}", "(".repeat(40), ")".repeat(40));
    let e =
        model::parse_model(&model_with(&nested, "sub, obj, act", ALLOW), &p, false).unwrap_err();
    assert!(e.to_string().contains("nests deeper"), "{e}");
    let wide = vec!["r.sub == p.sub"; 40].join(" || ");
    let e = model::parse_model(&model_with(&wide, "sub, obj, act", ALLOW), &p, false).unwrap_err();
    assert_eq!(e.code(), Code::CasbinCapExceeded, "{e}");
}

#[test]
fn bad_sections_effects_and_sizes_are_refused() {
    let p = CasbinParams::default();
    let m = "r.sub == p.sub";
    let texts = [
        RBAC.replace("[matchers]", "[extra]"),
        RBAC.replace("g = _, _", "g = _, _, _"),
        RBAC.replace("g = _, _", "g2 = _, _"),
        RBAC.replace("r = sub, obj, act", "r = sub, obj, ip"),
        RBAC.replace("p = sub, obj, act", "p = sub, sub"),
        RBAC.replace("[policy_effect]\ne = some(where (p.eft == allow))", ""),
        model_with(m, "sub, obj, act", "!some(where (p.eft == deny))"),
        model_with(m, "sub, obj, act, eft", "max(p.eft)"),
        RBAC.replace("p.act", "p.act # comment"),
        RBAC.replace("r.act == p.act", "r.act == \\\n p.act"),
        format!("{RBAC}\u{e9}"),
        format!("{RBAC}[matchers]\nm = r.sub == p.sub\n"),
    ];
    for t in &texts {
        let e = model::parse_model(t, &p, false).expect_err(t);
        assert_eq!(e.code(), Code::CasbinInvalidModel, "{t}: {e}");
    }
    let big = format!("{RBAC}{}", "#".repeat(5000));
    let e = model::parse_model(&big, &p, false).unwrap_err();
    assert_eq!(e.code(), Code::CasbinCapExceeded);
}

#[test]
fn rule_values_are_checked_against_the_functions_that_read_them() {
    let mut s = genesis();
    let text = model_with(
        "regexMatch(r.obj, p.obj) && ipMatch(p.sub, p.act) && keyMatch2(r.act, p.eft)",
        "sub, obj, act, eft",
        ALLOW,
    );
    // keyMatch2 reads eft here, but eft must be allow/deny first
    let m = id(1, "m");
    run(&mut s, owner(1), add_model(&m, &text)).unwrap();
    let refused = [
        (["10.0.0.1", "(", "10.0.0.0/8", "allow"], "regex"),
        (["not-an-ip", "a.*", "10.0.0.0/8", "allow"], "IP"),
        (["10.0.0.0/8", "a.*", "10.0.0.0/8", "allow"], "CIDR"),
        (["10.0.0.1", "a.*", "10.0.0.0/33", "allow"], "prefix"),
        (["10.0.0.1", "a.*", "10.0.0.0/8", "maybe"], "eft"),
    ];
    for (values, want) in refused {
        let e = run(&mut s, owner(1), add_rule(&m, 0, "p", &values)).unwrap_err();
        assert_eq!(e.code(), Code::CasbinInvalidRule, "{values:?}: {e}");
        assert!(e.to_string().contains(want), "{values:?}: {e}");
    }
    let huge = ["10.0.0.1", "a{99999}{99999}", "10.0.0.0/8", "allow"];
    let e = run(&mut s, owner(1), add_rule(&m, 0, "p", &huge)).unwrap_err();
    assert_eq!(e.code(), Code::CasbinCapExceeded, "{e}");
    assert!(e.to_string().contains("regex pattern weight"), "{e}");
    let e = run(&mut s, owner(1), add_rule(&m, 0, "p", &["a", "b"])).unwrap_err();
    assert_eq!(e.code(), Code::CasbinInvalidRule);
    let e = run(&mut s, owner(1), add_rule(&m, 0, "g", &["a", "b", "c"])).unwrap_err();
    assert_eq!(e.code(), Code::CasbinInvalidRule);
    let e = run(&mut s, owner(1), add_rule(&m, 0, "x", &["a"])).unwrap_err();
    assert_eq!(e.code(), Code::CasbinInvalidRule);
    let long = "x".repeat(300);
    let e = run(&mut s, owner(1), add_rule(&m, 0, "g", &[&long, "b"])).unwrap_err();
    assert_eq!(e.code(), Code::CasbinCapExceeded);
    let e = run(&mut s, owner(1), add_rule(&m, 0, "p", &["a"; 7])).unwrap_err();
    assert_eq!(e.code(), Code::CasbinCapExceeded);
    run(
        &mut s,
        owner(1),
        add_rule(&m, 0, "p", &["10.0.0.1", "a.*", "10.0.0.0/8", "allow"]),
    )
    .unwrap();
    assert_eq!(model_owner(&s, &m).unwrap(), Some(owner(1)));
}

#[test]
fn rbac_allows_through_roles_and_follows_rule_changes() {
    let mut s = genesis();
    let m = id(2, "rbac");
    run(&mut s, owner(2), add_model(&m, RBAC)).unwrap();
    run(
        &mut s,
        owner(2),
        add_rule(&m, 0, "p", &["admin", "song", "access"]),
    )
    .unwrap();
    run(&mut s, owner(2), add_rule(&m, 1, "g", &["alice", "admin"])).unwrap();
    assert_eq!(
        enforce(&s, &m, &req("alice", "song", "access")).unwrap(),
        CasbinDecision::Allow
    );
    assert!(matches!(
        enforce(&s, &m, &req("bob", "song", "access")).unwrap(),
        CasbinDecision::Deny(_)
    ));
    assert!(matches!(
        enforce(&s, &m, &req("alice", "song", "edit")).unwrap(),
        CasbinDecision::Deny(_)
    ));
    // the cache is keyed by content: removing the role link is seen at once
    run(&mut s, owner(2), remove_rule(&m, 1)).unwrap();
    assert!(matches!(
        enforce(&s, &m, &req("alice", "song", "access")).unwrap(),
        CasbinDecision::Deny(_)
    ));
    // duplicates and taken slots conflict; empty slots are not found
    run(&mut s, owner(2), add_rule(&m, 1, "g", &["alice", "admin"])).unwrap();
    assert_eq!(
        code(run(
            &mut s,
            owner(2),
            add_rule(&m, 5, "g", &["alice", "admin"])
        )),
        Code::Conflict
    );
    assert_eq!(
        code(run(
            &mut s,
            owner(2),
            add_rule(&m, 1, "g", &["bob", "admin"])
        )),
        Code::Conflict
    );
    assert_eq!(
        code(run(&mut s, owner(2), remove_rule(&m, 7))),
        Code::NotFound
    );
}

#[test]
fn effects_follow_casbin() {
    let mut s = genesis();
    let deny = model_with(
        "r.sub == p.sub && r.obj == p.obj",
        "sub, obj, eft",
        "!some(where (p.eft == deny))",
    );
    let prio = model_with(
        "r.sub == p.sub && r.obj == p.obj",
        "sub, obj, eft",
        "priority(p.eft) || deny",
    );
    let (d, pr) = (id(3, "deny"), id(3, "prio"));
    run(&mut s, owner(3), add_model(&d, &deny)).unwrap();
    run(&mut s, owner(3), add_model(&pr, &prio)).unwrap();
    run(
        &mut s,
        owner(3),
        add_rule(&d, 0, "p", &["bob", "song", "deny"]),
    )
    .unwrap();
    run(
        &mut s,
        owner(3),
        add_rule(&pr, 0, "p", &["bob", "song", "deny"]),
    )
    .unwrap();
    run(
        &mut s,
        owner(3),
        add_rule(&pr, 1, "p", &["bob", "song", "allow"]),
    )
    .unwrap();
    assert_eq!(
        enforce(&s, &d, &req("alice", "song", "x")).unwrap(),
        CasbinDecision::Allow
    );
    assert!(matches!(
        enforce(&s, &d, &req("bob", "song", "x")).unwrap(),
        CasbinDecision::Deny(_)
    ));
    assert!(matches!(
        enforce(&s, &pr, &req("bob", "song", "x")).unwrap(),
        CasbinDecision::Deny(_)
    ));
    assert!(matches!(
        enforce(&s, &pr, &req("eve", "song", "x")).unwrap(),
        CasbinDecision::Deny(_)
    ));
}

#[test]
fn a_spent_budget_an_unknown_model_and_a_panic_are_failed_decisions() {
    let mut s = genesis();
    let m = id(4, "big");
    run(&mut s, owner(4), add_model(&m, RBAC)).unwrap();
    for i in 0..200u32 {
        let (a, b) = (format!("r{i}"), format!("r{}", i + 1));
        run(&mut s, owner(4), add_rule(&m, i, "g", &[&a, &b])).unwrap();
    }
    let mut tight = Params::default();
    tight.casbin.max_eval_ops = 5;
    let mut ov = Overlay::new(&s);
    ov.put_params(&tight);
    let c = ov.into_changes();
    apply(&mut s, c);
    let d = enforce(&s, &m, &req("r0", "song", "access")).unwrap();
    assert!(
        matches!(&d, CasbinDecision::Failed(why) if why.contains("budget")),
        "{d:?}"
    );
    let d = enforce(&s, &id(9, "nope"), &req("a", "b", "c")).unwrap();
    assert!(matches!(d, CasbinDecision::Failed(_)));
    assert!(matches!(
        enforce(&s, "garbage", &req("a", "b", "c")).unwrap(),
        CasbinDecision::Failed(_)
    ));
    let caught = eval::guarded(|| -> u32 { panic!("boom") });
    assert_eq!(caught, Err("evaluation panicked: boom".to_string()));
}

#[test]
fn role_links_stop_after_nine_hops() {
    let mut s = genesis();
    let m = id(5, "chain");
    run(&mut s, owner(5), add_model(&m, RBAC)).unwrap();
    run(&mut s, owner(5), add_rule(&m, 0, "p", &["n9", "o", "a"])).unwrap();
    run(&mut s, owner(5), add_rule(&m, 1, "p", &["n10", "o", "a"])).unwrap();
    for i in 0..10u32 {
        let (a, b) = (format!("n{i}"), format!("n{}", i + 1));
        run(&mut s, owner(5), add_rule(&m, 10 + i, "g", &[&a, &b])).unwrap();
    }
    // n0 reaches n9 in 9 hops (allowed) but n10 only in 10
    assert_eq!(
        enforce(&s, &m, &req("n0", "o", "a")).unwrap(),
        CasbinDecision::Allow
    );
    assert_eq!(
        enforce(&s, &m, &req("n1", "o", "a")).unwrap(),
        CasbinDecision::Allow
    );
    run(&mut s, owner(5), remove_rule(&m, 0)).unwrap();
    assert!(matches!(
        enforce(&s, &m, &req("n0", "o", "a")).unwrap(),
        CasbinDecision::Deny(_)
    ));
}

/// Review M1: a regex call is charged by the pattern's weight times the
/// input, so a heavy pattern over a long request spends the operation
/// budget (a failed decision) where a light one does not. The charge is a
/// function of the pattern text, never of what the crate compiled.
#[test]
fn a_regex_call_is_charged_by_its_pattern_weight() {
    let mut s = genesis();
    let text = model_with(
        "regexMatch(r.obj, p.obj) && r.sub == p.sub",
        "sub, obj, act",
        ALLOW,
    );
    let (light, heavy) = (id(6, "light"), id(6, "heavy"));
    for (m, pattern) in [(&light, "^song-[0-9]+$"), (&heavy, "b{4000}[^b]")] {
        run(&mut s, owner(6), add_model(m, &text)).unwrap();
        run(
            &mut s,
            owner(6),
            add_rule(m, 0, "p", &["alice", pattern, "read"]),
        )
        .unwrap();
    }
    let obj = "b".repeat(1024);
    let heavy_cost = eval::call_cost(obj.len(), measure::pattern_weight("b{4000}[^b]").unwrap());
    assert!(heavy_cost > 10_000, "{heavy_cost}");
    assert!(eval::call_cost(obj.len(), 0) < 100);
    let mut tight = Params::default();
    tight.casbin.max_eval_ops = 10_000;
    let mut ov = Overlay::new(&s);
    ov.put_params(&tight);
    let c = ov.into_changes();
    apply(&mut s, c);
    let d = enforce(&s, &heavy, &req("alice", &obj, "read")).unwrap();
    assert!(
        matches!(&d, CasbinDecision::Failed(why) if why.contains("budget")),
        "{d:?}"
    );
    let d = enforce(&s, &light, &req("alice", &obj, "read")).unwrap();
    assert!(matches!(d, CasbinDecision::Deny(_)), "{d:?}");
}
