use super::*;

#[test]
fn seeds_reach_their_paths_and_random_inputs_hold() {
    crate::fuzz_fixtures::common::check_mode_target(seeds(), run, crypto_case);
}
