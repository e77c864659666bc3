//! A minimal WAV (RIFF, PCM format 1) writer: for tests, benchmarks and
//! generated test signals. Samples are signed integers of `bits` bits
//! (8-bit WAV stores them offset by 128, as the format requires).

use std::io::Write;

/// Writes a WAV header for `frames` frames.
pub fn write_header(
    w: &mut impl Write,
    sample_rate: u32,
    channels: u16,
    bits: u16,
    frames: u64,
) -> std::io::Result<()> {
    let block = u32::from(channels) * u32::from(bits.div_ceil(8));
    let data = u32::try_from(frames * u64::from(block)).unwrap_or(u32::MAX - 36);
    w.write_all(b"RIFF")?;
    w.write_all(&(36 + data).to_le_bytes())?;
    w.write_all(b"WAVEfmt ")?;
    w.write_all(&16u32.to_le_bytes())?;
    w.write_all(&1u16.to_le_bytes())?;
    w.write_all(&channels.to_le_bytes())?;
    w.write_all(&sample_rate.to_le_bytes())?;
    w.write_all(&(sample_rate * block).to_le_bytes())?;
    w.write_all(&(block as u16).to_le_bytes())?;
    w.write_all(&bits.to_le_bytes())?;
    w.write_all(b"data")?;
    w.write_all(&data.to_le_bytes())
}

/// Writes interleaved samples of `bits` bits (8, 16 or 24).
pub fn write_samples(w: &mut impl Write, bits: u16, samples: &[i32]) -> std::io::Result<()> {
    let bytes = usize::from(bits.div_ceil(8));
    let mut out = Vec::with_capacity(samples.len() * bytes);
    for &s in samples {
        if bits == 8 {
            out.push((s + 128) as u8);
        } else {
            out.extend_from_slice(&s.to_le_bytes()[..bytes]);
        }
    }
    w.write_all(&out)
}

/// A whole WAV file in memory.
pub fn wav_bytes(sample_rate: u32, channels: u16, bits: u16, samples: &[i32]) -> Vec<u8> {
    let frames = (samples.len() / usize::from(channels.max(1))) as u64;
    let mut out = Vec::with_capacity(44 + samples.len() * 3);
    // Writing to a Vec cannot fail.
    let _ = write_header(&mut out, sample_rate, channels, bits, frames);
    let _ = write_samples(&mut out, bits, samples);
    out
}

/// A deterministic music-like test signal: a few decaying notes with
/// harmonics and a little noise, `frames` frames of `channels` channels at
/// `bits` bits. Integer arithmetic only, so it is the same on every machine.
pub fn music_like(sample_rate: u32, channels: u16, bits: u16, frames: u64) -> Vec<i32> {
    let amp = (1i64 << (bits - 1)) / 4;
    let mut noise = 0x2545_F491_4F6C_DD1Du64;
    let mut out = Vec::with_capacity(frames as usize * usize::from(channels));
    // Notes as (period in samples at 44.1 kHz, scaled to the rate).
    let periods = [100u64, 151, 201, 302, 67];
    let note_len = u64::from(sample_rate / 2).max(1);
    for t in 0..frames {
        let note = periods[((t / note_len) % periods.len() as u64) as usize];
        let period = (note * u64::from(sample_rate) / 44_100).max(2);
        let age = t % note_len;
        let env = (note_len - age) as i64; // linear decay over the note
        let mut v = 0i64;
        for h in 1..=3u64 {
            v += tri(t * h, period) * amp / (1024 * h as i64 * 2);
        }
        v = v * env / note_len as i64;
        for c in 0..u64::from(channels) {
            noise ^= noise << 13;
            noise ^= noise >> 7;
            noise ^= noise << 17;
            let n = (noise % 9) as i64 - 4;
            let pan = v * (4 + c as i64) / 5;
            out.push((pan + n).clamp(-amp * 4, amp * 4 - 1) as i32);
        }
    }
    out
}

/// A triangle wave in `-1024..=1024`.
fn tri(t: u64, period: u64) -> i64 {
    let x = (t % period) as i64 * 4096 / period as i64; // 0..4096
    if x < 2048 {
        x - 1024
    } else {
        3072 - x
    }
}
