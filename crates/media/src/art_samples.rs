//! Generated artwork for tests, fuzzing and benchmarks: a cover in each
//! format the pipeline takes, and a decompression bomb.

use std::io::Cursor;

use image::{ImageFormat, RgbImage};

/// A `w`×`h` cover: smooth gradients and a few hard edges, like artwork.
pub fn cover(w: u32, h: u32, seed: u8) -> RgbImage {
    RgbImage::from_fn(w, h, |x, y| {
        let band = u8::from((x / 16 + y / 16) % 5 == 0) * 90;
        image::Rgb([
            (x * 255 / w.max(1)) as u8 ^ seed,
            (y * 255 / h.max(1)) as u8,
            band.wrapping_add(seed),
        ])
    })
}

/// `img` encoded as `format` (PNG, JPEG, or lossless WebP).
pub fn encode(img: &RgbImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    match format {
        ImageFormat::WebP => {
            let enc = image::codecs::webp::WebPEncoder::new_lossless(&mut out);
            img.write_with_encoder(enc).ok();
        }
        other => {
            img.write_to(&mut out, other).ok();
        }
    }
    out.into_inner()
}

/// The CRC-32 (ISO-HDLC) PNG chunks carry.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for b in bytes {
        c ^= u32::from(*b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A PNG of a few hundred bytes whose header declares `side`×`side` RGBA
/// pixels (`side` = 60,000 is 14 GB decoded): a decompression bomb. Its
/// one IDAT holds a zlib stream of zeros that would inflate to the full
/// image.
pub fn png_bomb(side: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    // zlib header, then a fixed-Huffman block repeating a zero byte (a
    // literal 0 then the longest back-references), never finished
    let mut z = vec![0x78, 0x9c, 0x63, 0x60];
    z.extend(std::iter::repeat_n(0x18u8, 256));
    chunk(&mut out, b"IDAT", &z);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// `jpeg` with an EXIF segment after its SOI marker holding `text`: what
/// a camera or an editor leaves behind (and normalising must drop).
pub fn jpeg_with_exif(jpeg: &[u8], text: &[u8]) -> Vec<u8> {
    let mut payload = b"Exif\0\0".to_vec();
    payload.extend_from_slice(text);
    let len = (payload.len() + 2) as u16;
    let mut out = jpeg.get(..2).unwrap_or_default().to_vec();
    out.extend_from_slice(&[0xff, 0xe1]);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&payload);
    out.extend_from_slice(jpeg.get(2..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn crc32_matches_the_check_value() {
        assert_eq!(super::crc32(b"123456789"), 0xcbf4_3926);
    }
}
