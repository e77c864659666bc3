//! Fuzz case `casbin`: the Casbin model parser, rule checks, the pattern
//! measure and the bounded evaluator, called directly (not through
//! `eval::guarded`), so a panic anywhere is seen.
//!
//! Oracles: nothing panics; `parse_model` with `compile` and without agrees
//! (a model accepted by the check compiles, with the same weight and field
//! kinds), and `AddCasbinModel::check_stateless` agrees with it;
//! `AddCasbinRule`/`RemoveCasbinRule::check_stateless` accept exactly the
//! index, ptype and shape the rule checks accept; a rule accepted by
//! `check_against` compiles, and its terms weigh what the check measured;
//! an accepted model with its accepted rules builds; every decision is the
//! same twice, on a model rebuilt from scratch, and with a budget of exactly
//! the ops it used, uses at most its budget, runs out one op short, and is
//! never `Invalid`; a pattern the measure accepts compiles.
//!
//! Input: a mode byte (`% 3`). 0: the rest is a model text, evaluated with
//! no rules on fixed requests. 1: choices (one byte each, read with
//! `Unstructured::int_in_range`) build a model from the grammar of
//! `keyspaces/casbin/tests/fuzz.rs`, then up to 12 rule operations and 1..=6
//! requests. 2: a kinds byte, then one pattern or value: the valid UTF-8
//! prefix of the next 128 bytes.

use std::collections::BTreeMap;

use arbitrary::Unstructured;

use crate::keyspaces::casbin::eval::{Compiled, EvalError};
use crate::keyspaces::casbin::measure::pattern_weight;
use crate::keyspaces::casbin::model::{parse_model, ModelDef, EXAMPLE_RBAC};
use crate::keyspaces::casbin::rules::{check_against, check_shape, compile_policy};
use crate::keyspaces::casbin::term::{self, IpPattern, Kinds, Term};
use crate::keyspaces::casbin::{
    AddCasbinModel, AddCasbinRule, CasbinError, CasbinParams, CasbinRequest, PType,
    RemoveCasbinRule, Rule,
};
use crate::keyspaces::params::Params;

const REQ: [&str; 4] = ["sub", "obj", "act", "territory"];
const POLICIES: [&[&str]; 4] = [
    &["sub", "obj", "act"],
    &["sub", "obj", "act", "eft"],
    &["sub", "obj"],
    &["sub", "eft"],
];
const EFFECTS: [&str; 4] = [
    "some(where (p.eft == allow))",
    "!some(where (p.eft == deny))",
    "some(where (p.eft == allow)) && !some(where (p.eft == deny))",
    "priority(p.eft) || deny",
];
#[rustfmt::skip]
const VALUES: [&str; 16] = [
    "alice", "bob", "admin", "editor", "song", "/res/1", "/res/:id", "/res/*", "a.*", "(",
    "read", "10.0.0.0/8", "10.1.2.3", "allow", "deny", "US",
];
const ROLES: [&str; 4] = ["alice", "bob", "admin", "editor"];
const ACTS: [&str; 3] = ["read", "write", "allow"];
const TERRITORIES: [&str; 2] = ["US", "DE"];

fn pick(u: &mut Unstructured<'_>, n: usize) -> usize {
    u.int_in_range(0..=n.saturating_sub(1)).unwrap_or(0)
}

/// Up to `max` bytes (`max` < 256) as text, length first.
fn text(u: &mut Unstructured<'_>, max: usize) -> String {
    let n = pick(u, max + 1).min(u.len());
    String::from_utf8_lossy(u.bytes(n).unwrap_or_default()).into_owned()
}

/// An entry of `table`, or (one past its end) raw text.
fn choose(u: &mut Unstructured<'_>, table: &[&str], raw_max: usize) -> String {
    match table.get(pick(u, table.len() + 1)) {
        Some(s) => s.to_string(),
        None => text(u, raw_max),
    }
}

fn model_id() -> String {
    format!("{}/fuzz", "08".repeat(32))
}

/// What an input reached; the tests check that the seeds go deep.
#[derive(Debug, Default)]
#[cfg_attr(not(test), allow(dead_code))]
struct Reach {
    evaluated: bool,
    rules: usize,
    allows: usize,
    denies: usize,
}

/// Runs the case on `data`.
pub fn casbin_case(data: &[u8]) {
    run(data);
}

