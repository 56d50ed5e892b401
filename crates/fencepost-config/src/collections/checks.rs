//! The checks a collection's settings pass when the config loads: names, URL patterns,
//! field specs, and collections kept apart from one another.

use super::*;

pub(super) fn check_field(name: &str, spec: &FieldSpec) -> Result<(), String> {
    if !is_name(name) {
        return Err(
            "a field name is a lower-case letter, then lower-case letters, digits and _".into(),
        );
    }
    let built_in = FRONT_MATTER.contains(&name) && !super::YIELDING.contains(&name);
    if built_in || TEMPLATE_ONLY.contains(&name) {
        return Err(format!(
            "`{name}` is a built-in key ({}, {}); give the field another name",
            FRONT_MATTER.join(", "),
            TEMPLATE_ONLY.join(", ")
        ));
    }
    let t = spec.kind;
    if spec.one_of.is_some() && !matches!(t, FieldType::String | FieldType::List) {
        return Err("one_of applies to string and list fields only".into());
    }
    if (spec.scale.is_some() || spec.prefix.is_some()) && t != FieldType::Decimal {
        return Err("scale and prefix apply to decimal fields only".into());
    }
    if spec.scale.is_some_and(|s| s > 18) {
        return Err("scale is at most 18".into());
    }
    if spec.min.is_some() && !matches!(t, FieldType::Integer | FieldType::Decimal) {
        return Err("min applies to integer and decimal fields only".into());
    }
    Ok(())
}

/// Refuses collections that would read the same files or write the same URLs.
pub(super) fn check_apart(
    list: &[Collection],
    bad: &dyn Fn(String, String) -> ConfigError,
) -> Result<(), ConfigError> {
    for (i, a) in list.iter().enumerate() {
        for b in &list[i + 1..] {
            let nested = |x: &str, y: &str| x == y || y.starts_with(&format!("{x}/"));
            if nested(&a.dir, &b.dir) || nested(&b.dir, &a.dir) {
                return Err(bad(
                    format!("collections.{}.dir", b.name),
                    format!(
                        "collections {} ({:?}) and {} ({:?}) read the same folder: give each its own folder under content/",
                        a.name, a.dir, b.name, b.dir
                    ),
                ));
            }
            if shape(&a.url) == shape(&b.url) {
                return Err(bad(
                    format!("collections.{}.url", b.name),
                    format!(
                        "collections {} ({:?}) and {} ({:?}) produce the same URLs: give each its own URL prefix",
                        a.name, a.url, b.name, b.url
                    ),
                ));
            }
            if a.list_url.is_some() && a.list_url == b.list_url {
                return Err(bad(
                    format!("collections.{}.list_url", b.name),
                    format!(
                        "collections {} and {} both list at {:?}: give each its own list_url",
                        a.name,
                        b.name,
                        a.list_url.as_deref().unwrap_or_default()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A URL pattern with every placeholder alike: equal shapes can produce the same URL.
fn shape(url: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in url.chars() {
        match c {
            '{' => {
                inside = true;
                out.push('*');
            }
            '}' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}
