//! `transcode_to_flac`: a received audio file to a verified FLAC file, its
//! facts and its cid.
//!
//! Steps: check the input's size; decode it packet by packet, encoding each
//! packet's PCM as it comes and hashing it; check the frame count against
//! what the container declared; write the FLAC to `<output>.part`; decode
//! it again and compare its PCM digest, its frame counts and its own MD5
//! with the input's. Only then is it renamed to `output`.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::cid::{raw_cid_of_file, RawCid};
use super::decode::PcmSource;
use super::flac::{check_format, FlacWriter};
use super::MediaError;

/// Caps on one input, and the threads that encode it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of the input file.
    pub max_input_bytes: u64,
    /// Frames (samples per channel) of decoded audio.
    pub max_frames: u64,
    /// Threads encoding FLAC frames (the FLAC is the same for any count).
    pub threads: usize,
}

/// The most encoder threads a worker runs: each reserves address space
/// (its stack, its allocator heap) under the worker's RLIMIT_AS, and 64
/// no longer start under the default 1 GiB.
pub const MAX_THREADS: usize = 16;

/// The machine's cores, or 1 if unknown.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

impl Default for Limits {
    /// 2 GiB of input, 2 hours at 96 kHz, one encoder thread per core.
    fn default() -> Self {
        Limits {
            max_input_bytes: 2 << 30,
            max_frames: 2 * 3600 * 96_000,
            threads: cores(),
        }
    }
}

/// What the manifest records about the audio.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AudioFacts {
    pub sample_rate: u32,
    pub channels: u32,
    pub bits_per_sample: u32,
    /// Samples per channel.
    pub frames: u64,
    /// symphonia's short name of the source codec (`pcm_s16le`, `flac`,
    /// `mp3`, …), so a FLAC made from MP3 is never taken for a master.
    pub source_codec: String,
    /// Whether the source was lossless.
    pub lossless_source: bool,
}

impl AudioFacts {
    /// Duration in milliseconds, rounded down.
    pub fn duration_ms(&self) -> u64 {
        self.frames.saturating_mul(1000) / u64::from(self.sample_rate.max(1))
    }
}

/// A finished transcode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcoded {
    pub facts: AudioFacts,
    /// The FLAC file's cid and length.
    pub flac_cid: RawCid,
    pub flac_bytes: u64,
    /// sha256 of the PCM (each sample as 4 bytes little-endian).
    pub pcm_sha256: [u8; 32],
    /// Where the time went (for the operator and the benchmarks).
    pub timings: Timings,
}

/// Milliseconds each part of [`transcode_to_flac`] took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timings {
    /// Decoding the input and encoding the FLAC.
    pub encode_ms: u64,
    /// Decoding the FLAC again and comparing it with the input.
    pub verify_ms: u64,
    /// Hashing the FLAC for its cid.
    pub hash_ms: u64,
}

