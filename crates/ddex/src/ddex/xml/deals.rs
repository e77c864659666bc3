//! DealList: each ReleaseDeal's references and its deals' terms, with the
//! validity periods' seconds derived by the rule in `time`.

use super::cx::{at, sub, Cx};
use super::parse::Node;
use crate::ddex::time::{date_end_secs, date_start_secs, date_time_secs};
use crate::ddex::DdexError;
use crate::proto::ddex as pb;

/// DealList: its ReleaseDeals, in document order.
pub(super) fn deal_list(
    cx: &mut Cx,
    path: &str,
    n: &Node,
) -> Result<Vec<pb::ReleaseDeal>, DdexError> {
    let mut out = Vec::new();
    for c in &n.children {
        match c.name.as_str() {
            "ReleaseDeal" => out.push(release_deal(cx, &sub(path, c), c)?),
            _ => cx.skip(path, c),
        }
    }
    Ok(out)
}

fn release_deal(cx: &mut Cx, path: &str, n: &Node) -> Result<pb::ReleaseDeal, DdexError> {
    let mut rd = pb::ReleaseDeal::default();
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "DealReleaseReference" => rd.deal_release_reference.push(cx.leaf(&p, c)),
            "Deal" => rd.deal.push(deal(cx, &p, c)?),
            _ => cx.skip(path, c),
        }
    }
    Ok(rd)
}

fn deal(cx: &mut Cx, path: &str, n: &Node) -> Result<pb::Deal, DdexError> {
    let mut d = pb::Deal::default();
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "DealTerms" if d.deal_terms.is_some() => {
                cx.drop(format!("{p} (a repeat; the first is kept)"))
            }
            "DealTerms" => d.deal_terms = Some(terms(cx, &p, c)?),
            _ => cx.skip(path, c),
        }
    }
    Ok(d)
}

fn terms(cx: &mut Cx, path: &str, n: &Node) -> Result<pb::DealTerms, DdexError> {
    let mut t = pb::DealTerms::default();
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "TerritoryCode" => t.territory_code.push(cx.leaf(&p, c)),
            "ExcludedTerritoryCode" => t.excluded_territory_code.push(cx.leaf(&p, c)),
            "ValidityPeriod" => t.validity_period.push(validity(cx, &p, c)?),
            "CommercialModelType" => t.commercial_model_type.push(cx.leaf(&p, c)),
            "UseType" => t.use_type.push(cx.leaf(&p, c)),
            _ => cx.skip(path, c),
        }
    }
    Ok(t)
}

/// ValidityPeriod: the texts as written and their seconds (0 = absent).
/// A Date wins over a DateTime for the seconds when both are (wrongly)
/// given; consensus refuses that shape.
fn validity(cx: &mut Cx, path: &str, n: &Node) -> Result<pb::ValidityPeriod, DdexError> {
    let mut v = pb::ValidityPeriod::default();
    let mut seen = [false; 4];
    for c in &n.children {
        let p = sub(path, c);
        match c.name.as_str() {
            "StartDate" => cx.once(&mut v.start_date, &mut seen[0], &p, c),
            "StartDateTime" => cx.once(&mut v.start_date_time, &mut seen[1], &p, c),
            "EndDate" => cx.once(&mut v.end_date, &mut seen[2], &p, c),
            "EndDateTime" => cx.once(&mut v.end_date_time, &mut seen[3], &p, c),
            _ => cx.skip(path, c),
        }
    }
    v.start_secs = secs(path, "StartDate", &v.start_date, date_start_secs)
        .or_else(|| secs(path, "StartDateTime", &v.start_date_time, date_time_secs))
        .transpose()?
        .unwrap_or(0);
    v.end_secs = secs(path, "EndDate", &v.end_date, date_end_secs)
        .or_else(|| secs(path, "EndDateTime", &v.end_date_time, date_time_secs))
        .transpose()?
        .unwrap_or(0);
    Ok(v)
}

/// `None` when `text` is empty, else its seconds by `rule`.
fn secs(
    path: &str,
    name: &str,
    text: &str,
    rule: fn(&str) -> Result<u64, DdexError>,
) -> Option<Result<u64, DdexError>> {
    (!text.is_empty()).then(|| rule(text).map_err(|e| at(&format!("{path}/{name}"), e)))
}
