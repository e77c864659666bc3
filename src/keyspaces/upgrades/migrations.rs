//! The migrations this binary knows, by name and target app version.
//!
//! A release that changes consensus rules registers its migration here and
//! keeps the old rules behind `app_version` (read with
//! [`super::UpgradesRead::app_version`]), so that it replays the blocks from
//! before its upgrade as they ran. The release binary knows none yet; a
//! build with the `upgrade-test` feature knows [`super::test_v2`], which the
//! upgrade e2e test runs.

use crate::store::{StateWrite, StoreError};

/// The (name, app_version) of every migration this binary can run.
pub fn known() -> &'static [(&'static str, u64)] {
    #[cfg(feature = "upgrade-test")]
    {
        &[(super::test_v2::NAME, super::test_v2::APP_VERSION)]
    }
    #[cfg(not(feature = "upgrade-test"))]
    {
        &[]
    }
}

/// The newest app version whose rules this binary runs.
pub fn newest_known() -> u64 {
    known()
        .iter()
        .map(|(_, v)| *v)
        .fold(super::GENESIS_APP_VERSION, u64::max)
}

/// Runs migration `name` to `app_version` over `state`; `None` when this
/// binary does not know that pair. Every migration is idempotent: run over
/// its own output it changes nothing.
pub fn run<S: StateWrite>(
    name: &str,
    app_version: u64,
    state: &mut S,
) -> Option<Result<(), StoreError>> {
    let _ = (&state, app_version);
    match name {
        #[cfg(feature = "upgrade-test")]
        super::test_v2::NAME if app_version == super::test_v2::APP_VERSION => {
            Some(super::test_v2::migrate(state))
        }
        _ => None,
    }
}
