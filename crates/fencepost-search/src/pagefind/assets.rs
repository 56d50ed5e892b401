//! Pagefind's own runtime — `pagefind.js` and its worker, the default UI (`pagefind-ui.js`,
//! `.css`), the modular and component UIs, the highlighter, and the WebAssembly that
//! searches (`wasm.unknown.pagefind`, `wasm.<lang>.pagefind` with the language's stemmer) —
//! as the `pagefind` crate writes them: asked of its API once per process for an index of one
//! throw-away record per language, every file of that index but its data kept.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};

/// Runtime files by their path under `pagefind/`.
pub(crate) type Files = BTreeMap<String, Arc<Vec<u8>>>;

/// What one language's throw-away index gave, by language.
static MADE: OnceLock<Mutex<BTreeMap<String, Files>>> = OnceLock::new();

/// Whether `name` is index data (the throw-away record's), not runtime.
fn is_data(name: &str) -> bool {
    name == "pagefind-entry.json"
        || name.ends_with(".pf_meta")
        || ["fragment/", "index/", "filter/", "playground/"]
            .iter()
            .any(|d| name.starts_with(d))
}

async fn made_for(language: &str) -> Result<Files, String> {
    let mut index = pagefind::api::PagefindIndex::new(None).map_err(|e| e.to_string())?;
    (index
        .add_custom_record(
            "/".into(),
            "runtime".into(),
            language.into(),
            None,
            None,
            None,
        )
        .await)
        .map_err(|e| e.to_string())?;
    let files = index.get_files().await.map_err(|e| e.to_string())?;
    Ok((files.into_iter())
        .map(|f| (f.filename.to_string_lossy().replace('\\', "/"), f.contents))
        .filter(|(name, _)| !is_data(name))
        .map(|(name, bytes)| (name, Arc::new(bytes)))
        .collect())
}

/// The runtime for `languages`: the common files and each language's WebAssembly where
/// Pagefind has one (`wasm` in the entry file names it; without, the generic one is used).
pub(crate) fn runtime(languages: &BTreeSet<String>) -> Result<Files, String> {
    let made = MADE.get_or_init(Default::default);
    let mut done = made.lock().unwrap_or_else(|p| p.into_inner());
    let missing: Vec<&String> = languages
        .iter()
        .filter(|l| !done.contains_key(*l))
        .collect();
    if !missing.is_empty() {
        let rt =
            (tokio::runtime::Builder::new_current_thread().build()).map_err(|e| e.to_string())?;
        for lang in missing {
            let files = std::thread::scope(|s| s.spawn(|| rt.block_on(made_for(lang))).join())
                .map_err(|_| "the pagefind runtime's writer panicked".to_string())??;
            done.insert(lang.clone(), files);
        }
    }
    let mut out = Files::new();
    for lang in languages {
        out.extend(done[lang].iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Ok(out)
}

/// Whether the runtime has a stemming WebAssembly for `language`.
pub(crate) fn has_wasm(files: &Files, language: &str) -> bool {
    files.contains_key(&format!("wasm.{language}.pagefind"))
}
