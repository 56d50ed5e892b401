//! Pixels: a source decoded once — a JPEG at the smallest 1/1, 1/2, 1/4 or 1/8 scale that
//! still covers every output wanted of it ("shrink on load": the inverse DCT makes the smaller
//! image, so a 4000-pixel photo wanted at 1600 and less decodes a quarter of its pixels) —
//! turned upright by its EXIF orientation, then cropped and resized with Lanczos3 (Zola's
//! filter) by `fast_image_resize`'s SIMD convolution.
//!
//! **Chosen, and rejected.** `image`'s own JPEG decoder (zune-jpeg) decodes every pixel;
//! `jpeg-decoder` scales inside the DCT, which is where the time of a photo goes. `image`'s
//! `resize_exact` (Zola's) is scalar; `fast_image_resize` is the same filter with AVX2, SSE4.1
//! or NEON. Every other kind (PNG, GIF, WebP, BMP) is decoded whole by `image`, within limits
//! set from the same pixel budget.

use super::op::Instructions;
use super::source::{Kind, Meta, Source};
use super::ImageError;
use fast_image_resize as fr;
use image::DynamicImage;

/// `source` decoded, upright, at least `need` (upright) pixels in size where a smaller decode
/// is possible, within `max_pixels`.
pub(crate) fn decode(
    source: &Source,
    meta: &Meta,
    need: (u32, u32),
    max_pixels: u64,
) -> Result<DynamicImage, ImageError> {
    let bad = |why: String| ImageError::Decode {
        name: source.name.clone(),
        why,
    };
    let stored_need = match meta.orientation {
        5..=8 => (need.1, need.0),
        _ => need,
    };
    let img = match meta.kind {
        Kind::Jpeg => match jpeg(source, stored_need, max_pixels).map_err(bad)? {
            Some(img) => img,
            None => whole(source, max_pixels).map_err(bad)?,
        },
        Kind::Avif | Kind::Other => {
            return Err(ImageError::Unsupported {
                name: source.name.clone(),
            })
        }
        _ => whole(source, max_pixels).map_err(bad)?,
    };
    Ok(upright(img, meta.orientation))
}

/// A JPEG decoded at the smallest scale that covers `need` (stored orientation); `None` for
/// one `jpeg-decoder` gives in a form other than grey or RGB (CMYK, 16-bit): `image` reads it.
fn jpeg(
    source: &Source,
    need: (u32, u32),
    max_pixels: u64,
) -> Result<Option<DynamicImage>, String> {
    let mut d = jpeg_decoder::Decoder::new(std::io::Cursor::new(&source.bytes[..]));
    d.set_max_decoding_buffer_size((max_pixels as usize).saturating_mul(4));
    d.read_info().map_err(|e| e.to_string())?;
    let want = (
        need.0.clamp(1, u16::MAX as u32),
        need.1.clamp(1, u16::MAX as u32),
    );
    let (w, h) = d
        .scale(want.0 as u16, want.1 as u16)
        .map_err(|e| e.to_string())?;
    let pixels = d.decode().map_err(|e| e.to_string())?;
    let info = d.info().ok_or("no frame header")?;
    let (w, h) = (w as u32, h as u32);
    Ok(match info.pixel_format {
        jpeg_decoder::PixelFormat::RGB24 => {
            image::RgbImage::from_raw(w, h, pixels).map(DynamicImage::ImageRgb8)
        }
        jpeg_decoder::PixelFormat::L8 => image::GrayImage::from_raw(w, h, pixels)
            .map(|g| DynamicImage::ImageRgb8(DynamicImage::ImageLuma8(g).to_rgb8())),
        _ => None,
    })
}

/// Any image `image` reads, whole, within the budget.
fn whole(source: &Source, max_pixels: u64) -> Result<DynamicImage, String> {
    let mut reader = image::ImageReader::new(std::io::Cursor::new(&source.bytes[..]))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(max_pixels.saturating_mul(8));
    reader.limits(limits);
    let img = reader.decode().map_err(|e| e.to_string())?;
    Ok(match img.color().has_alpha() {
        true => DynamicImage::ImageRgba8(img.into_rgba8()),
        false => DynamicImage::ImageRgb8(img.into_rgb8()),
    })
}

