//! The string functions of the allowed matcher subset, written so that no
//! input can make them panic, and the per-value pre-compilation that rule
//! validation and the evaluator share.

use std::net::IpAddr;

use regex::{Regex, RegexBuilder};

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

/// Compiles `pattern` with a compiled-size limit.
pub fn compile_regex(pattern: &str, limit: u32) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .size_limit(limit as usize)
        .dfa_size_limit(limit as usize)
        .nest_limit(64)
        .build()
        .map_err(|e| format!("regex {pattern:?} does not compile within {limit} bytes: {e}"))
}

/// A value (rule value or matcher literal), pre-compiled for each way the
/// matcher reads it.
#[derive(Debug, Clone)]
pub struct Term {
    pub text: String,
    pub regex: Option<Regex>,
    pub key2: Option<Regex>,
    pub ip: Option<IpPattern>,
}

impl Term {
    /// Compiles `text` for `kinds`.
    ///
    /// # Errors
    /// The first way of reading `text` that would not accept it.
    pub fn compile(text: &str, kinds: Kinds, regex_limit: u32) -> Result<Term, String> {
        let regex = match kinds.regex {
            true => Some(compile_regex(text, regex_limit)?),
            false => None,
        };
        let key2 = match kinds.key2 {
            true => Some(compile_regex(&key_match2_regex(text), regex_limit)?),
            false => None,
        };
        let ip = match (kinds.ip, kinds.cidr) {
            (true, _) => Some(IpPattern::parse(text, false)?),
            (false, true) => Some(IpPattern::parse(text, true)?),
            _ => None,
        };
        Ok(Term {
            text: text.to_string(),
            regex,
            key2,
            ip,
        })
    }

    /// Like [`Term::compile`], leaving out what does not compile (for the
    /// all-empty policy row casbin evaluates when a model has no rules).
    pub fn lenient(text: &str, kinds: Kinds, regex_limit: u32) -> Term {
        Term {
            text: text.to_string(),
            regex: kinds
                .regex
                .then(|| compile_regex(text, regex_limit).ok())
                .flatten(),
            key2: kinds
                .key2
                .then(|| compile_regex(&key_match2_regex(text), regex_limit).ok())
                .flatten(),
            ip: (kinds.ip || kinds.cidr)
                .then(|| IpPattern::parse(text, kinds.cidr && !kinds.ip).ok())
                .flatten(),
        }
    }
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
        let r = compile_regex(&key_match2_regex("/r/:id"), 1 << 16).unwrap();
        assert!(r.is_match("/r/1") && !r.is_match("/r/1/2"));
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
    fn huge_regexes_are_refused() {
        assert!(compile_regex("(", 1 << 16).is_err());
        assert!(compile_regex("\\w{1000}{1000}", 1 << 16).is_err());
        assert!(compile_regex("a+b", 1 << 16).is_ok());
    }
}
