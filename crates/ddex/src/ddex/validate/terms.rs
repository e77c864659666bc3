//! Steps 6 and 7: each deal's territories and use types, checked and
//! expanded (step 6 over every deal, then step 7 over every deal).
//!
//! Territories: each `TerritoryCode` is a listed ISO 3166-1 code or
//! `Worldwide` (subdivisions such as `GB-ENG` and TIS numeric codes such
//! as `2136` are refused as [`DdexError::Territory`]); each
//! `ExcludedTerritoryCode` a listed code. No `TerritoryCode` means
//! `Worldwide`; both lists empty is refused. Exclusions apply only to
//! `Worldwide` (an explicit list has nothing to exclude). A code listed
//! twice, or beside `Worldwide`, is refused, and so is an empty result.
//!
//! Use types: a non-empty list of known types ([`use_type::expand`]), none
//! covered twice (repeated, or beside its parent). Commercial model types:
//! a non-empty list of non-empty strings.

use std::collections::BTreeSet;

use super::shown;
use crate::ddex::territory::{index_of, TerritorySet, CODES, WORLDWIDE};
use crate::ddex::{invalid, use_type, DdexError};
use crate::proto::ddex as pb;

/// One deal, expanded.
pub(super) struct Term<'a> {
    /// Index of the ReleaseDeal, and of the Deal in it.
    pub rd: usize,
    pub d: usize,
    /// Its DealReleaseReferences.
    pub refs: BTreeSet<&'a str>,
    pub terms: &'a pb::DealTerms,
    pub territories: TerritorySet,
    /// A [`use_type::expand`] mask.
    pub uses: u64,
    pub models: BTreeSet<&'a str>,
    /// `[start, end)` seconds, 0 = open (step 1 checked them).
    pub periods: Vec<(u64, u64)>,
}

/// Checks steps 6 and 7; returns the deals in document order and the work
/// units of the expansion (one per listed value, the number of codes per
/// `Worldwide`).
pub(super) fn expand_all(msg: &pb::NewReleaseMessage) -> Result<(Vec<Term<'_>>, u64), DdexError> {
    let mut out = Vec::new();
    let mut work = 0u64;
    for (rd, release_deal) in msg.release_deal.iter().enumerate() {
        let refs = &release_deal.deal_release_reference;
        for (d, deal) in release_deal.deal.iter().enumerate() {
            let terms = deal
                .deal_terms
                .as_ref()
                .ok_or_else(|| invalid(format!("ReleaseDeal {rd} Deal {d} has no DealTerms")))?;
            let (territories, w) = territories(terms).map_err(|e| at(e, rd, d))?;
            work = work.saturating_add(w);
            out.push(Term {
                rd,
                d,
                refs: refs.iter().map(String::as_str).collect(),
                terms,
                territories,
                uses: 0,
                models: BTreeSet::new(),
                periods: periods(terms),
            });
        }
    }
    for t in &mut out {
        let (uses, models) = uses_and_models(t.terms).map_err(|e| at(e, t.rd, t.d))?;
        let listed = [t.terms.use_type.len(), models.len(), t.periods.len()];
        work = listed.iter().fold(work, |w, n| w.saturating_add(*n as u64));
        t.uses = uses;
        t.models = models;
    }
    Ok((out, work))
}

fn at(e: DdexError, rd: usize, d: usize) -> DdexError {
    match e {
        DdexError::Invalid(m) => invalid(format!("ReleaseDeal {rd} Deal {d}: {m}")),
        other => other,
    }
}

fn periods(t: &pb::DealTerms) -> Vec<(u64, u64)> {
    t.validity_period
        .iter()
        .map(|p| (p.start_secs, p.end_secs))
        .collect()
}

fn twice(code: &str) -> DdexError {
    invalid(format!(
        "territory {:?} is listed twice (or beside Worldwide)",
        shown(code)
    ))
}

fn code_index(code: &str) -> Result<usize, DdexError> {
    index_of(code).ok_or_else(|| DdexError::Territory(shown(code)))
}

/// The deal's territory set and the work of expanding it.
fn territories(t: &pb::DealTerms) -> Result<(TerritorySet, u64), DdexError> {
    if t.territory_code.is_empty() && t.excluded_territory_code.is_empty() {
        return Err(invalid("no TerritoryCode"));
    }
    let all_codes = CODES.len() as u64;
    let mut work = 0u64;
    let mut set = TerritorySet::default();
    let mut worldwide = t.territory_code.is_empty();
    for code in &t.territory_code {
        work = work.saturating_add(1);
        if code == WORLDWIDE {
            if worldwide || !set.is_empty() {
                return Err(twice(code));
            }
            worldwide = true;
            continue;
        }
        let i = code_index(code)?;
        if worldwide || set.contains(i) {
            return Err(twice(code));
        }
        set.insert(i);
    }
    if worldwide {
        set = TerritorySet::all();
        work = work.saturating_add(all_codes);
    }
    let mut excluded = TerritorySet::default();
    for code in &t.excluded_territory_code {
        work = work.saturating_add(1);
        let i = code_index(code)?;
        if !worldwide {
            return Err(invalid(format!(
                "ExcludedTerritoryCode {:?} beside an explicit TerritoryCode list",
                shown(code)
            )));
        }
        if excluded.contains(i) {
            return Err(twice(code));
        }
        excluded.insert(i);
    }
    set.remove_all(&excluded);
    if set.is_empty() {
        return Err(invalid("every territory is excluded"));
    }
    Ok((set, work))
}

/// The deal's use-type mask and commercial model types.
fn uses_and_models(t: &pb::DealTerms) -> Result<(u64, BTreeSet<&str>), DdexError> {
    if t.use_type.is_empty() {
        return Err(invalid("no UseType"));
    }
    let mut mask = 0u64;
    let mut listed: Vec<(&str, u64)> = Vec::new();
    for u in &t.use_type {
        let m = use_type::expand(u)
            .ok_or_else(|| invalid(format!("unknown UseType {:?}", shown(u))))?;
        if let Some((other, _)) = listed.iter().find(|(_, o)| o & m != 0) {
            return Err(invalid(format!(
                "UseType {:?} overlaps {other:?} (the same type, or its parent or child)",
                shown(u)
            )));
        }
        listed.push((u, m));
        mask |= m;
    }
    if t.commercial_model_type.is_empty() {
        return Err(invalid("no CommercialModelType"));
    }
    if t.commercial_model_type.iter().any(String::is_empty) {
        return Err(invalid("an empty CommercialModelType"));
    }
    let models = t.commercial_model_type.iter().map(String::as_str).collect();
    Ok((mask, models))
}
