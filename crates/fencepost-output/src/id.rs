//! The name of a revision, `R-B`: a leaf every other part of `output/` (and everything after
//! it) names revisions with.

/// A revision as folders, pointers, buckets and `X-Revision` name it: the publication
/// revision `R` and the fingerprint `B` of the build that rendered it (its templates, static
/// files and settings), written `R-B`. One type for the pair, so no module formats or parses
/// the name by hand.
///
/// In JSON it is two fields, `revision` and `build` (a contract on disk, in buckets and in
/// every `--json`); a struct that holds one flattens it where those two fields stand.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RevisionId {
    pub revision: i64,
    /// The build fingerprint B.
    #[serde(rename = "build")]
    pub fingerprint: String,
}

impl RevisionId {
    pub fn new(revision: i64, fingerprint: impl Into<String>) -> RevisionId {
        RevisionId {
            revision,
            fingerprint: fingerprint.into(),
        }
    }
}

impl std::fmt::Display for RevisionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.revision, self.fingerprint)
    }
}

impl std::str::FromStr for RevisionId {
    type Err = String;

    /// `R-B`: an integer, a dash, and an alphanumeric fingerprint.
    fn from_str(name: &str) -> Result<RevisionId, String> {
        let bad = || format!("{name:?} is not a revision name (R-B)");
        let (r, b) = name.split_once('-').ok_or_else(bad)?;
        let revision = r.parse().map_err(|_| bad())?;
        if b.is_empty() || !b.bytes().all(|c| c.is_ascii_alphanumeric()) {
            return Err(bad());
        }
        Ok(RevisionId::new(revision, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let id = RevisionId::new(12, "ab12");
        assert_eq!(id.to_string(), "12-ab12");
        assert_eq!("12-ab12".parse::<RevisionId>(), Ok(id));
        for bad in [".tmp-1-ab", "12-", "x-ab", "12", "12-a-b", "-3-ab"] {
            assert!(bad.parse::<RevisionId>().is_err(), "{bad}");
        }
    }
}