fn ms_since(t: std::time::Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Feeds samples to `h` as 4-byte little-endian words, in one update per
/// chunk (an update per sample costs more than the hashing).
fn hash_samples(h: &mut Sha256, samples: &[i32], scratch: &mut Vec<u8>) {
    scratch.clear();
    scratch.extend(samples.iter().flat_map(|s| s.to_le_bytes()));
    h.update(scratch.as_slice());
}

fn check_input(input: &Path, limits: &Limits) -> Result<(), MediaError> {
    let size = std::fs::metadata(input)
        .map_err(|e| MediaError::io(input, e))?
        .len();
    if size == 0 {
        return Err(MediaError::Empty);
    }
    if size > limits.max_input_bytes {
        return Err(MediaError::TooLarge {
            size,
            cap: limits.max_input_bytes,
        });
    }
    Ok(())
}

fn too_long(src: &PcmSource, frames: u64, limits: &Limits) -> Result<(), MediaError> {
    if frames > limits.max_frames {
        return Err(MediaError::TooLong {
            frames,
            sample_rate: src.sample_rate,
            cap: limits.max_frames,
        });
    }
    Ok(())
}

/// Where the FLAC is written before it is complete.
pub fn part_path(output: &Path) -> PathBuf {
    let mut p = output.as_os_str().to_owned();
    p.push(".part");
    PathBuf::from(p)
}

/// Decodes `input` and writes it to `output` as FLAC, verified before it
/// takes its final name. On any error nothing is left at `<output>.part`,
/// and `output` is not created.
///
/// Run it only inside the transcode worker ([`super::worker`]): the
/// decoders' own allocations are bounded by the worker's limits, not here.
pub fn transcode_to_flac(
    input: &Path,
    output: &Path,
    limits: &Limits,
) -> Result<Transcoded, MediaError> {
    let part = part_path(output);
    let start = std::time::Instant::now();
    let result = encode(input, &part, limits).and_then(|(facts, pcm_sha256)| {
        let mut timings = Timings {
            encode_ms: ms_since(start),
            ..Timings::default()
        };
        let t = std::time::Instant::now();
        verify(&part, &facts, &pcm_sha256).map_err(|e| match e {
            MediaError::Mismatch(_) | MediaError::Io { .. } => e,
            other => MediaError::Mismatch(other.to_string()),
        })?;
        timings.verify_ms = ms_since(t);
        let t = std::time::Instant::now();
        let (flac_cid, flac_bytes) = raw_cid_of_file(&part)?;
        timings.hash_ms = ms_since(t);
        std::fs::rename(&part, output).map_err(|e| MediaError::io(output, e))?;
        Ok(Transcoded {
            facts,
            flac_cid,
            flac_bytes,
            pcm_sha256,
            timings,
        })
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    result
}

fn encode(
    input: &Path,
    part: &Path,
    limits: &Limits,
) -> Result<(AudioFacts, [u8; 32]), MediaError> {
    check_input(input, limits)?;
    let mut src = PcmSource::open(input, false)?;
    check_format(src.sample_rate, src.channels, src.bits_per_sample)?;
    if let Some(declared) = src.declared_frames {
        too_long(&src, declared, limits)?;
    }
    let file = File::create(part).map_err(|e| MediaError::io(part, e))?;
    let mut flac = FlacWriter::new(
        BufWriter::new(file),
        src.sample_rate,
        src.channels,
        src.bits_per_sample,
        limits.threads,
    )?;
    let (mut buf, mut hash, mut frames, mut scratch) =
        (Vec::new(), Sha256::new(), 0u64, Vec::new());
    while src.next_chunk(&mut buf)? {
        frames += (buf.len() / src.channels as usize) as u64;
        too_long(&src, frames, limits)?;
        hash_samples(&mut hash, &buf, &mut scratch);
        flac.push(&buf)?;
    }
    if src.lossless {
        if let Some(declared) = src.declared_frames.filter(|d| *d != frames) {
            return Err(MediaError::Corrupt(format!(
                "the header declares {declared} frames, the file holds {frames}"
            )));
        }
    }
    let (w, summary) = flac.finish()?;
    let file = w
        .into_inner()
        .map_err(|e| MediaError::io(part, e.into_error()))?;
    file.sync_all().map_err(|e| MediaError::io(part, e))?;
    let facts = AudioFacts {
        sample_rate: src.sample_rate,
        channels: src.channels,
        bits_per_sample: src.bits_per_sample,
        frames: summary.frames,
        source_codec: src.codec.clone(),
        lossless_source: src.lossless,
    };
    Ok((facts, hash.finalize().into()))
}

/// Decodes the FLAC at `path` and checks it against the input's facts and
/// PCM digest, and against its own MD5.
pub fn verify(path: &Path, facts: &AudioFacts, pcm_sha256: &[u8; 32]) -> Result<(), MediaError> {
    let mut src = PcmSource::open(path, true)?;
    let format = (src.sample_rate, src.channels, src.bits_per_sample);
    let want = (facts.sample_rate, facts.channels, facts.bits_per_sample);
    if format != want {
        return Err(MediaError::Mismatch(format!(
            "format {format:?}, the input's {want:?}"
        )));
    }
    let (mut buf, mut hash, mut frames, mut scratch) =
        (Vec::new(), Sha256::new(), 0u64, Vec::new());
    while src.next_chunk(&mut buf)? {
        frames += (buf.len() / src.channels as usize) as u64;
        hash_samples(&mut hash, &buf, &mut scratch);
    }
    if src.codec != "flac" || src.declared_frames != Some(facts.frames) {
        return Err(MediaError::Mismatch(format!(
            "codec {} declaring {:?} frames, want flac declaring {}",
            src.codec, src.declared_frames, facts.frames
        )));
    }
    if frames != facts.frames {
        return Err(MediaError::Mismatch(format!(
            "{frames} frames, the input's {}",
            facts.frames
        )));
    }
    if <[u8; 32]>::from(hash.finalize()) != *pcm_sha256 {
        return Err(MediaError::Mismatch(format!(
            "the PCM differs ({frames} frames, sha256 of the input {})",
            hex::encode(pcm_sha256)
        )));
    }
    if src.finish() != Some(true) {
        return Err(MediaError::Mismatch(
            "the stream's MD5 does not match".into(),
        ));
    }
    Ok(())
}
