//! Exact sorted-set scores: decimals with up to 18 fractional digits, held
//! as an `i128` count of 10^-18. No floats.

use crate::keyspaces::kv::KvError;

const SCALE: i128 = 1_000_000_000_000_000_000;
const FRAC_DIGITS: usize = 18;
const INT_DIGITS: usize = 20;

/// Parses `-?digits(.digits)?`, at most 20 integer and 18 fractional digits.
pub fn parse_score(s: &str) -> Result<i128, KvError> {
    let bad = |reason: &str| KvError::BadScore {
        got: s.chars().take(60).collect(),
        reason: reason.to_string(),
    };
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("expected digits before any '.'"));
    }
    if body.contains('.') && (frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit())) {
        return Err(bad("expected digits after '.'"));
    }
    if int.len() > INT_DIGITS || frac.len() > FRAC_DIGITS {
        return Err(bad("more than 20 integer or 18 fractional digits"));
    }
    let i: i128 = int.parse().map_err(|_| bad("integer part"))?;
    let mut f: i128 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| bad("fraction"))?
    };
    for _ in frac.len()..FRAC_DIGITS {
        f *= 10;
    }
    let v = i
        .checked_mul(SCALE)
        .and_then(|v| v.checked_add(f))
        .ok_or_else(|| bad("out of range"))?;
    Ok(if neg { -v } else { v })
}

/// The shortest decimal spelling of a score.
pub fn format_score(v: i128) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    let (i, f) = (a / SCALE as u128, a % SCALE as u128);
    if f == 0 {
        return format!("{sign}{i}");
    }
    let frac = format!("{f:018}");
    format!("{sign}{i}.{}", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn scores_parse_exactly_and_reject_floats_spellings() {
        assert_eq!(parse_score("1.5").unwrap(), 15 * SCALE / 10);
        assert_eq!(parse_score("-0.000000000000000001").unwrap(), -1);
        assert_eq!(format_score(parse_score("-12.250").unwrap()), "-12.25");
        for bad in [
            "",
            "-",
            "1.",
            ".5",
            "1e5",
            "+1",
            "NaN",
            "1.0000000000000000001",
        ] {
            assert!(parse_score(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn format_then_parse_round_trips(i in -(10i128.pow(38))..10i128.pow(38)) {
            prop_assert_eq!(parse_score(&format_score(i)).unwrap(), i);
        }
    }
}
