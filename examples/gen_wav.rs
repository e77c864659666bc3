//! Writes a music-like test WAV (`stave::media::wav::music_like`), one
//! second at a time: `cargo run --release --example gen_wav -- OUT MINUTES
//! [RATE CHANNELS BITS]` (default 44,100 Hz, 2 channels, 16 bits). Used to
//! measure the transcode worker (BENCHMARKS.md, (h)).

use std::io::{BufWriter, Write};

use stave::media::wav::{music_like, write_header, write_samples};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: u64| -> u64 {
        args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
    };
    let out = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "/tmp/test.wav".into());
    let (minutes, rate, ch, bits) = (
        arg(2, 10),
        arg(3, 44_100) as u32,
        arg(4, 2) as u16,
        arg(5, 16) as u16,
    );
    let frames = minutes * 60 * u64::from(rate);
    let mut w = BufWriter::new(std::fs::File::create(&out)?);
    write_header(&mut w, rate, ch, bits, frames)?;
    let second = music_like(rate, ch, bits, u64::from(rate));
    for _ in 0..minutes * 60 {
        write_samples(&mut w, bits, &second)?;
    }
    w.flush()?;
    eprintln!("wrote {out}: {minutes} min, {rate} Hz, {ch} ch, {bits} bits");
    Ok(())
}