fn run(data: &[u8]) -> Reach {
    let p = Params::default();
    let mut u = Unstructured::new(data);
    match pick(&mut u, 3) {
        0 => {
            let rest = &data[data.len().min(1)..];
            let text = String::from_utf8_lossy(&rest[..rest.len().min(4200)]);
            let reqs = [
                ["alice", "song", "read", "US"],
                ["bob", "/res/1", "write", "DE"],
            ]
            .map(|r| r.map(String::from));
            match check_model(&text, &p) {
                Some(_) => evaluate(&text, &BTreeMap::new(), &reqs, &p.casbin),
                None => Reach::default(),
            }
        }
        1 => grammar_case(&mut u, &p),
        _ => {
            pattern_case(&mut u, &p.casbin);
            Reach::default()
        }
    }
}

/// Parses `text` checking only and compiling; both must agree.
fn check_model(text: &str, p: &Params) -> Option<ModelDef> {
    let checked = parse_model(text, &p.casbin, false);
    let compiled = parse_model(text, &p.casbin, true);
    let add = AddCasbinModel {
        model_id: model_id(),
        perm_model: text.to_string(),
    };
    let stateless = add.check_stateless(p).is_ok();
    assert_eq!(
        stateless,
        checked.is_ok(),
        "AddCasbinModel check vs parse_model: {text:?}"
    );
    let key = |d: &ModelDef| {
        let (r, p, k) = (d.request.clone(), d.policy.clone(), d.kinds.clone());
        (d.weight, r, p, k, d.eft, d.has_roles, d.effect)
    };
    match (checked, compiled) {
        (Ok(a), Ok(b)) => {
            assert_eq!(key(&a), key(&b), "check vs compile of {text:?}");
            Some(b)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "check and compile refuse {text:?} differently");
            None
        }
        (Ok(_), Err(e)) => panic!("a model the check accepts does not compile: {e}: {text:?}"),
        (Err(e), Ok(_)) => panic!("a model that compiles is refused by the check: {e}: {text:?}"),
    }
}

fn grammar_case(u: &mut Unstructured<'_>, p: &Params) -> Reach {
    let text = grammar_model(u);
    let def = check_model(&text, p);
    let mut stored = BTreeMap::new();
    let mut total = def.as_ref().map_or(0, |d| d.weight);
    for _ in 0..pick(u, 13) {
        rule_op(u, def.as_ref(), p, &mut stored, &mut total);
    }
    let reqs: Vec<[String; 4]> = (0..=pick(u, 6))
        .map(|_| {
            let sub = choose(u, &ROLES, 24);
            let obj = choose(u, &VALUES, 24);
            [sub, obj, choose(u, &ACTS, 24), choose(u, &TERRITORIES, 8)]
        })
        .collect();
    match def {
        Some(d) if d.weight <= p.casbin.max_model_pattern_weight => {
            evaluate(&text, &stored, &reqs, &p.casbin)
        }
        _ => Reach::default(),
    }
}

fn grammar_model(u: &mut Unstructured<'_>) -> String {
    let mask = pick(u, 16);
    let r: Vec<&str> = (0..4)
        .filter(|i| mask & (1 << i) != 0)
        .map(|i| REQ[i])
        .collect();
    let pol = POLICIES[pick(u, POLICIES.len())];
    let roles = pick(u, 5) != 0;
    let x = pick(u, 8);
    let effect = match (pol.contains(&"eft"), x) {
        (true, x) => EFFECTS[x % 4],
        (false, 7) => EFFECTS[1],
        (false, _) => EFFECTS[0],
    };
    let m = expr(u, 0, &r, pol);
    let g = if roles {
        "[role_definition]\ng = _, _\n"
    } else {
        ""
    };
    let (r, pol) = (r.join(", "), pol.join(", "));
    let mut out = format!(
        "[request_definition]\nr = {r}\n[policy_definition]\np = {pol}\n{g}\
         [policy_effect]\ne = {effect}\n[matchers]\nm = {m}\n"
    );
    if pick(u, 16) == 0 {
        out.push_str(&text(u, 32));
    }
    out
}

