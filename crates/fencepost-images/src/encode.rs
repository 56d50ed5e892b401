//! Encoding: JPEG and PNG by `image` (Zola's encoders), WebP by libwebp (lossy at a quality,
//! or lossless, as Zola), AVIF by rav1e through `ravif` at a quality and speed. Every
//! encoder runs on one thread with fixed settings, so the same pixels make the same bytes on
//! every run and every machine; the build runs one image per core instead. No metadata is
//! written (EXIF, XMP and IPTC are dropped, as Zola drops them: a photo's GPS position never
//! ships).

use super::op::Format;
use super::ImageError;
use image::{DynamicImage, ImageEncoder};

/// `img` encoded as `format`, with the source's colour profile `icc` where the format carries
/// one (JPEG and PNG, as Zola; libwebp's lossy encoder and ravif write none, so a WebP or AVIF
/// version is taken as sRGB, as under Zola).
pub(crate) fn encode(
    img: &DynamicImage,
    format: Format,
    icc: Option<&[u8]>,
) -> Result<Vec<u8>, ImageError> {
    let with_icc = |e: &mut dyn ImageEncoder| {
        if let Some(p) = icc {
            let _ = e.set_icc_profile(p.to_vec());
        }
    };
    let fail = |e: String| ImageError::Encode(format!("{}: {e}", format.extension()));
    let mut out = Vec::new();
    match format {
        Format::Jpeg { quality } => {
            let rgb = img.to_rgb8();
            let mut e = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
            with_icc(&mut e);
            e.write_image(
                &rgb,
                rgb.width(),
                rgb.height(),
                image::ExtendedColorType::Rgb8,
            )
            .map_err(|e| fail(e.to_string()))?;
        }
        Format::Png => {
            let mut e = image::codecs::png::PngEncoder::new(&mut out);
            with_icc(&mut e);
            e.write_image(
                img.as_bytes(),
                img.width(),
                img.height(),
                img.color().into(),
            )
            .map_err(|e| fail(e.to_string()))?;
        }
        Format::WebP { quality } => {
            let (w, h) = (img.width(), img.height());
            let encoder = match img {
                DynamicImage::ImageRgba8(p) => webp::Encoder::from_rgba(p.as_raw(), w, h),
                DynamicImage::ImageRgb8(p) => webp::Encoder::from_rgb(p.as_raw(), w, h),
                _ => return Err(fail("only RGB and RGBA pixels are encoded".into())),
            };
            let made = match quality {
                Some(q) => encoder.encode_simple(false, q as f32),
                None => encoder.encode_simple(true, 75.0),
            }
            .map_err(|e| fail(format!("{e:?}")))?;
            out.extend_from_slice(&made);
        }
        Format::Avif { quality, speed } => out = avif(img, quality, speed).map_err(fail)?,
    }
    Ok(out)
}

fn avif(img: &DynamicImage, quality: u8, speed: u8) -> Result<Vec<u8>, String> {
    use rgb::FromSlice;
    let encoder = ravif::Encoder::new()
        .with_quality(quality as f32)
        .with_speed(speed)
        .with_num_threads(Some(1));
    let (w, h) = (img.width() as usize, img.height() as usize);
    let made = match img {
        DynamicImage::ImageRgba8(p) => {
            encoder.encode_rgba(ravif::Img::new(p.as_raw().as_rgba(), w, h))
        }
        DynamicImage::ImageRgb8(p) => {
            encoder.encode_rgb(ravif::Img::new(p.as_raw().as_rgb(), w, h))
        }
        _ => return Err("only RGB and RGBA pixels are encoded".into()),
    }
    .map_err(|e| e.to_string())?;
    Ok(made.avif_file)
}
