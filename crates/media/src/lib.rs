//! Media processing for the upload pipeline: decoding received audio,
//! encoding it losslessly to FLAC, and content ids.
//!
//! ```text
//!  input file ──▶ decode::PcmSource (symphonia: WAV, AIFF, FLAC, MP3, AAC, Ogg)
//!                   │ interleaved i32 PCM, one packet at a time
//!                   ▼
//!                 flac::FlacWriter (flacenc, one fixed-size frame at a time,
//!                   │ STREAMINFO patched at the end: MD5, total samples)
//!                   ▼
//!  output.flac ──▶ transcode::verify (decode again, compare PCM digests)
//!                   ▼
//!                 cid::raw_cid (CIDv1, raw codec, sha2-256)
//!
//!  artwork ──▶ image::normalise_to_png (JPEG, PNG, WebP under
//!              image::Limits → 8-bit PNG, pixels only) ──▶ cid::raw_cid
//! ```
//!
//! Nothing here touches chain state. Stave's own buffers hold one packet
//! and one FLAC frame, whatever the length of the input (the worker's peak
//! RSS is the same for 1 and 60 minutes, BENCHMARKS.md (h)); the decoders'
//! own allocations (a container's sample tables, say) are bounded only by
//! the worker's limits, so untrusted input is decoded only in
//! [`worker`]. Every failure is a [`MediaError`] with a stable
//! [`MediaError::code`].

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

#[doc(hidden)]
pub mod art_samples;
pub mod cid;
pub mod decode;
mod error;
pub mod flac;
mod frame_pool;
#[doc(hidden)]
pub mod fuzz_fixtures;
pub mod image;
pub mod transcode;
pub mod wav;
pub mod worker;

pub use error::MediaError;
pub use transcode::{transcode_to_flac, AudioFacts, Limits, Transcoded};

#[cfg(test)]
mod tests;
