//! `FlacWriter`: a FLAC encoder that holds one frame at a time.
//!
//! The 42-byte header (`fLaC` and the STREAMINFO block) is reserved first
//! and written last, once the MD5 of the PCM and the sample count are
//! known. Frames are encoded with `flacenc::encode_fixed_size_frame` as soon
//! as a block is full, on a few threads ([`super::frame_pool`]) with a
//! bounded number of blocks in flight, so memory does not grow with the
//! input and the output does not depend on the thread count.

use std::io::{Seek, SeekFrom, Write};

use flacenc::bitsink::ByteSink;
use flacenc::component::{BitRepr, Stream, StreamInfo};
use flacenc::error::{Verified, Verify};
use flacenc::source::{Context, Fill};

use super::frame_pool::{Configs, FramePool};
use super::MediaError;

/// Samples per channel in each FLAC frame (libFLAC's default).
pub const BLOCK_SIZE: usize = 4096;

/// Bytes of `fLaC` and the STREAMINFO metadata block.
pub const HEADER_LEN: usize = 42;

/// The sample rates, channel counts and bit depths the encoder takes.
pub const MAX_SAMPLE_RATE: u32 = 96_000;
pub const MAX_CHANNELS: u32 = 8;

pub(super) fn enc(e: impl std::fmt::Display) -> MediaError {
    MediaError::Encode(e.to_string())
}

/// Whether the encoder takes this format; the reason if not.
pub fn check_format(sample_rate: u32, channels: u32, bits: u32) -> Result<(), MediaError> {
    if !(1..=MAX_SAMPLE_RATE).contains(&sample_rate) {
        return Err(MediaError::Unsupported(format!(
            "sample rate {sample_rate} Hz (at most {MAX_SAMPLE_RATE})"
        )));
    }
    if !(1..=MAX_CHANNELS).contains(&channels) {
        return Err(MediaError::Unsupported(format!(
            "{channels} channels (at most {MAX_CHANNELS})"
        )));
    }
    if !matches!(bits, 8 | 12 | 16 | 20 | 24) {
        return Err(MediaError::Unsupported(format!(
            "{bits} bits per sample (8, 12, 16, 20 or 24)"
        )));
    }
    Ok(())
}

/// What a finished FLAC stream holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlacSummary {
    /// Samples per channel.
    pub frames: u64,
    /// MD5 of the PCM, as STREAMINFO records it.
    pub md5: [u8; 16],
    /// Bytes written, header included.
    pub bytes: u64,
}

/// The most bits a frame of `block` samples per channel takes: each sample
/// verbatim at `bits + 1` (a side channel), a subframe header per channel,
/// and the frame header and CRC. Every frame [`FlacWriter`] writes is
/// within it (`frame_pool::encode_block`).
pub fn max_frame_bits(channels: usize, block: usize, bits: usize) -> usize {
    channels * (block * (bits + 1) + 8 + 32) + 8 * (16 + 2)
}

/// The most bytes the FLAC [`FlacWriter`] makes of `frames` frames can
/// take: STREAMINFO, full blocks, and a short last one.
pub fn max_flac_bytes(frames: u64, channels: u32, bits: u32) -> u64 {
    let (ch, bps) = (channels as usize, bits as usize);
    let frame_bytes = |block: usize| max_frame_bits(ch, block, bps).div_ceil(8) as u64;
    let block = BLOCK_SIZE as u64;
    let rest = (frames % block) as usize;
    let last = if rest == 0 { 0 } else { frame_bytes(rest) };
    (HEADER_LEN as u64)
        .saturating_add((frames / block).saturating_mul(frame_bytes(BLOCK_SIZE)))
        .saturating_add(last)
}

/// flacenc's settings for our fixed blocks, with prediction (fixed and
/// LPC) or without it (verbatim and constant only).
fn encoder_config(predict: bool) -> Result<Verified<flacenc::config::Encoder>, MediaError> {
    let mut config = flacenc::config::Encoder::default();
    config.block_size = BLOCK_SIZE;
    config.multithread = false;
    config.subframe_coding.use_fixed = predict;
    config.subframe_coding.use_lpc = predict;
    config.into_verified().map_err(|(_, e)| enc(e))
}

