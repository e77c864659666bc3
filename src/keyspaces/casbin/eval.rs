//! The bounded evaluator of the allowed subset. It follows casbin-rs's
//! enforce loop (rules in slot order, its four effects, the all-empty row
//! when a model has no `p` rules, role links up to 9 hops), never panics on
//! any value, and counts every step against an operation budget, so its
//! cost has a deterministic bound. A test compares it with casbin-rs.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::matcher::{Expr, Func, Operand};
use super::model::{parse_model, Effect, ModelDef};
use super::params::CasbinParams;
use super::rules::{compile_policy, empty_row};
use super::term::{is_match, key_match, IpPattern, Term};
use super::{CasbinRequest, PType, Rule};

/// Role links followed at most this many hops (casbin-rs's
/// `max_hierarchy_level` of 10 reaches 9 hops on a chain).
pub const MAX_ROLE_HOPS: usize = 9;

/// A model and its rules, compiled once and evaluated many times.
#[derive(Debug)]
pub struct Compiled {
    def: ModelDef,
    rows: Vec<Vec<Term>>,
    empty: Vec<Term>,
    roles: BTreeMap<String, BTreeSet<String>>,
    bytes: usize,
}

/// Why an evaluation stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    Budget(u64),
    Invalid(String),
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::Budget(n) => write!(f, "operation budget of {n} exhausted"),
            EvalError::Invalid(e) => write!(f, "{e}"),
        }
    }
}

/// Runs `f`, turning a panic into an error message (deterministic: nothing
/// here reads a clock).
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic".into());
        format!("evaluation panicked: {msg}")
    })
}

impl Compiled {
    /// Compiles a stored model and its rules. Stored patterns passed the
    /// measure when added, under the same (genesis) params, and compile
    /// under the safety cap, so the result does not depend on cache state.
    pub fn build(
        text: &str,
        rules: &[(u32, Rule)],
        params: &CasbinParams,
    ) -> Result<Compiled, String> {
        let def = parse_model(text, params, true).map_err(|e| e.to_string())?;
        let mut rows = Vec::new();
        let mut roles: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (i, rule) in rules {
            match (rule.ptype, rule.values.as_slice()) {
                (PType::P, values) => rows.push(
                    compile_policy(&def, values, params.max_pattern_weight)
                        .map_err(|e| format!("rule {i}: {e}"))?,
                ),
                (PType::G, [a, b]) => {
                    roles.entry(a.clone()).or_default().insert(b.clone());
                }
                (PType::G, v) => return Err(format!("rule {i}: g rule with {} values", v.len())),
            }
        }
        let empty = empty_row(&def);
        let mut c = Compiled {
            def,
            rows,
            empty,
            roles,
            bytes: 0,
        };
        c.bytes = c.measure_bytes();
        Ok(c)
    }

    /// Heap bytes this compiled model holds, estimated: every term's text
    /// and compiled patterns (`memory_usage` of each regex), the role
    /// links, and the structures around them. Searches make their caches
    /// per call ([`is_match`]), so nothing grows after the build.
    pub fn memory_usage(&self) -> usize {
        self.bytes
    }

    fn measure_bytes(&self) -> usize {
        let terms = |row: &Vec<Term>| row.iter().map(Term::memory_usage).sum::<usize>();
        let rows: usize = self.rows.iter().chain([&self.empty]).map(terms).sum();
        let links: usize = self
            .roles
            .iter()
            .map(|(a, bs)| 64 + a.len() + bs.iter().map(|b| 64 + b.len()).sum::<usize>())
            .sum();
        let fields: usize = self
            .def
            .request
            .iter()
            .chain(&self.def.policy)
            .map(|f| 24 + f.len())
            .sum();
        std::mem::size_of::<Compiled>()
            + rows
            + self.rows.len() * std::mem::size_of::<Vec<Term>>()
            + literal_bytes(&self.def.matcher)
            + links
            + fields
    }

    /// Whether the model allows `req`, within `budget` operations.
    pub fn decide(&self, req: &CasbinRequest<'_>, budget: u64) -> Result<bool, EvalError> {
        self.decide_counted(req, budget).0
    }

