//! ERN dates, times and durations as integers, by one rule the importer and
//! consensus share (consensus re-derives every integer from the stored text
//! and compares; it never consults a timezone database):
//!
//! - an `xs:date` starts at 00:00 of that day; an end date ends at 00:00 of
//!   the next day (exclusive);
//! - a zone (`Z` or `±hh:mm`) is honoured; no zone means `Z`;
//! - fractions of a second are kept to the millisecond for
//!   `MessageCreatedDateTime` and dropped for validity periods;
//! - years are 4 digits, 1970 to 9999 (dates before the epoch are refused);
//! - `xs:duration` is `P[nD][T[nH][nM][n[.fff]S]]`: years and months have no
//!   fixed length and are refused.

use super::{invalid, DdexError};

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(s: &str, what: &str) -> Result<u32, DdexError> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) || s.len() > 9 {
        return Err(invalid(format!("{what} {s:?} is not digits")));
    }
    s.parse()
        .map_err(|_| invalid(format!("{what} {s:?} is not a number")))
}

/// `YYYY-MM-DD` → days since the epoch, checked as a calendar date.
fn parse_ymd(s: &str) -> Result<i64, DdexError> {
    let bad = || invalid(format!("date {:?} is not YYYY-MM-DD", shown(s)));
    let b = s.as_bytes();
    if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return Err(bad());
    }
    let part = |r: std::ops::Range<usize>| s.get(r).ok_or_else(bad);
    let y = digits(part(0..4)?, "year")?;
    let m = digits(part(5..7)?, "month")?;
    let d = digits(part(8..10)?, "day")?;
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(bad()),
    };
    if !(1970..=9999).contains(&y) || d == 0 || d > days_in {
        return Err(invalid(format!(
            "date {:?} is not a calendar date from 1970 to 9999",
            shown(s)
        )));
    }
    Ok(days_from_civil(i64::from(y), m, d))
}

