//! Validation of the DDEX ERN subset (`stave.rights.v1.ErnRelease`):
//! ICPN (GS1 check digit), GRid (ISO 7064 MOD 37-36), ISRC (ISO 3901),
//! ISO 3166-1 territories, release dates, and the genesis caps.
//!
//! Every function here is total: any input gives `Ok` or a [`RightsError`],
//! never a panic (a proptest feeds random bytes and random messages).

use std::collections::BTreeSet;

use super::{cap, check_territory, RightsError, RightsParams};
use crate::proto::rights as pb;

/// Validates a whole release against the formats and `params`' caps.
///
/// # Errors
/// `MalformedIsrc` for a bad or repeated ISRC, `InvalidTerritory`,
/// `RightsCapExceeded` for a collection or string over its cap, and
/// `InvalidErn` for everything else.
pub fn validate_release(ern: &pb::ErnRelease, params: &RightsParams) -> Result<(), RightsError> {
    match (ern.icpn.is_empty(), ern.grid.is_empty()) {
        (false, true) => check_icpn(&ern.icpn)?,
        (true, false) => check_grid(&ern.grid)?,
        _ => {
            return Err(RightsError::InvalidErn(format!(
                "exactly one release id (icpn {:?} or grid {:?}) must be set",
                ern.icpn, ern.grid
            )))
        }
    }
    let max = params.max_ern_string_bytes;
    required("title", &ern.title, max)?;
    required("display_artist", &ern.display_artist, max)?;
    for (what, s) in [
        ("label", &ern.label),
        ("genre", &ern.genre),
        ("p_line", &ern.p_line),
        ("c_line", &ern.c_line),
    ] {
        cap(&format!("ern {what} length"), s.len(), max)?;
    }
    check_date(&ern.release_date)?;
    cap(
        "ern territories",
        ern.territories.len(),
        params.max_ern_territories,
    )?;
    check_unique_territories(&ern.territories)?;
    check_tracks(&ern.tracks, params)
}

fn required(what: &str, s: &str, max: u32) -> Result<(), RightsError> {
    if s.trim().is_empty() {
        return Err(RightsError::InvalidErn(format!("{what} is empty")));
    }
    cap(&format!("ern {what} length"), s.len(), max)
}

/// Each territory is an assigned code and appears once.
pub fn check_unique_territories(territories: &[String]) -> Result<(), RightsError> {
    let mut seen = BTreeSet::new();
    for t in territories {
        check_territory(t)?;
        if !seen.insert(t.as_str()) {
            return Err(RightsError::InvalidTerritory(format!("{t} (repeated)")));
        }
    }
    Ok(())
}

fn check_tracks(tracks: &[pb::ErnTrack], params: &RightsParams) -> Result<(), RightsError> {
    if tracks.is_empty() {
        return Err(RightsError::InvalidErn(
            "a release has at least one track".into(),
        ));
    }
    cap("ern tracks", tracks.len(), params.max_ern_tracks)?;
    let max = params.max_ern_string_bytes;
    let mut isrcs = BTreeSet::new();
    for (i, t) in tracks.iter().enumerate() {
        check_isrc(&t.isrc)?;
        if !isrcs.insert(t.isrc.as_str()) {
            return Err(RightsError::MalformedIsrc {
                isrc: t.isrc.clone(),
                reason: format!("track {i} repeats it"),
            });
        }
        required(&format!("track {i} title"), &t.title, max)?;
        cap(
            &format!("track {i} display_artist length"),
            t.display_artist.len(),
            max,
        )?;
        if t.duration_secs == 0 {
            return Err(RightsError::InvalidErn(format!("track {i} has duration 0")));
        }
    }
    Ok(())
}

/// ISO 3901: 12 characters `CCXXXYYNNNNN`: a 2-letter country code, a
/// 3-character alphanumeric registrant, 2 digits of year, 5 digits of
/// designation. Upper case, no hyphens.
pub fn check_isrc(isrc: &str) -> Result<(), RightsError> {
    let bad = |reason: &str| RightsError::MalformedIsrc {
        isrc: isrc.chars().take(64).collect(),
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

/// ICPN: a GS1 GTIN-12 (UPC-A) or GTIN-13 (EAN-13) with a valid check digit.
pub fn check_icpn(icpn: &str) -> Result<(), RightsError> {
    let bad = |reason: &str| {
        RightsError::InvalidErn(format!(
            "ICPN {:?}: {reason}",
            icpn.chars().take(64).collect::<String>()
        ))
    };
    let b = icpn.as_bytes();
    if !(b.len() == 12 || b.len() == 13) || !b.iter().all(u8::is_ascii_digit) {
        return Err(bad("not 12 or 13 digits"));
    }
    let digits: Vec<u32> = b.iter().map(|c| u32::from(c - b'0')).collect();
    let (body, check) = digits.split_at(digits.len() - 1);
    // Weights 3,1,3,... from the rightmost body digit.
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| if i % 2 == 0 { d * 3 } else { *d })
        .sum();
    if (10 - sum % 10) % 10 != check[0] {
        return Err(bad("check digit does not match"));
    }
    Ok(())
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
pub fn check_grid(grid: &str) -> Result<(), RightsError> {
    let bad = |reason: &str| {
        RightsError::InvalidErn(format!(
            "GRid {:?}: {reason}",
            grid.chars().take(64).collect::<String>()
        ))
    };
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
    for v in &values[..17] {
        let mut s = (p + v) % 36;
        if s == 0 {
            s = 36;
        }
        p = (s * 2) % 37;
    }
    if (p + values[17]) % 36 != 1 {
        return Err(bad("check character does not match"));
    }
    Ok(())
}

/// `YYYY-MM-DD`, a real calendar date from year 1000 on.
pub fn check_date(date: &str) -> Result<(), RightsError> {
    let bad = || RightsError::InvalidErn(format!("release_date {date:?} is not YYYY-MM-DD"));
    let b = date.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = date.get(r)?;
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    let (y, m, d) = match (num(0..4), num(5..7), num(8..10)) {
        (Some(y), Some(m), Some(d)) => (y, m, d),
        _ => return Err(bad()),
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(bad()),
    };
    if y < 1000 || d == 0 || d > days {
        return Err(bad());
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
                matches!(check_isrc(bad), Err(RightsError::MalformedIsrc { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn icpn_check_digit() {
        assert!(check_icpn("4006381333931").is_ok()); // EAN-13
        assert!(check_icpn("036000291452").is_ok()); // UPC-A
        assert!(check_icpn("4006381333932").is_err());
        assert!(check_icpn("40063813339").is_err());
        assert!(check_icpn("40063813339a1").is_err());
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
    fn dates() {
        assert!(check_date("2024-02-29").is_ok());
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-00-10",
            "24-01-01",
            "2024/01/01",
            "2024-1-011",
            "0999-01-01",
        ] {
            assert!(check_date(bad).is_err(), "{bad}");
        }
    }
}
