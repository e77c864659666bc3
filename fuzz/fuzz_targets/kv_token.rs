//! The `kv_token` target: its invariants are
//! `stave::fuzz_fixtures::token::token_case` (src/fuzz_fixtures/).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stave::fuzz_fixtures::token::token_case(data));
