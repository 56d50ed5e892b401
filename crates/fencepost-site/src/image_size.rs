//! An image's size and format from its bytes, as Zola's `get_image_metadata` answers:
//! `imagesize` reads the header of a PNG, JPEG, GIF, WebP, AVIF, BMP, ICO or TIFF (no
//! decoding); an SVG's root `width` and `height`, else its `viewBox`. Page templates
//! (`fencepost-build`) and shortcodes (at publish) share it.

use serde_json::{json, Value};

/// `{width, height, format, mime}` of the image `bytes` (named `path` in errors).
pub fn metadata(bytes: &[u8], path: &str) -> Result<Value, String> {
    if path.to_ascii_lowercase().ends_with(".svg") {
        let (w, h) = svg_size(&String::from_utf8_lossy(bytes))
            .ok_or_else(|| format!("{path} gives neither width and height nor a viewBox"))?;
        return Ok(json!({ "width": w, "height": h, "format": "svg", "mime": "image/svg+xml" }));
    }
    let size = imagesize::blob_size(bytes).map_err(|e| format!("{path}: {e}"))?;
    let kind = imagesize::image_type(bytes).map_err(|e| format!("{path}: {e}"))?;
    let (format, mime) = match kind {
        imagesize::ImageType::Png => ("png", "image/png"),
        imagesize::ImageType::Jpeg => ("jpg", "image/jpeg"),
        imagesize::ImageType::Gif => ("gif", "image/gif"),
        imagesize::ImageType::Webp => ("webp", "image/webp"),
        imagesize::ImageType::Bmp => ("bmp", "image/bmp"),
        imagesize::ImageType::Ico => ("ico", "image/x-icon"),
        imagesize::ImageType::Tiff => ("tiff", "image/tiff"),
        imagesize::ImageType::Heif(_) => ("avif", "image/avif"),
        other => {
            return Err(format!(
                "{path} is a {other:?} image, which Zola does not read either"
            ))
        }
    };
    Ok(json!({ "width": size.width, "height": size.height, "format": format, "mime": mime }))
}

/// An SVG's size: its root element's `width` and `height` (in pixels or unitless), else its
/// `viewBox`'s.
fn svg_size(text: &str) -> Option<(f64, f64)> {
    let start = text.find("<svg")?;
    let tag = &text[start..start + text[start..].find('>')?];
    let attr = |name: &str| {
        let re = regex::Regex::new(&format!(r#"\s{name}\s*=\s*["']([^"']*)["']"#)).ok()?;
        re.captures(tag).map(|c| c[1].to_string())
    };
    let px = |v: String| v.trim().trim_end_matches("px").parse::<f64>().ok();
    if let (Some(w), Some(h)) = (attr("width").and_then(px), attr("height").and_then(px)) {
        return Some((w, h));
    }
    let vb: Vec<f64> = attr("viewBox")?
        .split([' ', ','])
        .filter_map(|n| n.parse().ok())
        .collect();
    (vb.len() == 4).then(|| (vb[2], vb[3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_from_headers_and_svg_attributes() {
        let png = [
            0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, b'I', b'H', b'D', b'R', 0,
            0, 0, 3, 0, 0, 0, 2, 8, 6, 0, 0, 0, 0, 0, 0, 0,
        ];
        let m = metadata(&png, "a.png").unwrap();
        assert_eq!(
            (m["width"].as_u64(), m["height"].as_u64()),
            (Some(3), Some(2))
        );
        let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10px\" height=\"5\"/>";
        assert_eq!(metadata(svg, "a.svg").unwrap()["width"], 10.0);
        let vb = b"<svg viewBox=\"0 0 40 20\"/>";
        assert_eq!(metadata(vb, "b.svg").unwrap()["height"], 20.0);
        assert!(metadata(b"nope", "c.png").is_err());
    }
}
