//! A run of text's words as Pagefind indexes them, so that the WebAssembly, which treats a
//! query the same way, finds them: lower-cased letters and digits (`_` and Unicode's other
//! connector punctuation kept), diacritics stripped (the written form kept as a variant),
//! stemmed by the language's Snowball stemmer; a word joined by punctuation (`e-mail`,
//! `fencepost.toml`) also indexed by its parts, each at a share of its weight.

use pagefind_stem::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;

/// Symbols that count as part of a word (Unicode's "Punctuation, Connector"), as Pagefind's.
const WORD_SYMBOLS: [char; 10] = ['_', '‿', '⁀', '⁔', '︳', '︴', '﹍', '﹎', '﹏', '＿'];

/// One form of a word to index at a position.
#[derive(Debug, PartialEq)]
pub(crate) struct Indexable {
    /// The word as the index keys it: normalised and stemmed.
    pub stemmed: String,
    /// The form written on the page, when it differs from the stripped one only by diacritics.
    pub original: Option<String>,
    /// A part of a joined word (weighted at a share of the word's weight).
    pub part: bool,
}

/// The stemmer of a page's language (`en`, `en-GB`, `pt-BR` …), as Pagefind picks it.
pub(crate) fn stemmer(lang: &str) -> Option<Stemmer> {
    let algorithm = match lang.split('-').next().unwrap_or_default() {
        "ar" => Algorithm::Arabic,
        "hy" => Algorithm::Armenian,
        "eu" => Algorithm::Basque,
        "ca" => Algorithm::Catalan,
        "da" => Algorithm::Danish,
        "nl" => Algorithm::Dutch,
        "en" => Algorithm::English,
        "eo" => Algorithm::Esperanto,
        "et" => Algorithm::Estonian,
        "fi" => Algorithm::Finnish,
        "fr" => Algorithm::French,
        "de" => Algorithm::German,
        "el" => Algorithm::Greek,
        "hi" => Algorithm::Hindi,
        "hu" => Algorithm::Hungarian,
        "id" => Algorithm::Indonesian,
        "ga" => Algorithm::Irish,
        "it" => Algorithm::Italian,
        "lt" => Algorithm::Lithuanian,
        "nb" | "nn" | "no" => Algorithm::Norwegian,
        "ne" => Algorithm::Nepali,
        "pt" => Algorithm::Portuguese,
        "ro" => Algorithm::Romanian,
        "ru" => Algorithm::Russian,
        "sr" => Algorithm::Serbian,
        "pl" => Algorithm::Polish,
        "es" => Algorithm::Spanish,
        "sv" => Algorithm::Swedish,
        "ta" => Algorithm::Tamil,
        "tr" => Algorithm::Turkish,
        "yi" => Algorithm::Yiddish,
        _ => return None,
    };
    Some(Stemmer::create(algorithm))
}

/// `raw`'s letters, digits and connectors, lower-cased.
fn normalize(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        if c.is_alphanumeric() || WORD_SYMBOLS.contains(&c) {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// `word` without its diacritics, when it has any (kana sound marks kept: they tell words
/// apart).
fn strip_diacritics(word: &str) -> Option<String> {
    if word.is_ascii() {
        return None;
    }
    let stripped: String = (word.nfd())
        .filter(|c| {
            !unicode_normalization::char::is_combining_mark(*c)
                || matches!(*c, '\u{3099}' | '\u{309A}')
        })
        .nfc()
        .collect();
    (stripped != word).then_some(stripped)
}

fn stem(word: &str, stemmer: Option<&Stemmer>, part: bool) -> Indexable {
    let stripped = strip_diacritics(word);
    let base = stripped.as_deref().unwrap_or(word);
    let stemmed = match stemmer {
        Some(s) => s.stem(base).into_owned(),
        None => base.to_string(),
    };
    Indexable {
        stemmed,
        original: stripped.map(|_| word.to_string()),
        part,
    }
}

/// The forms of `raw` (one whitespace-separated token of a page) to index.
pub(crate) fn indexable(raw: &str, stemmer: Option<&Stemmer>) -> Vec<Indexable> {
    let whole = normalize(raw);
    let mut out = Vec::new();
    if !whole.is_empty() {
        out.push(stem(&whole, stemmer, false));
    }
    let joined = raw
        .chars()
        .any(|c| !c.is_alphanumeric() && !WORD_SYMBOLS.contains(&c));
    if !joined {
        return out;
    }
    let parts: Vec<String> = (raw
        .split(|c: char| !c.is_alphanumeric() && !WORD_SYMBOLS.contains(&c)))
    .map(normalize)
    .filter(|p| !p.is_empty())
    .collect();
    if parts.len() > 1 {
        let long = parts.iter().filter(|p| p.chars().count() > 1);
        out.extend(long.map(|p| stem(p, stemmer, true)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(raw: &str, lang: &str) -> Vec<String> {
        let s = stemmer(lang);
        indexable(raw, s.as_ref())
            .into_iter()
            .map(|w| w.stemmed)
            .collect()
    }

    #[test]
    fn words_are_normalised_and_stemmed_as_pagefind_does() {
        assert_eq!(keys("Running,", "en"), ["run"]);
        assert_eq!(keys("Running", "unknown"), ["running"]);
        assert_eq!(keys("e-mail", "en"), ["email", "mail"]);
        assert_eq!(
            keys("fencepost.toml", "en"),
            ["fenceposttoml", "fencepost", "toml"]
        );
        let cafe = indexable("Café", stemmer("fr").as_ref());
        assert_eq!(cafe[0].original.as_deref(), Some("café"));
        assert_eq!(keys("!!", "en"), Vec::<String>::new());
    }
}
