//! Consensus validation of a release on any protobuf bytes (a tx is
//! untrusted): no panic, the same answer twice. The invariants are
//! `stave_ddex::ddex::fuzz_fixtures::validate_case`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stave_ddex::ddex::fuzz_fixtures::validate_case(data));