/// A matcher: at depth 3 an atom, else (one byte) atom, `&&`, `||` or `!`.
fn expr(u: &mut Unstructured<'_>, depth: usize, r: &[&str], p: &[&str]) -> String {
    let kind = if depth >= 3 { 0 } else { pick(u, 4) };
    if kind == 0 {
        return atom(u, r, p);
    }
    let a = expr(u, depth + 1, r, p);
    match kind {
        1 => format!("{a} && {}", expr(u, depth + 1, r, p)),
        2 => format!("({a} || {})", expr(u, depth + 1, r, p)),
        _ => format!("!({a})"),
    }
}

/// Request field, policy field (one past the end: undefined), form, and a
/// literal for the forms that take one.
fn atom(u: &mut Unstructured<'_>, r: &[&str], p: &[&str]) -> String {
    let a = r.get(pick(u, r.len() + 1)).copied().unwrap_or("zzz");
    let b = p.get(pick(u, p.len() + 1)).copied().unwrap_or("zzz");
    let k = pick(u, 11);
    let v = match k {
        6 | 8 => VALUES[pick(u, VALUES.len())].to_string(),
        9 | 10 => text(u, 24),
        _ => String::new(),
    };
    match k {
        0 => format!("r.{a} == p.{b}"),
        1 => format!("r.{a} != p.{b}"),
        2 => format!("g(r.{a}, p.{b})"),
        3 => format!("keyMatch(r.{a}, p.{b})"),
        4 => format!("keyMatch2(r.{a}, p.{b})"),
        5 => format!("regexMatch(r.{a}, p.{b})"),
        6 | 9 => format!("regexMatch(r.{a}, \"{v}\")"),
        7 => format!("ipMatch(r.{a}, p.{b})"),
        _ => format!("r.{a} == \"{v}\""),
    }
}

/// One rule operation: op byte (0-3 p, 4-5 g, 6 a bad ptype, 7 remove),
/// slot byte, then for an add a count and values. The stateless checks
/// must accept exactly the valid slots and shapes.
fn rule_op(
    u: &mut Unstructured<'_>,
    def: Option<&ModelDef>,
    p: &Params,
    stored: &mut BTreeMap<u32, (Rule, u64)>,
    total: &mut u64,
) {
    let op = pick(u, 8);
    let rule_index = match pick(u, 256) as u32 {
        b if b < 250 => b,
        b => 256 + b,
    };
    let model_id = model_id();
    let in_range = rule_index < p.casbin.max_rules_per_model;
    if op == 7 {
        let ok = RemoveCasbinRule {
            model_id,
            rule_index,
        }
        .check_stateless(p)
        .is_ok();
        assert_eq!(ok, in_range, "RemoveCasbinRule check of slot {rule_index}");
        if let Some((_, w)) = stored.remove(&rule_index) {
            *total = total.saturating_sub(w);
        }
        return;
    }
    let ptype = ["p", "p", "p", "p", "g", "g", "x"][op].to_string();
    let values = (0..pick(u, 8)).map(|_| value(u, &p.casbin)).collect();
    let add = AddCasbinRule {
        model_id,
        rule_index,
        ptype,
        values,
    };
    let rule = PType::parse(&add.ptype).ok().map(|ptype| Rule {
        ptype,
        values: add.values.clone(),
    });
    let shape_ok = rule
        .as_ref()
        .is_some_and(|r| check_shape(r, &p.casbin).is_ok());
    let ok = add.check_stateless(p).is_ok();
    assert_eq!(ok, in_range && shape_ok, "AddCasbinRule check: {add:?}");
    if let (Some(rule), Some(def), true) = (rule, def, ok) {
        store(def, rule, rule_index, &p.casbin, stored, total);
    }
}

fn value(u: &mut Unstructured<'_>, c: &CasbinParams) -> String {
    match pick(u, VALUES.len() + 2) {
        i if i < VALUES.len() => VALUES[i].to_string(),
        i if i == VALUES.len() => text(u, 32),
        _ => "v".repeat(c.max_value_bytes as usize + 1),
    }
}

