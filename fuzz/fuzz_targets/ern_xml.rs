//! The ERN 4.3 importer on any bytes (a label's file is untrusted): no
//! panic, and an accepted message round-trips through the exporter. The
//! invariants are `stave_ddex::ddex::fuzz_fixtures::xml_case`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stave_ddex::ddex::fuzz_fixtures::xml_case(data));