fn shown(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Splits a trailing zone off: `Z`, `±hh:mm` or none (= `Z`). Returns the
/// rest and the zone's offset east of UTC, in seconds.
fn split_zone(s: &str) -> Result<(&str, i64), DdexError> {
    if let Some(rest) = s.strip_suffix('Z') {
        return Ok((rest, 0));
    }
    let n = s.len();
    let tail = if n >= 6 { s.get(n - 6..) } else { None };
    let Some(tail) = tail else {
        return Ok((s, 0));
    };
    let tb = tail.as_bytes();
    if !(tb.first() == Some(&b'+') || tb.first() == Some(&b'-')) || tb.get(3) != Some(&b':') {
        return Ok((s, 0));
    }
    let hh = digits(tail.get(1..3).unwrap_or(""), "zone hours")?;
    let mm = digits(tail.get(4..6).unwrap_or(""), "zone minutes")?;
    if hh > 14 || mm > 59 {
        return Err(invalid(format!("zone {tail:?} is out of range")));
    }
    let sign = if tb.first() == Some(&b'-') { -1 } else { 1 };
    let rest = s.get(..n - 6).unwrap_or("");
    Ok((rest, sign * i64::from(hh * 3600 + mm * 60)))
}

fn to_u64(secs: i64, what: &str, s: &str) -> Result<u64, DdexError> {
    u64::try_from(secs).map_err(|_| invalid(format!("{what} {:?} is before 1970", shown(s))))
}

/// An `xs:date` (optionally zoned) → unix seconds of its 00:00.
pub fn date_start_secs(s: &str) -> Result<u64, DdexError> {
    let (ymd, off) = split_zone(s)?;
    to_u64(parse_ymd(ymd)? * 86_400 - off, "date", s)
}

/// An `xs:date` (optionally zoned) → unix seconds of the next day's 00:00:
/// the exclusive end of an inclusive end date.
pub fn date_end_secs(s: &str) -> Result<u64, DdexError> {
    let (ymd, off) = split_zone(s)?;
    to_u64((parse_ymd(ymd)? + 1) * 86_400 - off, "date", s)
}

/// Checks an `xs:date` with a zone allowed, from 1970 on.
pub fn check_date(s: &str) -> Result<(), DdexError> {
    date_start_secs(s).map(|_| ())
}

/// Checks a ReleaseDate or OriginalReleaseDate as ERN writes them:
/// `YYYY`, `YYYY-MM` or `YYYY-MM-DD`, years 1000 to 9999 (an original
/// release may predate the epoch; nothing compares these dates).
pub fn check_release_date(s: &str) -> Result<(), DdexError> {
    let bad = || {
        invalid(format!(
            "release date {:?} is not YYYY, YYYY-MM or YYYY-MM-DD from year 1000",
            shown(s)
        ))
    };
    let year = digits(s.get(..4).ok_or_else(bad)?, "year").map_err(|_| bad())?;
    if !(1000..=9999).contains(&year) {
        return Err(bad());
    }
    match s.len() {
        4 => Ok(()),
        7 => {
            let m = digits(s.get(5..7).unwrap_or(""), "month").map_err(|_| bad())?;
            if s.as_bytes().get(4) == Some(&b'-') && (1..=12).contains(&m) {
                Ok(())
            } else {
                Err(bad())
            }
        }
        10 => {
            // the same calendar rules, shifted into the range parse_ymd takes
            let shifted = format!("{:04}{}", 2000 + year % 400, s.get(4..).unwrap_or(""));
            parse_ymd(&shifted).map(|_| ()).map_err(|_| bad())
        }
        _ => Err(bad()),
    }
}

/// An `xs:dateTime` → unix milliseconds UTC (fraction kept to the ms).
pub fn date_time_ms(s: &str) -> Result<u64, DdexError> {
    let bad = || {
        invalid(format!(
            "date-time {:?} is not YYYY-MM-DDThh:mm:ss[.fff][Z|±hh:mm]",
            shown(s)
        ))
    };
    let (body, off) = split_zone(s)?;
    let (date, time) = body.split_once('T').ok_or_else(bad)?;
    let days = parse_ymd(date)?;
    let (hms, frac) = match time.split_once('.') {
        Some((hms, f)) if !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()) => (hms, f),
        Some(_) => return Err(bad()),
        None => (time, ""),
    };
    let tb = hms.as_bytes();
    if tb.len() != 8 || tb.get(2) != Some(&b':') || tb.get(5) != Some(&b':') {
        return Err(bad());
    }
    let h = digits(hms.get(0..2).unwrap_or(""), "hour")?;
    let m = digits(hms.get(3..5).unwrap_or(""), "minute")?;
    let sec = digits(hms.get(6..8).unwrap_or(""), "second")?;
    if h > 23 || m > 59 || sec > 59 {
        return Err(bad());
    }
    let ms = frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .fold(0i64, |a, c| a * 10 + i64::from(c - b'0'));
    let secs = days * 86_400 + i64::from(h * 3600 + m * 60 + sec) - off;
    to_u64(secs, "date-time", s).map(|v| v.saturating_mul(1000).saturating_add(ms as u64))
}

/// An `xs:dateTime` → unix seconds UTC (fraction dropped).
pub fn date_time_secs(s: &str) -> Result<u64, DdexError> {
    date_time_ms(s).map(|ms| ms / 1000)
}