/// Encodes interleaved PCM to a FLAC stream in `w`.
pub struct FlacWriter<W: Write + Seek> {
    w: W,
    info: StreamInfo,
    pool: FramePool,
    context: Context,
    sink: ByteSink,
    pending: Vec<i32>,
    channels: usize,
    bytes: u64,
}

impl<W: Write + Seek> FlacWriter<W> {
    /// Starts a stream encoded on `threads` threads (at least one); `w`
    /// must be empty and at position 0.
    pub fn new(
        mut w: W,
        sample_rate: u32,
        channels: u32,
        bits: u32,
        threads: usize,
    ) -> Result<Self, MediaError> {
        check_format(sample_rate, channels, bits)?;
        let (rate, ch, bps) = (sample_rate as usize, channels as usize, bits as usize);
        let configs = Configs {
            best: encoder_config(true)?,
            verbatim: encoder_config(false)?,
            bits: bps,
        };
        w.write_all(&[0u8; HEADER_LEN]).map_err(enc)?;
        let info = StreamInfo::new(rate, ch, bps).map_err(enc)?;
        let pool = FramePool::new(threads, &configs, &info, ch, BLOCK_SIZE)?;
        Ok(FlacWriter {
            w,
            info,
            pool,
            context: Context::new(bps, ch),
            sink: ByteSink::new(),
            pending: Vec::with_capacity(BLOCK_SIZE * ch),
            channels: ch,
            bytes: HEADER_LEN as u64,
        })
    }

    /// Appends interleaved samples (any number of whole frames).
    pub fn push(&mut self, mut samples: &[i32]) -> Result<(), MediaError> {
        let block = BLOCK_SIZE * self.channels;
        while !samples.is_empty() {
            let take = (block - self.pending.len()).min(samples.len());
            let (now, rest) = samples.split_at(take);
            self.pending.extend_from_slice(now);
            samples = rest;
            if self.pending.len() == block {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    /// Hands the full block to the pool (the MD5 sees it now, in order),
    /// and writes frames while too many are in flight.
    fn flush_block(&mut self) -> Result<(), MediaError> {
        self.context.fill_interleaved(&self.pending).map_err(enc)?;
        let block = std::mem::replace(
            &mut self.pending,
            Vec::with_capacity(BLOCK_SIZE * self.channels),
        );
        self.pool.submit(block)?;
        while self.pool.in_flight() > self.pool.window() {
            self.write_next()?;
        }
        Ok(())
    }

    /// Writes the next frame in stream order.
    fn write_next(&mut self) -> Result<(), MediaError> {
        let frame = self.pool.next()?;
        self.info.update_frame_info(&frame);
        self.sink.clear();
        frame.write(&mut self.sink).map_err(enc)?;
        self.w.write_all(self.sink.as_slice()).map_err(enc)?;
        self.bytes += self.sink.as_slice().len() as u64;
        Ok(())
    }

    /// Encodes what is left, writes the header and returns the writer.
    pub fn finish(mut self) -> Result<(W, FlacSummary), MediaError> {
        if !self.pending.is_empty() {
            if !self.pending.len().is_multiple_of(self.channels) {
                return Err(MediaError::Corrupt("a partial sample frame".into()));
            }
            self.flush_block()?;
        }
        while self.pool.in_flight() > 0 {
            self.write_next()?;
        }
        if self.context.total_samples() == 0 {
            return Err(MediaError::NoSamples);
        }
        let md5 = self.context.md5_digest();
        self.info.set_md5_digest(&md5);
        self.info.set_total_samples(self.context.total_samples());
        // A short last block must not become the minimum block size: readers
        // take min != max for a variable-block stream.
        self.info
            .set_block_sizes(BLOCK_SIZE, BLOCK_SIZE)
            .map_err(enc)?;
        let mut header = ByteSink::new();
        Stream::with_stream_info(self.info.clone())
            .write(&mut header)
            .map_err(enc)?;
        if header.as_slice().len() != HEADER_LEN {
            return Err(enc(format!("header of {} bytes", header.as_slice().len())));
        }
        self.w.seek(SeekFrom::Start(0)).map_err(enc)?;
        self.w.write_all(header.as_slice()).map_err(enc)?;
        self.w.flush().map_err(enc)?;
        let summary = FlacSummary {
            frames: self.context.total_samples() as u64,
            md5,
            bytes: self.bytes,
        };
        Ok((self.w, summary))
    }
}
