//! A scratch directory per fuzzing process: the worker's entry points take
//! paths, as they do in the child, so each input is written to a file.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("stave-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch dir");
        d
    })
}
