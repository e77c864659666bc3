//! The matcher subset: a tokenizer and a depth-limited recursive-descent
//! parser producing a typed AST. Anything outside the grammar is refused.
//!
//! ```text
//! expr    := and ("||" and)*
//! and     := unary ("&&" unary)*
//! unary   := "!" ( "(" expr ")" | "!" unary | call ) | atom
//! atom    := "(" expr ")" | call | operand ("==" | "!=") operand
//! call    := FUNC "(" operand "," operand ")"
//! operand := "r." FIELD | "p." FIELD | "\"" literal "\""
//! FUNC    := g | keyMatch | keyMatch2 | regexMatch | ipMatch
//! ```

use super::term::{self, Kinds, Term};
use super::CasbinError;

/// Deepest nesting of the matcher (parentheses, `!`, operators).
pub const MAX_DEPTH: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    G,
    KeyMatch,
    KeyMatch2,
    RegexMatch,
    IpMatch,
}

impl Func {
    fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "g" => Func::G,
            "keyMatch" => Func::KeyMatch,
            "keyMatch2" => Func::KeyMatch2,
            "regexMatch" => Func::RegexMatch,
            "ipMatch" => Func::IpMatch,
            _ => return None,
        })
    }

    /// How the call reads its (first, second) argument.
    fn kinds(self) -> (Kinds, Kinds) {
        let none = Kinds::default();
        match self {
            Func::G | Func::KeyMatch => (none, none),
            Func::KeyMatch2 => (none, Kinds { key2: true, ..none }),
            Func::RegexMatch => (
                none,
                Kinds {
                    regex: true,
                    ..none
                },
            ),
            Func::IpMatch => (Kinds { ip: true, ..none }, Kinds { cidr: true, ..none }),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Operand {
    /// A request field, by its position in `r`.
    R(usize),
    /// A policy field, by its position in `p`.
    P(usize),
    Lit(Box<Term>),
}

#[derive(Debug, Clone)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Eq(Operand, Operand),
    Ne(Operand, Operand),
    Call(Func, Operand, Operand),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Str(String),
    Dot,
    LParen,
    RParen,
    Comma,
    AndAnd,
    OrOr,
    Not,
    EqEq,
    NotEq,
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let two = b.get(i..i + 2);
        let (tok, len) = match c {
            b' ' | b'\t' => {
                i += 1;
                continue;
            }
            b'.' => (Tok::Dot, 1),
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b',' => (Tok::Comma, 1),
            b'&' if two == Some(b"&&") => (Tok::AndAnd, 2),
            b'|' if two == Some(b"||") => (Tok::OrOr, 2),
            b'=' if two == Some(b"==") => (Tok::EqEq, 2),
            b'!' if two == Some(b"!=") => (Tok::NotEq, 2),
            b'!' => (Tok::Not, 1),
            b'"' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&x| x == b'"')
                    .ok_or_else(|| format!("string literal at offset {i} is not closed"))?;
                let lit = &s[i + 1..i + 1 + end];
                (Tok::Str(lit.to_string()), end + 2)
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let len = b[i..]
                    .iter()
                    .take_while(|x| x.is_ascii_alphanumeric() || **x == b'_')
                    .count();
                (Tok::Ident(s[i..i + len].to_string()), len)
            }
            other => {
                return Err(format!(
                    "{:?} at offset {i} is not allowed (operators: == != && || ! ( ) ,)",
                    other as char
                ))
            }
        };
        out.push(tok);
        i += len;
    }
    Ok(out)
}

/// Whether casbin's rewriting of `r.`/`p.` (and its comment stripping) would
/// alter this literal: such literals are refused.
fn literal_problem(lit: &str) -> Option<String> {
    if let Some(c) = lit
        .chars()
        .find(|c| !(' '..='~').contains(c) || matches!(c, '\\' | '#'))
    {
        return Some(format!("literal {lit:?} contains {c:?}"));
    }
    let b = lit.as_bytes();
    for (i, _) in lit.match_indices('.') {
        let digits = b[..i]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let Some(j) = i.checked_sub(digits + 1) else {
            continue;
        };
        let word_before = j.checked_sub(1).and_then(|k| b.get(k));
        let boundary = word_before.is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
        if matches!(b.get(j), Some(b'r' | b'p')) && boundary {
            return Some(format!("literal {lit:?} contains a field reference"));
        }
    }
    None
}

