//! The string functions of the allowed matcher subset, written so that no
//! input can make them panic, and the per-value pre-compilation that rule
//! validation and the evaluator share.

use std::net::IpAddr;

use regex_automata::{meta, util::syntax, Input};

use super::measure::{pattern_weight, NEST_LIMIT, SAFETY_NFA_BYTES};
use super::CasbinError;

/// How the matcher reads a policy value or literal; a value is compiled
/// (and, when a rule is added, validated) for each way it is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kinds {
    /// The pattern of `regexMatch`.
    pub regex: bool,
    /// The pattern of `keyMatch2`.
    pub key2: bool,
    /// The first argument of `ipMatch`: an IP address.
    pub ip: bool,
    /// The second argument of `ipMatch`: an IP address or a CIDR.
    pub cidr: bool,
}

impl Kinds {
    pub fn union(self, o: Kinds) -> Kinds {
        Kinds {
            regex: self.regex || o.regex,
            key2: self.key2 || o.key2,
            ip: self.ip || o.ip,
            cidr: self.cidr || o.cidr,
        }
    }
}

/// An IP address or a CIDR block, as integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpPattern {
    V4 { net: u32, prefix: u8 },
    V6 { net: u128, prefix: u8 },
}

fn mask4(prefix: u8) -> u32 {
    u32::MAX
        .checked_shl(32 - u32::from(prefix.min(32)))
        .unwrap_or(0)
}

fn mask6(prefix: u8) -> u128 {
    u128::MAX
        .checked_shl(128 - u32::from(prefix.min(128)))
        .unwrap_or(0)
}

impl IpPattern {
    /// `a.b.c.d`, `a.b.c.d/n`, an IPv6 address, or `v6/n`.
    pub fn parse(s: &str, allow_prefix: bool) -> Result<Self, String> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) if allow_prefix => {
                let n: u8 = p
                    .parse()
                    .map_err(|_| format!("{s:?}: prefix {p:?} is not a number"))?;
                (a, Some(n))
            }
            Some(_) => return Err(format!("{s:?} is a CIDR, where an IP address is read")),
            None => (s, None),
        };
        let ip: IpAddr = addr
            .parse()
            .map_err(|_| format!("{s:?} is not an IP address"))?;
        match ip {
            IpAddr::V4(v4) => {
                let prefix = prefix.unwrap_or(32);
                if prefix > 32 {
                    return Err(format!("{s:?}: prefix {prefix} > 32"));
                }
                Ok(IpPattern::V4 {
                    net: u32::from(v4) & mask4(prefix),
                    prefix,
                })
            }
            IpAddr::V6(v6) => {
                let prefix = prefix.unwrap_or(128);
                if prefix > 128 {
                    return Err(format!("{s:?}: prefix {prefix} > 128"));
                }
                Ok(IpPattern::V6 {
                    net: u128::from(v6) & mask6(prefix),
                    prefix,
                })
            }
        }
    }

    /// Whether `ip` (an address) lies in this address or block.
    pub fn contains(&self, ip: &IpPattern) -> bool {
        match (self, ip) {
            (IpPattern::V4 { net, prefix }, IpPattern::V4 { net: a, .. }) => {
                a & mask4(*prefix) == *net
            }
            (IpPattern::V6 { net, prefix }, IpPattern::V6 { net: a, .. }) => {
                a & mask6(*prefix) == *net
            }
            _ => false,
        }
    }
}

/// `keyMatch(key1, key2)`: casbin's semantics (key2 may end its prefix with
/// `*`), comparing bytes so that no char boundary can panic.
pub fn key_match(key1: &str, key2: &str) -> bool {
    match key2.find('*') {
        Some(i) => {
            let (k1, k2) = (key1.as_bytes(), key2.as_bytes());
            k1.get(..i).is_some_and(|p| p == &k2[..i])
        }
        None => key1 == key2,
    }
}

/// The regex casbin's `keyMatch2` builds from a pattern: `/*` becomes `/.*`,
/// `:name` becomes `[^/]+`, anchored at both ends.
pub fn key_match2_regex(pattern: &str) -> String {
    let pattern = pattern.replace("/*", "/.*");
    let mut out = String::with_capacity(pattern.len() + 8);
    out.push('^');
    let mut in_param = false;
    for c in pattern.chars() {
        if in_param && c != '/' {
            continue;
        }
        in_param = false;
        if c == ':' {
            in_param = true;
            out.push_str("[^/]+");
        } else {
            out.push(c);
        }
    }
    out.push('$');
    out
}

/// Capacity of a lazy DFA's transition cache, and the size limit of a full
/// DFA (per search; see [`is_match`]).
pub const DFA_CACHE_BYTES: usize = 64 * 1024;

