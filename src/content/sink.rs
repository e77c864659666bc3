//! Where an upload's bytes go: the audio file, then each artwork file,
//! each exactly its declared length. Audio chunks fill the first file
//! only; artwork chunks may start only once the audio is complete, and
//! may span two artwork files.

use std::path::PathBuf;

use tokio::io::AsyncWriteExt;

use super::IngestError;

/// The files one upload fills, in order: (path, declared bytes).
pub struct Sink {
    files: Vec<(PathBuf, u64)>,
    /// The file being written, and how much of it is.
    at: usize,
    filled: u64,
    out: Option<tokio::io::BufWriter<tokio::fs::File>>,
    sent: u64,
}

/// Which part of the upload a chunk says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Audio,
    Art,
}

fn disk(path: &std::path::Path) -> impl Fn(std::io::Error) -> IngestError + '_ {
    move |e| IngestError::Disk(format!("{}: {e}", path.display()))
}

impl Sink {
    /// `files[0]` is the audio; the rest are the artwork files.
    pub fn new(files: Vec<(PathBuf, u64)>) -> Self {
        Sink {
            files,
            at: 0,
            filled: 0,
            out: None,
            sent: 0,
        }
    }

    /// Every byte the upload declares.
    pub fn declared(&self) -> u64 {
        self.files
            .iter()
            .fold(0u64, |a, (_, n)| a.saturating_add(*n))
    }

    /// Bytes taken so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    fn mismatch(&self, extra: usize) -> IngestError {
        IngestError::SizeMismatch {
            declared: self.declared(),
            sent: self.sent.saturating_add(extra as u64),
        }
    }

    /// Moves past files that are full, closing the one written.
    async fn settle(&mut self) -> Result<(), IngestError> {
        while let Some((path, size)) = self.files.get(self.at) {
            if self.filled < *size {
                return Ok(());
            }
            if let Some(mut out) = self.out.take() {
                out.flush().await.map_err(disk(path))?;
                out.get_ref().sync_all().await.map_err(disk(path))?;
            }
            self.at += 1;
            self.filled = 0;
        }
        Ok(())
    }

    /// Takes one chunk of `part`.
    ///
    /// # Errors
    /// `SizeMismatch` past a declared length, `Protocol` for artwork before
    /// the audio is complete, `Disk`.
    pub async fn write(&mut self, part: Part, mut chunk: &[u8]) -> Result<(), IngestError> {
        self.settle().await?;
        match part {
            Part::Audio if self.at != 0 => return Err(self.mismatch(chunk.len())),
            Part::Art if self.at == 0 => return Err(IngestError::Protocol),
            _ => {}
        }
        while !chunk.is_empty() {
            let Some((path, size)) = self.files.get(self.at).cloned() else {
                return Err(self.mismatch(chunk.len()));
            };
            let take = usize::try_from(size - self.filled)
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            if part == Part::Audio && take < chunk.len() {
                return Err(self.mismatch(chunk.len()));
            }
            if self.out.is_none() {
                let f = tokio::fs::File::create(&path).await.map_err(disk(&path))?;
                self.out = Some(tokio::io::BufWriter::with_capacity(1 << 20, f));
            }
            let (now, rest) = chunk.split_at(take);
            if let Some(out) = self.out.as_mut() {
                out.write_all(now).await.map_err(disk(&path))?;
            }
            self.filled += take as u64;
            self.sent += take as u64;
            chunk = rest;
            self.settle().await?;
        }
        Ok(())
    }

    /// The stream ended: every file must be complete.
    ///
    /// # Errors
    /// `SizeMismatch` when bytes are missing, `Disk`.
    pub async fn finish(mut self) -> Result<u64, IngestError> {
        self.settle().await?;
        if self.at < self.files.len() {
            return Err(self.mismatch(0));
        }
        Ok(self.sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &std::path::Path, sizes: &[u64]) -> Vec<(PathBuf, u64)> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, n)| (dir.join(format!("f{i}")), *n))
            .collect()
    }

    #[tokio::test]
    async fn art_spans_files_and_each_file_gets_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sink::new(files(dir.path(), &[3, 2, 4]));
        assert_eq!(s.declared(), 9);
        s.write(Part::Audio, b"abc").await.unwrap();
        s.write(Part::Art, b"de").await.unwrap();
        s.write(Part::Art, b"").await.unwrap();
        s.write(Part::Art, b"fghi").await.unwrap();
        assert_eq!(s.finish().await.unwrap(), 9);
        let read = |i: usize| std::fs::read(dir.path().join(format!("f{i}"))).unwrap();
        assert_eq!(
            (read(0), read(1), read(2)),
            (b"abc".to_vec(), b"de".to_vec(), b"fghi".to_vec())
        );

        let mut s = Sink::new(files(dir.path(), &[3, 2, 4]));
        s.write(Part::Audio, b"a").await.unwrap();
        s.write(Part::Audio, b"bc").await.unwrap();
        s.write(Part::Art, b"defghi").await.unwrap();
        assert_eq!(s.finish().await.unwrap(), 9);
        assert_eq!(read(2), b"fghi".to_vec());
    }

    #[tokio::test]
    async fn out_of_order_short_and_long_streams_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let code = |e: IngestError| e.code();
        let mut s = Sink::new(files(dir.path(), &[3, 2]));
        assert_eq!(
            code(s.write(Part::Art, b"x").await.unwrap_err()),
            "PROTOCOL"
        );
        assert_eq!(
            code(s.write(Part::Audio, b"abcd").await.unwrap_err()),
            "SIZE_MISMATCH"
        );
        let mut s = Sink::new(files(dir.path(), &[3, 2]));
        s.write(Part::Audio, b"abc").await.unwrap();
        assert_eq!(
            code(s.write(Part::Audio, b"d").await.unwrap_err()),
            "SIZE_MISMATCH"
        );
        assert_eq!(
            code(s.write(Part::Art, b"xyz").await.unwrap_err()),
            "SIZE_MISMATCH"
        );
        let mut s = Sink::new(files(dir.path(), &[3, 2]));
        s.write(Part::Audio, b"abc").await.unwrap();
        s.write(Part::Art, b"x").await.unwrap();
        assert_eq!(code(s.finish().await.unwrap_err()), "SIZE_MISMATCH");
        let mut s = Sink::new(files(dir.path(), &[3]));
        s.write(Part::Audio, b"abc").await.unwrap();
        assert_eq!(
            code(s.write(Part::Art, b"x").await.unwrap_err()),
            "SIZE_MISMATCH"
        );
    }
}
