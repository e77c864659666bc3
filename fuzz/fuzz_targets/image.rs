//! The worker's artwork path on any bytes: sniff, decode (PNG, JPEG, WebP)
//! under `image::Limits`, write an 8-bit PNG, hash. The invariants are
//! `stave_media::fuzz_fixtures::image_case`.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "scratch.rs"]
mod scratch;

fuzz_target!(|data: &[u8]| stave_media::fuzz_fixtures::image_case(scratch::dir(), data));