/// A compiled pattern (`regex-automata`'s meta regex, as the `regex` crate
/// builds it).
pub type Regex = meta::Regex;

/// Checks `pattern` against the syntactic measure: its weight must be at
/// most `max_weight`. This, not the compiler, decides acceptance.
///
/// # Errors
/// `CapExceeded` ("regex pattern weight") over the cap, `InvalidRule` for a
/// pattern that does not parse.
pub fn check_pattern(pattern: &str, max_weight: u32) -> Result<u64, CasbinError> {
    let w = pattern_weight(pattern).map_err(CasbinError::InvalidRule)?;
    if w > u64::from(max_weight) {
        return Err(CasbinError::CapExceeded {
            what: "regex pattern weight",
            got: w,
            max: max_weight.into(),
        });
    }
    Ok(w)
}

/// Compiles a pattern under the safety caps only ([`SAFETY_NFA_BYTES`],
/// [`DFA_CACHE_BYTES`]); callers check it with [`check_pattern`] first.
///
/// The one-pass DFA is off and only the implicit group is kept: a pattern
/// with an explicit group or a Unicode `\b` would otherwise get a one-pass
/// table of up to 1 MiB whatever its weight (matching needs no captures).
/// The full DFA and the literal prefilter are off too: compiling is
/// charged by the weight, and their set-up does not follow it (a prefilter
/// made `[0-9]{8}` cost 140 µs to compile, 15 µs without; the
/// `gas_calibration` bench's `compile` table). Results do not depend on
/// them, only search speed, which the lazy DFA keeps linear.
pub fn compile_regex(pattern: &str) -> Result<Regex, String> {
    meta::Builder::new()
        .configure(regex_config(SAFETY_NFA_BYTES))
        .syntax(syntax::Config::new().nest_limit(NEST_LIMIT))
        .build(pattern)
        .map_err(|e| format!("regex {pattern:?} does not compile: {e}"))
}

/// The engine configuration of [`compile_regex`], with `nfa_limit` as the
/// NFA size limit (tests sweep it lower).
pub(crate) fn regex_config(nfa_limit: usize) -> meta::Config {
    meta::Config::new()
        .onepass(false)
        .dfa(false)
        .auto_prefilter(false)
        .which_captures(regex_automata::nfa::thompson::WhichCaptures::Implicit)
        .nfa_size_limit(Some(nfa_limit))
        .hybrid_cache_capacity(DFA_CACHE_BYTES)
        .dfa_size_limit(Some(DFA_CACHE_BYTES))
}

/// A value (rule value or matcher literal), pre-compiled for each way the
/// matcher reads it.
#[derive(Debug, Clone)]
pub struct Term {
    pub text: String,
    pub regex: Option<Regex>,
    pub key2: Option<Regex>,
    pub ip: Option<IpPattern>,
    /// The measure's weight of `regex` and of `key2` (0 without one): a
    /// match is charged by it, whatever the crate compiled.
    pub regex_weight: u64,
    pub key2_weight: u64,
}

/// The measure's weight of a pattern that compiled (0 if it has none).
fn weight_of(regex: &Option<Regex>, pattern: &str) -> u64 {
    regex
        .as_ref()
        .map_or(0, |_| pattern_weight(pattern).unwrap_or(0))
}

/// What a value read in `kinds` weighs under the measure: the weight of
/// its regex and keyMatch2 patterns (0 when neither reads it).
///
/// # Errors
/// The first way of reading `text` that would not accept it.
pub fn check(text: &str, kinds: Kinds, max_weight: u32) -> Result<u64, CasbinError> {
    let mut w = 0;
    if kinds.regex {
        w += check_pattern(text, max_weight)?;
    }
    if kinds.key2 {
        w += check_pattern(&key_match2_regex(text), max_weight)?;
    }
    match (kinds.ip, kinds.cidr) {
        (true, _) => IpPattern::parse(text, false).map(drop),
        (false, true) => IpPattern::parse(text, true).map(drop),
        _ => Ok(()),
    }
    .map_err(CasbinError::InvalidRule)?;
    Ok(w)
}

impl Term {
    /// Compiles `text` for `kinds`, already checked by [`check`].
    ///
    /// # Errors
    /// `InvalidRule` when a pattern does not compile under the safety cap
    /// (which no checked pattern reaches) or an address does not parse.
    pub fn build(text: &str, kinds: Kinds) -> Result<Term, CasbinError> {
        let invalid = CasbinError::InvalidRule;
        let key2_pattern = key_match2_regex(text);
        let regex = kinds
            .regex
            .then(|| compile_regex(text))
            .transpose()
            .map_err(invalid)?;
        let key2 = kinds
            .key2
            .then(|| compile_regex(&key2_pattern))
            .transpose()
            .map_err(invalid)?;
        Ok(Term {
            text: text.to_string(),
            regex_weight: weight_of(&regex, text),
            key2_weight: weight_of(&key2, &key2_pattern),
            regex,
            key2,
            ip: Self::ip(text, kinds),
        })
    }

