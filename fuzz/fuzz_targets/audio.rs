//! The worker's audio path on any bytes: probe, decode (WAV, AIFF, FLAC,
//! MP3, AAC, Ogg), FLAC encode, decode again and compare, hash. The
//! invariants are `stave_media::fuzz_fixtures::audio_case`.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "scratch.rs"]
mod scratch;

fuzz_target!(|data: &[u8]| stave_media::fuzz_fixtures::audio_case(scratch::dir(), data));
