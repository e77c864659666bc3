//! Writes the seeds of the node's fuzz targets under DIR/<target>/:
//! `cargo run --release --example node_fuzz_seeds -- DIR` (scripts/fuzz runs
//! it). The seeds come from `stave::fuzz_fixtures::seeds`, which the
//! corpus replay test also runs.

use std::path::PathBuf;

use stave::fuzz_fixtures::{seeds, TARGETS};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: fuzz_seeds DIR")?);
    for target in TARGETS {
        let d = dir.join(target);
        std::fs::create_dir_all(&d)?;
        for (name, bytes) in seeds(target) {
            std::fs::write(d.join(format!("seed-{name}")), bytes)?;
        }
    }
    Ok(())
}