/// Stores what the chain would: a rule the model accepts, in a free slot,
/// not a duplicate, within the model's pattern weight. An accepted `p` rule
/// must compile, to terms that weigh what the check measured.
fn store(
    def: &ModelDef,
    rule: Rule,
    slot: u32,
    c: &CasbinParams,
    stored: &mut BTreeMap<u32, (Rule, u64)>,
    total: &mut u64,
) {
    if stored.contains_key(&slot) || stored.values().any(|(r, _)| *r == rule) {
        return;
    }
    let Ok(w) = check_against(def, &rule, c) else {
        return;
    };
    if rule.ptype == PType::P {
        let terms = compile_policy(def, &rule.values, c.max_pattern_weight)
            .unwrap_or_else(|e| panic!("a rule the check accepts does not compile: {e}: {rule:?}"));
        let tw: u64 = terms.iter().map(|t| t.regex_weight + t.key2_weight).sum();
        assert_eq!(tw, w, "compiled vs checked pattern weight of {rule:?}");
    }
    let next = total.saturating_add(w);
    if next <= c.max_model_pattern_weight {
        *total = next;
        stored.insert(slot, (rule, w));
    }
}

/// Builds the model twice and decides every request on both.
fn evaluate(
    text: &str,
    stored: &BTreeMap<u32, (Rule, u64)>,
    reqs: &[[String; 4]],
    c: &CasbinParams,
) -> Reach {
    let rules: Vec<(u32, Rule)> = stored.iter().map(|(i, (r, _))| (*i, r.clone())).collect();
    let build = || {
        Compiled::build(text, &rules, c)
            .unwrap_or_else(|e| panic!("an accepted model and rules do not build: {e}: {text:?}"))
    };
    let (c1, c2) = (build(), build());
    let usage = (c1.memory_usage(), c2.memory_usage());
    assert_eq!(usage.0, usage.1, "memory_usage of two builds");
    let mut reach = Reach {
        evaluated: true,
        rules: rules.len(),
        ..Reach::default()
    };
    for [sub, obj, act, territory] in reqs {
        let req = CasbinRequest {
            sub,
            obj,
            act,
            territory,
        };
        match decide(&c1, &c2, &req, c.max_eval_ops) {
            Ok(true) => reach.allows += 1,
            Ok(false) => reach.denies += 1,
            Err(_) => {}
        }
    }
    reach
}

fn decide(
    c1: &Compiled,
    c2: &Compiled,
    req: &CasbinRequest<'_>,
    budget: u64,
) -> Result<bool, EvalError> {
    let (r, ops) = c1.decide_counted(req, budget);
    assert!(ops <= budget, "{ops} ops used over a budget of {budget}");
    let invalid = matches!(r, Err(EvalError::Invalid(_)));
    assert!(!invalid, "an accepted model evaluates to {r:?}");
    let same = (r.clone(), ops);
    let mut runs = vec![(c1, budget, &same, "twice"), (c2, budget, &same, "rebuilt")];
    let short = (
        Err(EvalError::Budget(ops.saturating_sub(1))),
        ops.saturating_sub(1),
    );
    if r.is_ok() && ops > 0 {
        runs.extend([
            (c1, ops, &same, "exact budget"),
            (c1, ops - 1, &short, "one op short"),
        ]);
    }
    for (c, b, want, what) in runs {
        assert_eq!(
            &c.decide_counted(req, b),
            want,
            "{what}, budget {b}: {req:?}"
        );
    }
    r
}

/// One pattern or value read as `kinds`: the measure, the checks and the
/// compilers agree.
fn pattern_case(u: &mut Unstructured<'_>, c: &CasbinParams) {
    let bit = |b: usize, n: u32| b & (1 << n) != 0;
    let b = pick(u, 16);
    let (regex, key2, ip, cidr) = (bit(b, 0), bit(b, 1), bit(b, 2), bit(b, 3));
    let kinds = Kinds {
        regex,
        key2,
        ip,
        cidr,
    };
    // the longest valid UTF-8 prefix of at most 128 bytes: replacement
    // characters would only make long, slow literals
    let rest = u.bytes(u.len().min(128)).unwrap_or_default();
    let valid = std::str::from_utf8(rest).map_or_else(|e| e.valid_up_to(), |s| s.len());
    let pat = String::from_utf8_lossy(&rest[..valid]).into_owned();
    let max = c.max_pattern_weight;
    let w = pattern_weight(&pat);
    assert_eq!(w, pattern_weight(&pat), "pattern_weight twice: {pat:?}");
    let checked = term::check_pattern(&pat, max);
    match (&w, &checked) {
        (Ok(w), Ok(x)) => assert_eq!(w, x, "weight vs check_pattern: {pat:?}"),
        (Ok(w), Err(CasbinError::CapExceeded { .. })) => assert!(*w > u64::from(max)),
        (Err(_), Err(CasbinError::InvalidRule(_))) => {}
        _ => panic!("pattern_weight {w:?} vs check_pattern {checked:?}: {pat:?}"),
    }
    let built = term::check(&pat, kinds, max).ok().map(|tw| {
        let t = Term::build(&pat, kinds)
            .unwrap_or_else(|e| panic!("a value term::check accepts does not build: {e}: {pat:?}"));
        let w = t.regex_weight + t.key2_weight;
        assert_eq!(w, tw, "built vs checked weight: {pat:?}");
        t
    });
    // one compile per pattern: the term's when it has one
    let regex = match built.and_then(|t| t.regex) {
        Some(re) => Some(re),
        None => checked.is_ok().then(|| {
            term::compile_regex(&pat)
                .unwrap_or_else(|e| panic!("a pattern the measure accepts does not compile: {e}"))
        }),
    };
    if let Some(re) = regex {
        let twice = (term::is_match(&re, &pat), term::is_match(&re, &pat));
        assert_eq!(twice.0, twice.1, "is_match twice: {pat:?}");
    }
    let (ip, net) = (IpPattern::parse(&pat, false), IpPattern::parse(&pat, true));
    if let Ok(a) = &ip {
        assert_eq!(Ok(a), net.as_ref(), "address vs CIDR parse: {pat:?}");
    }
    if let Ok(n) = &net {
        assert!(n.contains(n), "a block contains its own address: {pat:?}");
    }
    assert!(term::key_match(&pat, &pat), "keyMatch(x, x): {pat:?}");
}