/// What the parser checks names and sizes against.
pub struct Scope<'a> {
    pub request: &'a [String],
    pub policy: &'a [String],
    pub has_roles: bool,
    pub max_nodes: usize,
    /// `max_pattern_weight`: the measure's cap on each regex literal.
    pub max_weight: u32,
    /// Whether literals are compiled (for evaluation) or only checked.
    pub compile: bool,
}

/// The parsed matcher and how it reads each policy field.
pub struct Parsed {
    pub expr: Expr,
    pub kinds: Vec<Kinds>,
    pub nodes: usize,
    /// The measure's weight of the literals' patterns, summed.
    pub weight: u64,
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    scope: &'a Scope<'a>,
    kinds: Vec<Kinds>,
    nodes: usize,
    weight: u64,
    /// A cap hit while parsing: reported as itself, not as a subset error.
    cap: Option<CasbinError>,
}

/// Parses a matcher against its model's fields.
///
/// # Errors
/// `CapExceeded` for a cap (nodes, a literal's pattern weight), otherwise
/// `InvalidModel` naming the first thing outside the subset.
pub fn parse(text: &str, scope: &Scope<'_>) -> Result<Parsed, CasbinError> {
    let invalid = |e: String| CasbinError::InvalidModel(format!("matcher: {e}"));
    let mut p = Parser {
        toks: tokenize(text).map_err(invalid)?,
        pos: 0,
        scope,
        kinds: vec![Kinds::default(); scope.policy.len()],
        nodes: 0,
        weight: 0,
        cap: None,
    };
    let expr = match p.expr(0) {
        Ok(e) => e,
        Err(e) => return Err(p.cap.take().unwrap_or_else(|| invalid(e))),
    };
    if let Some(t) = p.toks.get(p.pos) {
        return Err(invalid(format!(
            "unexpected {t:?} after the end of the matcher"
        )));
    }
    Ok(Parsed {
        expr,
        kinds: p.kinds,
        nodes: p.nodes,
        weight: p.weight,
    })
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Result<Tok, String> {
        let t = self
            .toks
            .get(self.pos)
            .cloned()
            .ok_or("the matcher ends too early")?;
        self.pos += 1;
        Ok(t)
    }

    fn expect(&mut self, want: Tok) -> Result<(), String> {
        match self.next()? {
            t if t == want => Ok(()),
            t => Err(format!("expected {want:?}, found {t:?}")),
        }
    }

    fn node(&mut self, depth: usize) -> Result<(), String> {
        self.nodes += 1;
        if self.nodes > self.scope.max_nodes {
            let max = self.scope.max_nodes as u32;
            self.cap = Some(CasbinError::cap("matcher nodes", self.nodes, max));
            return Err(format!("the matcher has more than {max} nodes"));
        }
        if depth > MAX_DEPTH {
            return Err(format!("the matcher nests deeper than {MAX_DEPTH}"));
        }
        Ok(())
    }

    fn expr(&mut self, depth: usize) -> Result<Expr, String> {
        let mut left = self.and(depth + 1)?;
        while self.peek() == Some(&Tok::OrOr) {
            self.pos += 1;
            self.node(depth)?;
            left = Expr::Or(Box::new(left), Box::new(self.and(depth + 1)?));
        }
        Ok(left)
    }

    fn and(&mut self, depth: usize) -> Result<Expr, String> {
        let mut left = self.unary(depth + 1)?;
        while self.peek() == Some(&Tok::AndAnd) {
            self.pos += 1;
            self.node(depth)?;
            left = Expr::And(Box::new(left), Box::new(self.unary(depth + 1)?));
        }
        Ok(left)
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, String> {
        self.node(depth)?;
        if self.peek() != Some(&Tok::Not) {
            return self.atom(depth);
        }
        self.pos += 1;
        match self.peek() {
            Some(Tok::Not) => Ok(Expr::Not(Box::new(self.unary(depth + 1)?))),
            Some(Tok::LParen) | Some(Tok::Ident(_)) if !self.at_operand() => {
                Ok(Expr::Not(Box::new(self.atom(depth + 1)?)))
            }
            _ => Err("\"!\" must be followed by \"(\", \"!\" or a function call".into()),
        }
    }

    fn at_operand(&self) -> bool {
        matches!(
            (self.toks.get(self.pos), self.toks.get(self.pos + 1)),
            (Some(Tok::Ident(_)), Some(Tok::Dot)) | (Some(Tok::Str(_)), _)
        )
    }

    fn atom(&mut self, depth: usize) -> Result<Expr, String> {
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let e = self.expr(depth + 1)?;
            self.expect(Tok::RParen)?;
            return Ok(e);
        }
        if let (Some(Tok::Ident(name)), Some(Tok::LParen)) =
            (self.toks.get(self.pos), self.toks.get(self.pos + 1))
        {
            let name = name.clone();
            self.pos += 2;
            return self.call(&name);
        }
        let a = self.operand(Kinds::default())?;
        let op = self.next()?;
        let b = self.operand(Kinds::default())?;
        match op {
            Tok::EqEq => Ok(Expr::Eq(a, b)),
            Tok::NotEq => Ok(Expr::Ne(a, b)),
            t => Err(format!("expected == or != between two values, found {t:?}")),
        }
    }

    fn call(&mut self, name: &str) -> Result<Expr, String> {
        let f = Func::from_name(name)
            .filter(|f| *f != Func::G || self.scope.has_roles)
            .ok_or_else(|| {
                format!(
                    "function {name:?} is not allowed (allowed: keyMatch, keyMatch2, \
                     regexMatch, ipMatch, and g when [role_definition] has g = _, _)"
                )
            })?;
        let (k1, k2) = f.kinds();
        let a = self.operand(k1)?;
        self.expect(Tok::Comma)?;
        let b = self.operand(k2)?;
        self.expect(Tok::RParen)?;
        if k2 != Kinds::default() && matches!(b, Operand::R(_)) {
            return Err(format!(
                "the second argument of {name} must be a policy field or a literal"
            ));
        }
        // ipMatch's address may come from the request; it is parsed then.
        Ok(Expr::Call(f, a, b))
    }

    /// A literal, checked by the measure (and compiled when the scope asks).
    fn literal(&mut self, lit: &str, kinds: Kinds) -> Result<Term, String> {
        let checked = term::check(lit, kinds, self.scope.max_weight).and_then(|w| {
            let t = match self.scope.compile {
                true => Term::build(lit, kinds)?,
                false => Term::text_only(lit),
            };
            Ok((t, w))
        });
        match checked {
            Ok((t, w)) => {
                self.weight = self.weight.saturating_add(w);
                Ok(t)
            }
            Err(CasbinError::InvalidRule(m)) => Err(m),
            Err(e) => {
                let msg = e.to_string();
                self.cap = Some(e);
                Err(msg)
            }
        }
    }

    fn operand(&mut self, kinds: Kinds) -> Result<Operand, String> {
        match self.next()? {
            Tok::Str(lit) => {
                if let Some(problem) = literal_problem(&lit) {
                    return Err(problem);
                }
                Ok(Operand::Lit(Box::new(self.literal(&lit, kinds)?)))
            }
            Tok::Ident(side) if side == "r" || side == "p" => {
                self.expect(Tok::Dot)?;
                let Tok::Ident(field) = self.next()? else {
                    return Err(format!("expected a field name after {side}."));
                };
                let fields = if side == "r" {
                    self.scope.request
                } else {
                    self.scope.policy
                };
                let i = fields
                    .iter()
                    .position(|f| *f == field)
                    .ok_or_else(|| format!("{side}.{field} is not defined (fields: {fields:?})"))?;
                if side == "r" {
                    return Ok(Operand::R(i));
                }
                if let Some(k) = self.kinds.get_mut(i) {
                    *k = k.union(kinds);
                }
                Ok(Operand::P(i))
            }
            t => Err(format!(
                "expected r.FIELD, p.FIELD or a string literal, found {t:?}"
            )),
        }
    }
}
