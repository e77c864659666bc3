//! Identifier formats: ISRC (ISO 3901), ICPN (GS1 GTIN-12/13/14, check
//! digit), GRid (ISO 7064 MOD 37-36), ISNI (16 characters, ISO 7064 MOD
//! 11-2) and DPID. Every function is total: any input gives `Ok` or a
//! [`DdexError`], never a panic.

use super::{invalid, DdexError};

fn shown(s: &str) -> String {
    s.chars().take(64).collect()
}

/// ISO 3901: 12 characters `CCXXXYYNNNNN`: a 2-letter country code, a
/// 3-character alphanumeric registrant, 2 digits of year, 5 digits of
/// designation. Upper case, no hyphens. ISO 3901 has no check digit.
pub fn check_isrc(isrc: &str) -> Result<(), DdexError> {
    let bad = |reason: &str| DdexError::Isrc {
        isrc: shown(isrc),
        reason: reason.to_string(),
    };
    let b = isrc.as_bytes();
    if b.len() != 12 {
        return Err(bad("not 12 characters (CCXXXYYNNNNN, no hyphens)"));
    }
    if !b[..2].iter().all(u8::is_ascii_uppercase) {
        return Err(bad("country code is not 2 upper-case letters"));
    }
    if !b[2..5]
        .iter()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
    {
        return Err(bad("registrant code is not 3 upper-case alphanumerics"));
    }
    if !b[5..].iter().all(u8::is_ascii_digit) {
        return Err(bad("year and designation are not 7 digits"));
    }
    Ok(())
}

/// ICPN: a GS1 GTIN of 12 (UPC-A), 13 (EAN-13) or 14 digits with a valid
/// check digit, returned as the 14-digit GTIN (left-padded with zeros), the
/// form a release id takes on chain.
pub fn gtin14(icpn: &str) -> Result<String, DdexError> {
    let bad = |reason: &str| invalid(format!("ICPN {:?}: {reason}", shown(icpn)));
    let b = icpn.as_bytes();
    if !(12..=14).contains(&b.len()) || !b.iter().all(u8::is_ascii_digit) {
        return Err(bad("not 12 to 14 digits"));
    }
    let digits: Vec<u32> = b.iter().map(|c| u32::from(c - b'0')).collect();
    let Some((check, body)) = digits.split_last() else {
        return Err(bad("empty"));
    };
    // Weights 3,1,3,... from the rightmost body digit.
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| if i % 2 == 0 { d * 3 } else { *d })
        .sum();
    if (10 - sum % 10) % 10 != *check {
        return Err(bad("check digit does not match"));
    }
    Ok(format!("{icpn:0>14}"))
}

fn alnum_value(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some(u32::from(c - b'0')),
        b'A'..=b'Z' => Some(u32::from(c - b'A') + 10),
        _ => None,
    }
}

/// GRid: 18 upper-case alphanumerics (scheme `A1`, 5 issuer, 10 release,
/// 1 check character), the check by ISO 7064 MOD 37-36.
pub fn check_grid(grid: &str) -> Result<(), DdexError> {
    let bad = |reason: &str| invalid(format!("GRid {:?}: {reason}", shown(grid)));
    let b = grid.as_bytes();
    if b.len() != 18 {
        return Err(bad("not 18 characters (no hyphens)"));
    }
    let values: Option<Vec<u32>> = b.iter().map(|c| alnum_value(*c)).collect();
    let values = values.ok_or_else(|| bad("not upper-case alphanumeric"))?;
    if !b.starts_with(b"A1") {
        return Err(bad("scheme identifier is not A1"));
    }
    let mut p = 36u32;
    for v in values.iter().take(17) {
        let mut s = (p + v) % 36;
        if s == 0 {
            s = 36;
        }
        p = (s * 2) % 37;
    }
    if (p + values.get(17).copied().unwrap_or(99)) % 36 != 1 {
        return Err(bad("check character does not match"));
    }
    Ok(())
}

/// ISNI: 16 characters without spaces, 15 digits then a digit or `X`, the
/// last by ISO 7064 MOD 11-2.
pub fn check_isni(isni: &str) -> Result<(), DdexError> {
    let bad = |reason: &str| invalid(format!("ISNI {:?}: {reason}", shown(isni)));
    let b = isni.as_bytes();
    if b.len() != 16 {
        return Err(bad("not 16 characters (no spaces)"));
    }
    let mut sum = 0u32;
    for c in b.iter().take(15) {
        if !c.is_ascii_digit() {
            return Err(bad("the first 15 characters are not digits"));
        }
        sum = (sum + u32::from(c - b'0')) * 2;
    }
    let check = (12 - sum % 11) % 11;
    let want = if check == 10 {
        b'X'
    } else {
        b'0' + check as u8
    };
    if b.get(15) != Some(&want) {
        return Err(bad("check character does not match"));
    }
    Ok(())
}

/// DPID: a DDEX Party Identifier, `PADPIDA` then 11 upper-case
/// alphanumerics (18 characters).
pub fn check_dpid(dpid: &str) -> Result<(), DdexError> {
    let b = dpid.as_bytes();
    let ok = b.len() == 18
        && b.starts_with(b"PADPIDA")
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    if !ok {
        return Err(invalid(format!(
            "DPID {:?}: not PADPIDA and 11 upper-case alphanumerics",
            shown(dpid)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isrc_format() {
        assert!(check_isrc("USRC17607839").is_ok());
        assert!(check_isrc("GBAYE0000351").is_ok());
        for bad in [
            "US-RC1-76-07839",
            "usrc17607839",
            "USRC1760783",
            "US!C17607839",
            "USRC1760783X",
            "",
        ] {
            assert!(
                matches!(check_isrc(bad), Err(DdexError::Isrc { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn icpn_check_digit_and_gtin14() {
        assert_eq!(gtin14("4006381333931").unwrap(), "04006381333931");
        assert_eq!(gtin14("036000291452").unwrap(), "00036000291452");
        assert_eq!(gtin14("00036000291452").unwrap(), "00036000291452");
        assert!(gtin14("4006381333932").is_err());
        assert!(gtin14("40063813339").is_err());
        assert!(gtin14("40063813339a1").is_err());
        assert!(gtin14("000036000291452").is_err());
    }

    #[test]
    fn grid_check_character() {
        // The example of the GRid standard: A1-2425G-ABC1234002-M.
        assert!(check_grid("A12425GABC1234002M").is_ok());
        assert!(check_grid("A12425GABC1234002N").is_err());
        assert!(check_grid("B12425GABC1234002M").is_err());
        assert!(check_grid("A1-2425G-ABC1234002-M").is_err());
    }

    #[test]
    fn isni_check_character() {
        // ISNI 0000 0001 2103 2683 (a published example) and one ending in X.
        assert!(check_isni("0000000121032683").is_ok());
        assert!(check_isni("100000000000007X").is_ok());
        assert!(check_isni("0000000121032684").is_err());
        assert!(check_isni("0000 0001 2103 2683").is_err());
        assert!(check_isni("000000012103268").is_err());
    }

    #[test]
    fn dpid_format() {
        assert!(check_dpid("PADPIDA2014120301U").is_ok());
        assert!(check_dpid("PADPIDA201412030").is_err());
        assert!(check_dpid("XXDPIDA2014120301U").is_err());
    }
}
