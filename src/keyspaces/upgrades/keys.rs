//! Key builders of `upgrades/`:
//! - `upgrades/app_version`: the version whose rules run (absent: 1);
//! - `upgrades/scheduled`: the plan that passed and has not run;
//! - `upgrades/proposal/{name}/{height:8}{app_version:8}`: a plan and its
//!   election (names hold no `/`, so the key is unambiguous);
//! - `upgrades/applied/{name}`: a migration that ran.

const APP_VERSION: &[u8] = b"upgrades/app_version";
const SCHEDULED: &[u8] = b"upgrades/scheduled";
const PROPOSAL: &[u8] = b"upgrades/proposal/";
const APPLIED: &[u8] = b"upgrades/applied/";

pub fn app_version_key() -> Vec<u8> {
    APP_VERSION.to_vec()
}

pub fn scheduled_key() -> Vec<u8> {
    SCHEDULED.to_vec()
}

pub fn proposals_prefix() -> Vec<u8> {
    PROPOSAL.to_vec()
}

pub fn proposal_key(name: &str, height: u64, app_version: u64) -> Vec<u8> {
    [
        PROPOSAL,
        name.as_bytes(),
        b"/",
        &height.to_be_bytes(),
        &app_version.to_be_bytes(),
    ]
    .concat()
}

pub fn applied_prefix() -> Vec<u8> {
    APPLIED.to_vec()
}

pub fn applied_key(name: &str) -> Vec<u8> {
    [APPLIED, name.as_bytes()].concat()
}