/// The source's ICC colour profile, if it has one (read from its header: JPEG's APP2, PNG's
/// `iCCP`, WebP's `ICCP`), for the versions whose format carries one.
pub(crate) fn icc(source: &Source, meta: &Meta) -> Option<Vec<u8>> {
    use image::ImageDecoder;
    let cursor = std::io::Cursor::new(&source.bytes[..]);
    match meta.kind {
        Kind::Jpeg => {
            let mut d = jpeg_decoder::Decoder::new(cursor);
            d.read_info().ok()?;
            d.icc_profile()
        }
        Kind::Png | Kind::WebP => {
            let reader = image::ImageReader::new(cursor).with_guessed_format().ok()?;
            reader.into_decoder().ok()?.icc_profile().ok()?
        }
        _ => None,
    }
}

/// The image turned as EXIF orientation `o` says it is shown.
fn upright(img: DynamicImage, o: u32) -> DynamicImage {
    match o {
        2 => img.fliph(),
        3 => img.rotate180(),
        4 => img.flipv(),
        5 => img.fliph().rotate270(),
        6 => img.rotate90(),
        7 => img.fliph().rotate90(),
        8 => img.rotate270(),
        _ => img,
    }
}

/// The decode size that covers every one of `wanted` (each the instructions for an image
/// of `meta`'s upright size): the largest scale any asks for, as a size of the whole image.
pub(crate) fn needed(meta: &Meta, wanted: &[Instructions]) -> (u32, u32) {
    let (w0, h0) = (meta.width, meta.height);
    let mut scale: f64 = 0.0;
    for i in wanted {
        let (cw, ch) = i.crop.map_or((w0, h0), |(_, _, w, h)| (w, h));
        let (rw, rh) = i.resize.unwrap_or((cw, ch));
        scale = scale.max(rw as f64 / cw as f64).max(rh as f64 / ch as f64);
    }
    let at = |n: u32| ((n as f64 * scale).ceil() as u32).clamp(1, n.max(1));
    match scale >= 1.0 {
        true => (w0, h0),
        false => (at(w0), at(h0)),
    }
}

/// `img` (decoded from an upright image of `full` size, maybe smaller) cropped and resized
/// as `i` says.
pub(crate) fn resize(
    img: &DynamicImage,
    full: (u32, u32),
    i: &Instructions,
) -> Result<DynamicImage, ImageError> {
    let (sx, sy) = (
        img.width() as f64 / full.0 as f64,
        img.height() as f64 / full.1 as f64,
    );
    let crop = i.crop.unwrap_or((0, 0, full.0, full.1));
    let out = i.resize.unwrap_or((crop.2, crop.3));
    let mut dst = DynamicImage::new(out.0, out.1, img.color());
    let options = fr::ResizeOptions::new()
        .resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Lanczos3))
        .crop(
            crop.0 as f64 * sx,
            crop.1 as f64 * sy,
            crop.2 as f64 * sx,
            crop.3 as f64 * sy,
        );
    fr::Resizer::new()
        .resize(img, &mut dst, &options)
        .map_err(|e| ImageError::Encode(format!("resizing: {e}")))?;
    Ok(dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards: a version is the same bytes on every machine — `fast_image_resize`'s AVX2,
    /// SSE4.1 and scalar paths give the same pixels for a crop and a Lanczos3 resize, with
    /// and without alpha (where this machine has the extension).
    #[test]
    fn every_cpu_path_resizes_to_the_same_pixels() {
        let mut seed = 7u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as u8
        };
        let rgb = image::RgbImage::from_fn(301, 203, |_, _| image::Rgb([next(), next(), next()]));
        let rgba = image::RgbaImage::from_fn(301, 203, |_, _| {
            image::Rgba([next(), next(), next(), next()])
        });
        let options = fr::ResizeOptions::new()
            .resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Lanczos3))
            .crop(10.5, 3.25, 280.0, 190.0);
        for src in [DynamicImage::ImageRgb8(rgb), DynamicImage::ImageRgba8(rgba)] {
            let mut made = Vec::new();
            for ext in [
                fr::CpuExtensions::None,
                fr::CpuExtensions::Sse4_1,
                fr::CpuExtensions::Avx2,
            ] {
                if !ext.is_supported() {
                    continue;
                }
                let mut dst = DynamicImage::new(97, 61, src.color());
                let mut r = fr::Resizer::new();
                // SAFETY: only extensions this CPU supports are set.
                unsafe { r.set_cpu_extensions(ext) };
                r.resize(&src, &mut dst, &options).unwrap();
                made.push(dst.into_bytes());
            }
            assert!(
                made.windows(2).all(|w| w[0] == w[1]),
                "{} paths",
                made.len()
            );
        }
    }
}
