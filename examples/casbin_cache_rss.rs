//! Review B1 at the default limits: 512 attacker models, each filled up to
//! `max_model_pattern_weight` with patterns at `max_pattern_weight`, read by
//! both `regexMatch` and `keyMatch2`, evaluated once each on the consensus
//! path and once each on the query path. Prints peak RSS (VmHWM) and the
//! caches' accounted bytes. Not a test: nothing is asserted.
//!
//! `cargo run --release --example casbin_cache_rss [MODELS]`

use std::time::Instant;

use stave::app::dispatch;
use stave::keyspaces::casbin::measure::pattern_weight;
use stave::keyspaces::casbin::{cache, enforce_with, CacheUse, CasbinRequest};
use stave::keyspaces::casbin::{AddCasbinModel, AddCasbinRule};
use stave::keyspaces::params::{Params, ParamsWrite};
use stave::keyspaces::TxContext;
use stave::store::{MemState, Overlay};
use stave::tx::Action;

const OWNER: [u8; 32] = [7; 32];

fn run(s: &mut MemState, action: Action) {
    let mut ctx = TxContext {
        height: 1,
        time_ns: 0,
        signer: OWNER,
        signing_key: OWNER,
        tx_id: [0; 32],
        chain_id: "bench".into(),
        signature: [0; 64],
        action_index: 0,
        params: Params::default(),
        events: Vec::new(),
        unsponsored_others: std::cell::Cell::new(0),
    };
    let mut ov = Overlay::new(&*s);
    dispatch(&action, &mut ov, &mut ctx).expect("action applies");
    let changes = ov.into_changes();
    s.apply_changes(changes);
}

fn model_text() -> String {
    let calls: Vec<String> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .flat_map(|f| {
            [
                format!("regexMatch(r.obj, p.{f})"),
                format!("keyMatch2(r.obj, p.{f})"),
            ]
        })
        .collect();
    format!(
        "[request_definition]\nr = sub, obj, act\n[policy_definition]\np = a, b, c, d, e, f\n\
         [policy_effect]\ne = some(where (p.eft == allow))\n[matchers]\nm = {}\n",
        calls.join(" || ")
    )
}

/// Rules of six `[^a]{n}` values, n falling from the largest the pattern
/// cap allows, until the model's total weight is full.
fn fill(s: &mut MemState, id: &str, p: &stave::keyspaces::casbin::CasbinParams) {
    let (mut total, mut n, mut slot) = (0u64, 270u32, 0u32);
    while n > 6 {
        let values: Vec<String> = (0..6).map(|k| format!("[^a]{{{}}}", n - k)).collect();
        let w: u64 = values
            .iter()
            .map(|v| pattern_weight(v).unwrap() + pattern_weight(&format!("^{v}$")).unwrap())
            .sum();
        if total + w > p.max_model_pattern_weight {
            n -= 6;
            continue;
        }
        total += w;
        run(
            s,
            Action::AddCasbinRule(AddCasbinRule {
                model_id: id.into(),
                rule_index: slot,
                ptype: "p".into(),
                values,
            }),
        );
        slot += 1;
        n -= 6;
    }
}

fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

fn main() {
    let models: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(512);
    let mut s = MemState::default();
    let mut ov = Overlay::new(&s);
    ov.put_params(&Params::default());
    let changes = ov.into_changes();
    s.apply_changes(changes);
    let p = Params::default().casbin;
    let ids: Vec<String> = (0..models)
        .map(|i| format!("{}/m{i}", hex::encode(OWNER)))
        .collect();
    for id in &ids {
        run(
            &mut s,
            Action::AddCasbinModel(AddCasbinModel {
                model_id: id.clone(),
                perm_model: model_text(),
            }),
        );
        fill(&mut s, id, &p);
    }
    println!("{models} models stored; peak RSS {} MiB", peak_rss_mib());
    let obj = "x".repeat(300);
    let req = CasbinRequest {
        sub: "s",
        obj: &obj,
        act: "access",
        territory: "GB",
    };
    for which in [CacheUse::Consensus, CacheUse::Query] {
        let start = Instant::now();
        for id in &ids {
            enforce_with(&s, id, &req, which).unwrap();
        }
        let st = cache::stats(which);
        println!(
            "{which:?}: {models} Enforce in {:.1} s; cache {} entries, {} MiB accounted of {} MiB; peak RSS {} MiB",
            start.elapsed().as_secs_f64(),
            st.entries,
            st.bytes >> 20,
            cache::budget(which) >> 20,
            peak_rss_mib()
        );
    }
}