    /// [`Self::decide`] with the operations it used (at most `budget`),
    /// which the consensus path charges as gas.
    pub fn decide_counted(
        &self,
        req: &CasbinRequest<'_>,
        budget: u64,
    ) -> (Result<bool, EvalError>, u64) {
        let rvals: Vec<&str> = self
            .def
            .request
            .iter()
            .map(|f| match f.as_str() {
                "sub" => req.sub,
                "obj" => req.obj,
                "act" => req.act,
                _ => req.territory,
            })
            .collect();
        let mut ev = Eval {
            c: self,
            rvals,
            ops: 0,
            budget,
        };
        let result = self.run(&mut ev);
        (result, ev.ops.min(budget))
    }

    fn run<'a>(&'a self, ev: &mut Eval<'a>) -> Result<bool, EvalError> {
        let mut stream = Stream::new(self.def.effect);
        if self.rows.is_empty() {
            let hit = ev.expr(&self.def.matcher, &self.empty)?;
            stream.push(if hit { Eft::Allow } else { Eft::Indeterminate });
            return Ok(stream.res);
        }
        for row in &self.rows {
            let hit = ev.expr(&self.def.matcher, row)?;
            let eft = match (hit, self.def.eft.and_then(|j| row.get(j))) {
                (false, _) => Eft::Indeterminate,
                (true, None) => Eft::Allow,
                (true, Some(t)) if t.text == "allow" => Eft::Allow,
                (true, Some(t)) if t.text == "deny" => Eft::Deny,
                (true, Some(_)) => Eft::Indeterminate,
            };
            if stream.push(eft) {
                break;
            }
        }
        Ok(stream.res)
    }
}

