//! `PcmSource`: any audio file symphonia reads, as exact interleaved integer
//! PCM, one packet at a time.
//!
//! symphonia hands integer samples out full-scale (a 16-bit sample shifted
//! left by 16, FLAC always left-justified in 32 bits), so each sample is
//! shifted back by `32 - bits_per_sample`. For a lossless source the bits
//! shifted out must be zero, or the file holds more than it declares. A
//! lossy source (MP3, AAC, Vorbis) decodes to floats and has no bit depth:
//! it becomes 16-bit PCM. Float PCM becomes 24-bit PCM; neither is called
//! lossless in the facts.

use std::fs::File;
use std::path::Path;

use symphonia::core::codecs::audio::{AudioDecoder, AudioDecoderOptions};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, TrackType};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;

use super::MediaError;

/// The bit depth a lossy source is decoded to.
pub const LOSSY_BITS: u32 = 16;

/// The bit depth float PCM is quantised to.
pub const FLOAT_BITS: u32 = 24;

/// An open audio file, decoding one packet per [`PcmSource::next_chunk`].
pub struct PcmSource {
    format: Box<dyn FormatReader>,
    decoder: Box<dyn AudioDecoder>,
    track_id: u32,
    shift: u32,
    /// Samples per second.
    pub sample_rate: u32,
    /// Interleaved channels.
    pub channels: u32,
    /// Bits per output sample.
    pub bits_per_sample: u32,
    /// The frame count the container declares, when it does.
    pub declared_frames: Option<u64>,
    /// symphonia's short name of the codec (`pcm_s16le`, `flac`, `mp3`, …).
    pub codec: String,
    /// Whether the source codec is lossless (it declares a bit depth).
    pub lossless: bool,
}

/// A probe failure: a recognised container that is malformed or cut short
/// is corrupt; anything else is not audio.
fn not_audio(e: SymError) -> MediaError {
    match e {
        SymError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            MediaError::Corrupt(format!("truncated: {io}"))
        }
        SymError::DecodeError(m) => MediaError::Corrupt(format!("malformed: {m}")),
        other => MediaError::NotAudio(other.to_string()),
    }
}

fn corrupt(e: SymError) -> MediaError {
    MediaError::Corrupt(e.to_string())
}

impl PcmSource {
    /// Opens `path` and its default audio track. With `verify`, a decoder
    /// that can check the stream's own digest (FLAC's MD5) does so, and
    /// [`PcmSource::finish`] reports it.
    pub fn open(path: &Path, verify: bool) -> Result<Self, MediaError> {
        let file = File::open(path).map_err(|e| MediaError::io(path, e))?;
        let mss = MediaSourceStream::new(Box::new(file), Default::default());
        let mut hint = Hint::new();
        if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
            hint.with_extension(ext);
        }
        let format = symphonia::default::get_probe()
            .probe(
                &hint,
                mss,
                FormatOptions::default(),
                MetadataOptions::default(),
            )
            .map_err(not_audio)?;
        let track = format
            .default_track(TrackType::Audio)
            .ok_or_else(|| MediaError::NotAudio("no audio track".into()))?;
        let (track_id, declared_frames) = (track.id, track.num_frames);
        let params = track
            .codec_params
            .as_ref()
            .and_then(|p| p.audio())
            .ok_or_else(|| MediaError::NotAudio("the track is not audio".into()))?
            .clone();
        let opts = AudioDecoderOptions::default().verify(verify);
        let decoder = symphonia::default::get_codecs()
            .make_audio_decoder(&params, &opts)
            .map_err(|e| MediaError::Unsupported(e.to_string()))?;
        Self::with_decoder(format, decoder, track_id, declared_frames)
    }

    fn with_decoder(
        format: Box<dyn FormatReader>,
        decoder: Box<dyn AudioDecoder>,
        track_id: u32,
        declared_frames: Option<u64>,
    ) -> Result<Self, MediaError> {
        let p = decoder.codec_params();
        let codec = decoder.codec_info().short_name.to_string();
        // Float PCM (a common export format for masters) is quantised to
        // 24 bits, and is not called lossless.
        let float = codec.starts_with("pcm_f");
        let lossless = p.bits_per_sample.is_some() && !float;
        let bits = match p.bits_per_sample {
            _ if float => FLOAT_BITS,
            Some(b) => b,
            None => LOSSY_BITS,
        };
        if !(1..=32).contains(&bits) {
            return Err(MediaError::Unsupported(format!("{bits} bits per sample")));
        }
        let sample_rate = p
            .sample_rate
            .filter(|r| *r > 0)
            .ok_or_else(|| MediaError::NotAudio("no sample rate".into()))?;
        let channels = p
            .channels
            .as_ref()
            .map(|c| c.count())
            .filter(|c| *c > 0)
            .ok_or_else(|| MediaError::NotAudio("no channels".into()))?;
        Ok(PcmSource {
            format,
            decoder,
            track_id,
            shift: 32 - bits,
            sample_rate,
            channels: u32::try_from(channels).unwrap_or(u32::MAX),
            bits_per_sample: bits,
            declared_frames,
            codec,
            lossless,
        })
    }

    /// Replaces `out` with the next packet's interleaved samples. `Ok(false)`
    /// at the end of the stream.
    pub fn next_chunk(&mut self, out: &mut Vec<i32>) -> Result<bool, MediaError> {
        loop {
            let packet = match self.format.next_packet() {
                Ok(Some(p)) => p,
                Ok(None) => return Ok(false),
                Err(SymError::ResetRequired) => {
                    return Err(MediaError::Unsupported("chained streams".into()))
                }
                Err(e) => return Err(corrupt(e)),
            };
            if packet.track_id != self.track_id {
                continue;
            }
            let buf = self.decoder.decode(&packet).map_err(corrupt)?;
            if buf.frames() == 0 {
                continue;
            }
            let frames = buf.frames();
            buf.copy_to_vec_interleaved::<i32>(out);
            if out.len() != frames.saturating_mul(self.channels as usize) {
                return Err(MediaError::Corrupt(format!(
                    "{} samples for {frames} frames of {} channels",
                    out.len(),
                    self.channels
                )));
            }
            self.narrow(out)?;
            return Ok(true);
        }
    }

    /// Shifts full-scale samples back to `bits_per_sample`.
    fn narrow(&self, out: &mut [i32]) -> Result<(), MediaError> {
        if self.shift == 0 {
            return Ok(());
        }
        let mask = ((1u32 << self.shift) - 1) as i32;
        for s in out.iter_mut() {
            if self.lossless && *s & mask != 0 {
                return Err(MediaError::Corrupt(format!(
                    "a sample is wider than the declared {} bits",
                    self.bits_per_sample
                )));
            }
            *s >>= self.shift;
        }
        Ok(())
    }

    /// Ends decoding: `Some(true)` if the stream's own digest was checked
    /// and matched, `Some(false)` if it did not, `None` if not checked.
    pub fn finish(&mut self) -> Option<bool> {
        self.decoder.finalize().verify_ok
    }
}
