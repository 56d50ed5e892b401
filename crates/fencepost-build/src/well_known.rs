//! Where a revision serves its transparency log and its items' JSON (`docs/transparency.md`):
//! names the build's steps share (the destination keeps the log's folder, the plan places each
//! item's JSON, the check passes over the log) without standing on the log's writer.

/// Where the log is served, under a revision's root.
pub const LOG_DIR: &str = ".well-known/fencepost/log";

/// Where each revealed item's JSON is served, under a revision's root.
pub const ITEMS_DIR: &str = ".well-known/fencepost/items";

/// Where `collection/id`'s JSON is served.
pub fn item_json_path(item: &str) -> String {
    format!("{ITEMS_DIR}/{item}.json")
}

/// The items a revision serves JSON for, from its files (path, hex SHA-256): `collection/id`
/// → the SHA-256 of the JSON.
pub fn served_items<'a>(
    files: impl Iterator<Item = (&'a str, &'a str)>,
) -> std::collections::BTreeMap<String, String> {
    files
        .filter_map(|(path, sha256)| {
            let item = path.strip_prefix(ITEMS_DIR)?.strip_prefix('/')?;
            Some((item.strip_suffix(".json")?.to_string(), sha256.to_string()))
        })
        .collect()
}