    /// The text only, for a check that compiles nothing.
    pub fn text_only(text: &str) -> Term {
        Term {
            text: text.to_string(),
            regex: None,
            key2: None,
            ip: None,
            regex_weight: 0,
            key2_weight: 0,
        }
    }

    fn ip(text: &str, kinds: Kinds) -> Option<IpPattern> {
        (kinds.ip || kinds.cidr)
            .then(|| IpPattern::parse(text, kinds.cidr && !kinds.ip).ok())
            .flatten()
    }

    /// Like [`Term::build`], leaving out what does not compile (for the
    /// all-empty policy row casbin evaluates when a model has no rules).
    pub fn lenient(text: &str, kinds: Kinds) -> Term {
        let key2_pattern = key_match2_regex(text);
        let regex = kinds.regex.then(|| compile_regex(text).ok()).flatten();
        let key2 = kinds
            .key2
            .then(|| compile_regex(&key2_pattern).ok())
            .flatten();
        Term {
            text: text.to_string(),
            regex_weight: weight_of(&regex, text),
            key2_weight: weight_of(&key2, &key2_pattern),
            regex,
            key2,
            ip: Self::ip(text, kinds),
        }
    }

    /// Heap bytes this term holds (its text and compiled patterns).
    pub fn memory_usage(&self) -> usize {
        let regexes = [&self.regex, &self.key2].into_iter().flatten();
        std::mem::size_of::<Term>()
            + self.text.capacity()
            + regexes.map(Regex::memory_usage).sum::<usize>()
    }
}

/// Whether `regex` matches `haystack`, with a search cache made for this
/// call and dropped after it: no cache outlives a search, so a compiled
/// model holds only what [`Term::memory_usage`] counts.
pub fn is_match(regex: &Regex, haystack: &str) -> bool {
    let mut cache = regex.create_cache();
    let input = Input::new(haystack).earliest(true);
    regex.search_half_with(&mut cache, &input).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_match_follows_casbin_and_never_splits_a_char() {
        assert!(key_match("/foo/bar", "/foo/*"));
        assert!(key_match("/foo", "/foo*"));
        assert!(!key_match("/fo", "/foo/*"));
        assert!(key_match("abc", "abc"));
        // casbin-rs slices key1 at a byte index and panics here
        assert!(!key_match("aé", "ab*"));
        assert!(!key_match("é", "a*"));
    }

    #[test]
    fn key_match2_regex_matches_casbins() {
        assert_eq!(key_match2_regex("/foo/:id/x"), "^/foo/[^/]+/x$");
        assert_eq!(key_match2_regex("/foo/*"), "^/foo/.*$");
        assert_eq!(key_match2_regex(":a"), "^[^/]+$");
        let r = compile_regex(&key_match2_regex("/r/:id")).unwrap();
        assert!(is_match(&r, "/r/1") && !is_match(&r, "/r/1/2"));
    }

    #[test]
    fn ip_patterns_parse_and_match() {
        let block = IpPattern::parse("192.168.2.0/24", true).unwrap();
        let inside = IpPattern::parse("192.168.2.77", false).unwrap();
        let outside = IpPattern::parse("192.168.3.1", false).unwrap();
        assert!(block.contains(&inside) && !block.contains(&outside));
        let all = IpPattern::parse("0.0.0.0/0", true).unwrap();
        assert!(all.contains(&outside));
        let v6 = IpPattern::parse("2001:db8::/32", true).unwrap();
        assert!(v6.contains(&IpPattern::parse("2001:db8::1", false).unwrap()));
        assert!(!v6.contains(&inside));
        for bad in ["", "1.2.3", "1.2.3.4/33", "::/129", "x/1", "1.2.3.4/-1"] {
            assert!(IpPattern::parse(bad, true).is_err(), "{bad}");
        }
        assert!(IpPattern::parse("1.2.3.4/8", false).is_err());
    }

    #[test]
    fn huge_regexes_are_refused_by_the_measure() {
        let max = 4096;
        assert!(matches!(
            check_pattern("(", max),
            Err(CasbinError::InvalidRule(_))
        ));
        let e = check_pattern("\\w{1000}{1000}", max).unwrap_err();
        assert_eq!(e.code(), crate::tx::Code::CasbinCapExceeded, "{e}");
        assert!(check_pattern("a+b", max).is_ok());
        assert!(compile_regex("a+b").is_ok());
    }
}