/// Seeds: model texts, grammar-built models with rules and requests that
/// both allow and deny, and patterns.
#[rustfmt::skip]
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let deny_model = "[request_definition]\nr = sub, obj, act\n[policy_definition]\n\
        p = sub, obj, act, eft\n[policy_effect]\ne = !some(where (p.eft == deny))\n\
        [matchers]\nm = regexMatch(r.sub, p.sub) && keyMatch2(r.obj, p.obj) && \
        (r.act == p.act || ipMatch(r.act, \"10.0.0.0/8\"))\n";
    let mut out: Vec<(String, Vec<u8>)> = vec![
        ("text_rbac".into(), [&[0u8][..], EXAMPLE_RBAC.as_bytes()].concat()),
        ("text_deny".into(), [&[0u8][..], deny_model.as_bytes()].concat()),
        // model: sub,obj,act; p = sub,obj,act; g; matcher
        // g(r.sub, p.sub) && (r.obj == p.obj && r.act == p.act)
        // rules: p alice song read @0, g bob alice @1, p admin /res/1 read @2
        // requests: bob song read US, editor song read US, alice /res/1 write DE
        ("grammar_rbac".into(), vec![
            1, 7, 0, 1, 0, 1, 0, 0, 0, 2, 1, 0, 1, 1, 0, 0, 2, 2, 0, 1,
            3, 0, 0, 3, 0, 4, 10, 4, 1, 2, 1, 0, 0, 2, 3, 2, 5, 10,
            2, 1, 4, 0, 0, 3, 4, 0, 0, 0, 5, 1, 1,
        ]),
        // model: all four request fields; p = sub,obj,act,eft; no g;
        // deny-override; regexMatch(r.sub, p.sub) && (keyMatch2(r.obj,
        // p.obj) && r.act == p.act); rules: allow a.* /res/:id, deny alice
        // /res/*, a bad regex "(", then slot 1 removed
        ("grammar_deny_override".into(), vec![
            1, 15, 1, 0, 1, 1, 0, 0, 0, 5, 1, 0, 1, 1, 4, 0, 2, 2, 0, 1,
            4, 0, 0, 4, 8, 6, 10, 13, 1, 1, 4, 0, 7, 10, 14, 2, 2, 4, 9, 6, 10, 13, 7, 1,
            1, 0, 5, 0, 0, 1, 5, 0, 0,
        ]),
    ];
    for (name, kinds, pat) in [
        ("pattern_regex", 1u8, "(a|b)*c{2,5}"),
        ("pattern_key2", 2, "/res/:id/*"),
        ("pattern_cidr", 8, "10.0.0.0/8"),
        ("pattern_ip6", 4, "::1"),
        ("pattern_heavy", 1, "\\w{100}"),
    ] {
        out.push((name.into(), [&[2u8, kinds][..], pat.as_bytes()].concat()));
    }
    out
}

#[cfg(test)]
mod tests;
