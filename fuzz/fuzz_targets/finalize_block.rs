//! The `finalize_block` target: its invariants are
//! `stave::fuzz_fixtures::block::block_case` (src/fuzz_fixtures/).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stave::fuzz_fixtures::block::block_case(data));
