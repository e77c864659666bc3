//! The `abci_frame` target: its invariants are
//! `stave::fuzz_fixtures::frame::frame_case` (src/fuzz_fixtures/).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stave::fuzz_fixtures::frame::frame_case(data));
