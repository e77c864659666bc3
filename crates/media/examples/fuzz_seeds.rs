//! Writes the seed corpus of each fuzz target under DIR/<target>/:
//! `cargo run -p stave-media --example fuzz_seeds -- DIR` (scripts/fuzz
//! runs it).

use std::path::{Path, PathBuf};

use stave_media::fuzz_fixtures::{audio_seeds, image_seeds, worker_run};
use stave_media::worker::reply_line;

fn write(dir: &Path, target: &str, seeds: Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
    let d = dir.join(target);
    std::fs::create_dir_all(&d)?;
    for (name, bytes) in seeds {
        std::fs::write(d.join(name), bytes)?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: fuzz_seeds DIR")?);
    let scratch = std::env::temp_dir().join(format!("stave-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    write(&dir, "audio", audio_seeds(&scratch))?;
    write(&dir, "image", image_seeds())?;
    let (_, done) = worker_run(&scratch);
    let refused: Result<_, _> = Err(stave_media::MediaError::NotAudio("seed".into()));
    let replies = vec![
        ("done.json".to_string(), reply_line(&done)?.into_bytes()),
        (
            "refused.json".to_string(),
            reply_line(&refused)?.into_bytes(),
        ),
    ];
    write(&dir, "worker_reply", replies)?;
    std::fs::remove_dir_all(&scratch)?;
    Ok(())
}
