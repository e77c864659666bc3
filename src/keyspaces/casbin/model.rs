//! The model text: a casbin PERM config restricted to a documented subset
//! (see `docs/casbin.md`). Parsing checks every line; the result
//! is what rule validation and the evaluator work from.

use super::matcher::{self, Expr, Scope};
use super::params::CasbinParams;
use super::term::Kinds;
use super::CasbinError;

/// A role-based model in the allowed subset: `alice` may `access` `song` if
/// a `p` rule grants it to her or to a role she holds through `g` rules.
pub const EXAMPLE_RBAC: &str = "\
[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act
";

/// The fields a request definition may name, as the access decision fills them.
pub const REQUEST_FIELDS: [&str; 4] = ["sub", "obj", "act", "territory"];

/// The policy effects casbin-rs supports, as written with `p.eft`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// `some(where (p.eft == allow))`
    AllowOverride,
    /// `!some(where (p.eft == deny))`
    DenyOverride,
    /// `some(where (p.eft == allow)) && !some(where (p.eft == deny))`
    AllowAndDeny,
    /// `priority(p.eft) || deny`: the first matching rule (slot order) decides.
    Priority,
}

impl Effect {
    fn parse(s: &str) -> Result<Effect, String> {
        Ok(match s {
            "some(where (p.eft == allow))" => Effect::AllowOverride,
            "!some(where (p.eft == deny))" => Effect::DenyOverride,
            "some(where (p.eft == allow)) && !some(where (p.eft == deny))" => Effect::AllowAndDeny,
            "priority(p.eft) || deny" => Effect::Priority,
            other => {
                return Err(format!(
                    "policy effect {other:?} is not one of the four casbin effects"
                ))
            }
        })
    }
}

/// A parsed model.
#[derive(Debug, Clone)]
pub struct ModelDef {
    /// The request fields, in `r` order (each one of [`REQUEST_FIELDS`]).
    pub request: Vec<String>,
    /// The policy fields, in `p` order.
    pub policy: Vec<String>,
    /// Position of `eft` in `p`, if present.
    pub eft: Option<usize>,
    /// Whether `[role_definition]` declares `g = _, _`.
    pub has_roles: bool,
    pub effect: Effect,
    pub matcher: Expr,
    /// How the matcher reads each policy field.
    pub kinds: Vec<Kinds>,
    /// The measure's weight of the matcher's regex literals.
    pub weight: u64,
}

const SECTIONS: [(&str, &str); 5] = [
    ("request_definition", "r"),
    ("policy_definition", "p"),
    ("role_definition", "g"),
    ("policy_effect", "e"),
    ("matchers", "m"),
];

/// Splits the text into its five `key = value` entries, by key letter.
fn entries(text: &str) -> Result<[Option<String>; 5], String> {
    if let Some(c) = text
        .chars()
        .find(|c| !(matches!(c, '\n' | '\r' | '\t') || (' '..='~').contains(c)))
    {
        return Err(format!(
            "character {c:?} is not allowed (printable ASCII only)"
        ));
    }
    let mut out: [Option<String>; 5] = Default::default();
    let mut seen = [false; 5];
    let mut section: Option<usize> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let n = n + 1;
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let i = SECTIONS
                .iter()
                .position(|(s, _)| *s == name)
                .ok_or_else(|| format!("line {n}: unknown section [{name}]"))?;
            if std::mem::replace(&mut seen[i], true) {
                return Err(format!("line {n}: section [{name}] appears twice"));
            }
            section = Some(i);
            continue;
        }
        let i = section.ok_or_else(|| format!("line {n}: entry outside a section"))?;
        let (key, value) = line
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| format!("line {n}: expected \"key = value\""))?;
        let (sec, want) = SECTIONS[i];
        if key != want {
            return Err(format!(
                "line {n}: [{sec}] allows only the key {want:?}, not {key:?}"
            ));
        }
        if value.is_empty() || value.contains('#') || value.ends_with('\\') {
            return Err(format!(
                "line {n}: the value is empty, has a '#', or continues a line"
            ));
        }
        if out[i].replace(value.to_string()).is_some() {
            return Err(format!("line {n}: key {key:?} appears twice"));
        }
    }
    Ok(out)
}

fn fields(value: &str, what: &str) -> Result<Vec<String>, String> {
    let f: Vec<String> = value.split(',').map(|s| s.trim().to_string()).collect();
    for (i, name) in f.iter().enumerate() {
        let ok = name.len() <= 32
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !ok || f[..i].contains(name) {
            return Err(format!(
                "{what} field {name:?} is not a new [a-z][a-z0-9_]* name"
            ));
        }
    }
    Ok(f)
}

/// Parses and validates a model text against the caps. The matcher's regex
/// literals are checked by the measure, and compiled only when `compile`
/// (evaluation); a check compiles nothing.
///
/// # Errors
/// `CapExceeded` for a text over `max_model_bytes`, a matcher over
/// `max_matcher_nodes` or a literal over `max_pattern_weight`;
/// `InvalidModel` for anything outside the subset.
pub fn parse_model(
    text: &str,
    params: &CasbinParams,
    compile: bool,
) -> Result<ModelDef, CasbinError> {
    if text.len() > params.max_model_bytes as usize {
        return Err(CasbinError::cap(
            "model text bytes",
            text.len(),
            params.max_model_bytes,
        ));
    }
    let [r, p, g, e, m] = entries(text).map_err(CasbinError::InvalidModel)?;
    let missing = |what: &str| CasbinError::InvalidModel(format!("missing {what}"));
    let request = fields(
        &r.ok_or_else(|| missing("[request_definition] r"))?,
        "request",
    )
    .map_err(CasbinError::InvalidModel)?;
    if let Some(bad) = request
        .iter()
        .find(|f| !REQUEST_FIELDS.contains(&f.as_str()))
    {
        return Err(CasbinError::InvalidModel(format!(
            "request field {bad:?} is not one of {REQUEST_FIELDS:?}"
        )));
    }
    let policy = fields(
        &p.ok_or_else(|| missing("[policy_definition] p"))?,
        "policy",
    )
    .map_err(CasbinError::InvalidModel)?;
    if policy.len() > params.max_values_per_rule as usize {
        return Err(CasbinError::cap(
            "policy fields",
            policy.len(),
            params.max_values_per_rule,
        ));
    }
    let has_roles = match g
        .as_deref()
        .map(|g| g.split(',').map(str::trim).collect::<Vec<_>>())
    {
        None => false,
        Some(parts) if parts == ["_", "_"] => true,
        Some(parts) => {
            return Err(CasbinError::InvalidModel(format!(
                "role definition {parts:?} is not g = _, _"
            )))
        }
    };
    let effect = Effect::parse(&e.ok_or_else(|| missing("[policy_effect] e"))?)
        .map_err(CasbinError::InvalidModel)?;
    let eft = policy.iter().position(|f| f == "eft");
    if effect != Effect::AllowOverride && eft.is_none() {
        return Err(CasbinError::InvalidModel(
            "an effect that reads deny needs an eft field in [policy_definition]".into(),
        ));
    }
    let m = m.ok_or_else(|| missing("[matchers] m"))?;
    let scope = Scope {
        request: &request,
        policy: &policy,
        has_roles,
        max_nodes: params.max_matcher_nodes as usize,
        max_weight: params.max_pattern_weight,
        compile,
    };
    let parsed = matcher::parse(&m, &scope)?;
    Ok(ModelDef {
        request,
        policy,
        eft,
        has_roles,
        effect,
        matcher: parsed.expr,
        kinds: parsed.kinds,
        weight: parsed.weight,
    })
}