/// Unix seconds as an `xs:dateTime` in UTC (`YYYY-MM-DDThh:mm:ssZ`), the
/// inverse of [`date_time_secs`] (Howard Hinnant's `civil_from_days`).
pub fn format_date_time(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// An `xs:duration` `P[nD][T[nH][nM][n[.fff]S]]` → milliseconds.
pub fn duration_ms(s: &str) -> Result<u64, DdexError> {
    let bad = |why: &str| invalid(format!("duration {:?}: {why}", shown(s)));
    let rest = s
        .strip_prefix('P')
        .ok_or_else(|| bad("does not start with P"))?;
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) if !t.is_empty() => (d, Some(t)),
        Some(_) => return Err(bad("T with no time")),
        None => (rest, None),
    };
    let mut total: u64 = 0;
    let mut add = |n: u64, unit_ms: u64| {
        total = total.saturating_add(n.saturating_mul(unit_ms));
    };
    if !date.is_empty() {
        let days = date
            .strip_suffix('D')
            .ok_or_else(|| bad("only days may precede T (years and months vary)"))?;
        add(u64::from(digits(days, "days")?), 86_400_000);
    }
    let mut t = time.unwrap_or("");
    for (unit, ms) in [('H', 3_600_000u64), ('M', 60_000)] {
        if let Some((n, r)) = t.split_once(unit) {
            add(u64::from(digits(n, "duration field")?), ms);
            t = r;
        }
    }
    if !t.is_empty() {
        let secs = t.strip_suffix('S').ok_or_else(|| bad("trailing text"))?;
        let (whole, frac) = match secs.split_once('.') {
            Some((_, "")) => return Err(bad("empty fraction")),
            Some(parts) => parts,
            None => (secs, ""),
        };
        add(u64::from(digits(whole, "seconds")?), 1000);
        if !frac.is_empty() {
            if !frac.bytes().all(|c| c.is_ascii_digit()) {
                return Err(bad("bad fraction"));
            }
            let ms = frac
                .bytes()
                .chain(std::iter::repeat(b'0'))
                .take(3)
                .fold(0u64, |a, c| a * 10 + u64::from(c - b'0'));
            add(ms, 1);
        }
    }
    if date.is_empty() && time.is_none() {
        return Err(bad("no fields"));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_follow_the_rule() {
        assert_eq!(date_start_secs("1970-01-01").unwrap(), 0);
        assert_eq!(date_start_secs("2024-03-01").unwrap(), 1_709_251_200);
        assert_eq!(date_end_secs("2024-02-29").unwrap(), 1_709_251_200);
        assert_eq!(date_start_secs("2024-03-01Z").unwrap(), 1_709_251_200);
        assert_eq!(
            date_start_secs("2024-03-01+01:00").unwrap(),
            1_709_251_200 - 3600
        );
        for bad in [
            "2023-02-29",
            "1969-12-31",
            "2024-13-01",
            "24-01-01",
            "2024/01/01",
            "",
        ] {
            assert!(date_start_secs(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn release_dates_take_ern_forms() {
        for ok in ["1965", "1965-07", "1965-07-31", "2024-02-29", "1600-02-29"] {
            assert!(check_release_date(ok).is_ok(), "{ok}");
        }
        for bad in [
            "65",
            "1965-13",
            "1965-7",
            "2023-02-29",
            "1900-02-29",
            "0999",
            "1965/07",
            "",
        ] {
            assert!(check_release_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn date_times_follow_the_rule() {
        assert_eq!(
            date_time_ms("2024-03-01T00:00:00").unwrap(),
            1_709_251_200_000
        );
        assert_eq!(
            date_time_ms("2024-03-01T00:00:01.5Z").unwrap(),
            1_709_251_201_500
        );
        assert_eq!(
            date_time_ms("2024-03-01T01:00:00+01:00").unwrap(),
            1_709_251_200_000
        );
        assert_eq!(
            date_time_ms("2024-02-29T23:00:00-01:00").unwrap(),
            1_709_251_200_000
        );
        assert_eq!(
            date_time_secs("2024-03-01T00:00:01.999").unwrap(),
            1_709_251_201
        );
        for bad in [
            "2024-03-01",
            "2024-03-01T24:00:00",
            "2024-03-01T00:00",
            "2024-03-01T00:00:00.",
            "x",
        ] {
            assert!(date_time_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formatted_times_parse_back() {
        for secs in [
            0u64,
            1_709_251_199,
            1_709_251_200,
            1_800_000_000,
            253_402_300_799,
        ] {
            assert_eq!(
                date_time_secs(&format_date_time(secs)).unwrap(),
                secs,
                "{secs}"
            );
        }
        assert_eq!(format_date_time(1_709_251_200), "2024-03-01T00:00:00Z");
    }

    #[test]
    fn durations() {
        assert_eq!(duration_ms("PT3M30S").unwrap(), 210_000);
        assert_eq!(duration_ms("PT1H0M0.25S").unwrap(), 3_600_250);
        assert_eq!(duration_ms("P1DT1S").unwrap(), 86_401_000);
        assert_eq!(duration_ms("PT59S").unwrap(), 59_000);
        for bad in [
            "", "P", "PT", "P1Y", "P1M", "PT3M30", "T3M", "PT-1S", "PT1.S",
        ] {
            assert!(duration_ms(bad).is_err(), "{bad}");
        }
    }
}