/// Bytes of a matcher tree: its nodes and its literal terms.
fn literal_bytes(e: &Expr) -> usize {
    let node = std::mem::size_of::<Expr>();
    let operand = |o: &Operand| match o {
        Operand::Lit(t) => t.memory_usage(),
        _ => 0,
    };
    node + match e {
        Expr::Or(a, b) | Expr::And(a, b) => literal_bytes(a) + literal_bytes(b),
        Expr::Not(a) => literal_bytes(a),
        Expr::Eq(a, b) | Expr::Ne(a, b) | Expr::Call(_, a, b) => operand(a) + operand(b),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Eft {
    Allow,
    Indeterminate,
    Deny,
}

/// casbin-rs's `DefaultEffectStream`, one effect at a time.
struct Stream {
    effect: Effect,
    res: bool,
}

impl Stream {
    fn new(effect: Effect) -> Self {
        Stream {
            effect,
            res: effect == Effect::DenyOverride,
        }
    }

    /// Records one rule's effect; true when the decision is final.
    fn push(&mut self, eft: Eft) -> bool {
        match (self.effect, eft) {
            (Effect::AllowOverride, Eft::Allow) => {
                self.res = true;
                true
            }
            (Effect::AllowAndDeny, Eft::Allow) => {
                self.res = true;
                false
            }
            (Effect::AllowAndDeny | Effect::DenyOverride, Eft::Deny) => {
                self.res = false;
                true
            }
            (Effect::Priority, Eft::Allow | Eft::Deny) => {
                self.res = eft == Eft::Allow;
                true
            }
            _ => false,
        }
    }
}

struct Eval<'a> {
    c: &'a Compiled,
    rvals: Vec<&'a str>,
    ops: u64,
    budget: u64,
}

impl<'a> Eval<'a> {
    fn charge(&mut self, n: u64) -> Result<(), EvalError> {
        self.ops = self.ops.saturating_add(n);
        if self.ops > self.budget {
            return Err(EvalError::Budget(self.budget));
        }
        Ok(())
    }

    fn expr(&mut self, e: &'a Expr, row: &'a [Term]) -> Result<bool, EvalError> {
        self.charge(1)?;
        Ok(match e {
            Expr::Or(a, b) => self.expr(a, row)? || self.expr(b, row)?,
            Expr::And(a, b) => self.expr(a, row)? && self.expr(b, row)?,
            Expr::Not(a) => !self.expr(a, row)?,
            Expr::Eq(a, b) => self.text(a, row)? == self.text(b, row)?,
            Expr::Ne(a, b) => self.text(a, row)? != self.text(b, row)?,
            Expr::Call(f, a, b) => self.call(*f, a, b, row)?,
        })
    }

    fn term(&self, o: &'a Operand, row: &'a [Term]) -> Result<Option<&'a Term>, EvalError> {
        match o {
            Operand::R(_) => Ok(None),
            Operand::Lit(t) => Ok(Some(t)),
            Operand::P(i) => row
                .get(*i)
                .map(Some)
                .ok_or_else(|| EvalError::Invalid(format!("policy field {i} missing"))),
        }
    }

    fn text(&self, o: &'a Operand, row: &'a [Term]) -> Result<&'a str, EvalError> {
        match o {
            Operand::R(i) => self
                .rvals
                .get(*i)
                .copied()
                .ok_or_else(|| EvalError::Invalid(format!("request field {i} missing"))),
            _ => Ok(self.term(o, row)?.map_or("", |t| t.text.as_str())),
        }
    }

    fn call(
        &mut self,
        f: Func,
        a: &'a Operand,
        b: &'a Operand,
        row: &'a [Term],
    ) -> Result<bool, EvalError> {
        let x = self.text(a, row)?;
        let pat = self.term(b, row)?;
        let weight = match f {
            Func::RegexMatch => pat.map_or(0, |t| t.regex_weight),
            Func::KeyMatch2 => pat.map_or(0, |t| t.key2_weight),
            _ => 0,
        };
        self.charge(call_cost(x.len(), weight))?;
        Ok(match f {
            Func::KeyMatch => key_match(x, self.text(b, row)?),
            Func::RegexMatch => pat
                .and_then(|t| t.regex.as_ref())
                .is_some_and(|r| is_match(r, x)),
            Func::KeyMatch2 => pat
                .and_then(|t| t.key2.as_ref())
                .is_some_and(|r| is_match(r, x)),
            Func::IpMatch => {
                let ip = match self.term(a, row)? {
                    Some(t) => t.ip,
                    None => IpPattern::parse(x, false).ok(),
                };
                match (ip, pat.and_then(|t| t.ip)) {
                    (Some(ip), Some(net)) => net.contains(&ip),
                    _ => false,
                }
            }
            Func::G => {
                let y = self.text(b, row)?;
                self.has_link(x, y)?
            }
        })
    }

    /// Whether `from` reaches `to` through g links, within [`MAX_ROLE_HOPS`].
    fn has_link(&mut self, from: &str, to: &str) -> Result<bool, EvalError> {
        if from == to {
            return Ok(true);
        }
        let mut seen: BTreeSet<&str> = BTreeSet::from([from]);
        let mut queue: VecDeque<(&str, usize)> = VecDeque::from([(from, 0)]);
        while let Some((node, hops)) = queue.pop_front() {
            self.charge(1)?;
            if hops == MAX_ROLE_HOPS {
                continue;
            }
            for next in self.c.roles.get(node).into_iter().flatten() {
                if next == to {
                    return Ok(true);
                }
                if seen.insert(next) {
                    queue.push_back((next, hops + 1));
                }
            }
        }
        Ok(false)
    }
}

/// Operations a matcher call is charged: its haystack, plus, for a regex,
/// the pattern's weight times the haystack (a search can cost the compiled
/// size times the input when the lazy DFA gives up). Pure in the pattern
/// text and the input, so a cached or a fresh compile cost the same.
pub fn call_cost(haystack_len: usize, pattern_weight: u64) -> u64 {
    let len = haystack_len as u64;
    1 + len / 16 + pattern_weight.saturating_mul(len + 1) / REGEX_COST_DIVISOR
}

/// Weight × input bytes per operation: a 100-unit pattern over a 64-byte
/// request costs 26 operations; an 8,192-unit one over 1 KiB, about 33,000.
pub const REGEX_COST_DIVISOR: u64 = 256;
