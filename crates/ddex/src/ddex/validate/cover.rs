//! The access-side check on stored [`pb::CidDeals`] (pure: the caller
//! passes the block time).
//!
//! A request for `(territory, use)` at `now` is covered when some deal has
//! the territory's bit ([`territory::index_of`]), the request's leaf bit
//! ([`use_type::request_bit`]: unspecified = on-demand stream) and either
//! no validity period or a period with `start <= now < end` (0 = open).
//! An empty territory (an anonymous request that declares none: a
//! `Download` of a PUBLIC cid) is covered by a deal in force for the use in
//! any territory. Malformed stored values (territory bytes not 32 long, an
//! unknown territory or use) cover nothing.

use crate::ddex::territory::{self, TerritorySet, CODES};
use crate::ddex::use_type;
use crate::proto::ddex as pb;

/// Whether some deal covers `territory` (ISO 3166-1 alpha-2, upper case),
/// `use_type` (a [`pb::UseType`] value) at `now_secs` (unix seconds).
pub fn covering_deal(deals: &pb::CidDeals, territory: &str, use_type: i32, now_secs: u64) -> bool {
    let t = if territory.is_empty() {
        None
    } else {
        match territory::index_of(territory) {
            Some(t) => Some(t),
            None => return false,
        }
    };
    let Some(bit) = use_type::request_bit(use_type) else {
        return false;
    };
    deals.deals.iter().any(|d| grants(d, t, bit, now_secs))
}

/// `territory` `None`: any territory of the deal.
fn grants(d: &pb::CoveringDeal, territory: Option<usize>, bit: u32, now: u64) -> bool {
    let in_territory = TerritorySet::from_bytes(&d.territories).is_some_and(|s| match territory {
        Some(t) => s.contains(t),
        None => !s.is_empty(),
    });
    in_territory && d.use_types & bit != 0 && in_periods(&d.validity_period, now)
}

fn in_periods(periods: &[pb::ValidityPeriod], now: u64) -> bool {
    periods.is_empty()
        || periods
            .iter()
            .any(|p| p.start_secs <= now && (p.end_secs == 0 || now < p.end_secs))
}

/// Deals shown in full by [`summary`].
const SHOWN_DEALS: usize = 4;

/// A short description of the deals for a deny message, e.g. `2 deals:
/// OnDemandStream+NonInteractiveStream+ContentInfluencedStream in all 250
/// territories; PermanentDownload in GB from 2026-01-01T00:00:00Z`.
pub fn summary(deals: &pb::CidDeals) -> String {
    let n = deals.deals.len();
    if n == 0 {
        return "no deals".to_string();
    }
    let mut parts: Vec<String> = deals
        .deals
        .iter()
        .take(SHOWN_DEALS)
        .map(deal_text)
        .collect();
    if n > SHOWN_DEALS {
        parts.push(format!("{} more", n.saturating_sub(SHOWN_DEALS)));
    }
    let noun = if n == 1 { "deal" } else { "deals" };
    format!("{n} {noun}: {}", parts.join("; "))
}

fn deal_text(d: &pb::CoveringDeal) -> String {
    let names = use_type::leaf_names(d.use_types);
    let uses = if names.is_empty() {
        "no stream or download".to_string()
    } else {
        names.join("+")
    };
    format!(
        "{uses} in {}{}",
        territories_text(&d.territories),
        periods_text(&d.validity_period)
    )
}

fn territories_text(bytes: &[u8]) -> String {
    let Some(set) = TerritorySet::from_bytes(bytes) else {
        return "unreadable territories".to_string();
    };
    let codes: Vec<&str> = CODES
        .iter()
        .enumerate()
        .filter(|(i, _)| set.contains(*i))
        .map(|(_, c)| *c)
        .collect();
    match codes.len() {
        0 => "no territory".to_string(),
        1..=3 => codes.join(","),
        n if n == CODES.len() => format!("all {n} territories"),
        n => format!("{n} territories"),
    }
}

fn periods_text(periods: &[pb::ValidityPeriod]) -> String {
    let Some(p) = periods.first() else {
        return String::new();
    };
    let mut s = String::new();
    if p.start_secs != 0 {
        s.push_str(&format!(" from {}", when(p.start_secs)));
    }
    if p.end_secs != 0 {
        s.push_str(&format!(" until {}", when(p.end_secs)));
    }
    if periods.len() > 1 {
        s.push_str(&format!(" (+{} periods)", periods.len().saturating_sub(1)));
    }
    s
}

/// Unix seconds as `YYYY-MM-DDThh:mm:ssZ`, or `open` for 0.
pub(super) fn when(secs: u64) -> String {
    if secs == 0 {
        return "open".to_string();
    }
    let (y, m, d) = civil_from_days(secs / 86_400);
    let t = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        t / 3600,
        t % 3600 / 60,
        t % 60
    )
}

/// Howard Hinnant's `civil_from_days` for days since 1970-01-01, in
/// unsigned saturating steps (exact for every `u64` seconds value:
/// `days <= u64::MAX / 86_400`, far from saturation).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days.saturating_add(719_468);
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = doe
        .saturating_sub(doe / 1460)
        .saturating_add(doe / 36_524)
        .saturating_sub(doe / 146_096)
        / 365;
    let year_days = yoe
        .saturating_mul(365)
        .saturating_add(yoe / 4)
        .saturating_sub(yoe / 100);
    let doy = doe.saturating_sub(year_days);
    let mp = doy.saturating_mul(5).saturating_add(2) / 153;
    let month_days = mp.saturating_mul(153).saturating_add(2) / 5;
    let d = doy.saturating_sub(month_days).saturating_add(1);
    let m = if mp < 10 {
        mp.saturating_add(3)
    } else {
        mp.saturating_sub(9)
    };
    let y = era
        .saturating_mul(400)
        .saturating_add(yoe)
        .saturating_add(u64::from(m <= 2));
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn when_formats_utc() {
        assert_eq!(when(0), "open");
        assert_eq!(when(1_709_251_200), "2024-03-01T00:00:00Z");
        assert_eq!(when(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(when(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(when(253_402_300_799), "9999-12-31T23:59:59Z");
        assert!(!when(u64::MAX).is_empty());
    }
}
