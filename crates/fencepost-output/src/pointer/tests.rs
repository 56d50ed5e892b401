//! The pointer's tests: swaps, journals and the pure rule.

mod swaps {
    use crate::pointer::*;

    fn make_rev(public: &Path, p: &Pointer) {
        let d = public.join(REVISIONS).join(&p.dir);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("manifest.json"), "{}").unwrap();
    }

    #[test]
    fn advances_forward_only_and_force_goes_back() {
        let d = tempfile::tempdir().unwrap();
        let (p2, p1) = (
            Pointer::new(RevisionId::new(2, "aa")),
            Pointer::new(RevisionId::new(1, "aa")),
        );
        make_rev(d.path(), &p1);
        make_rev(d.path(), &p2);
        let t = Instant(1_000);
        assert_eq!(
            advance(d.path(), &p2, t, None).unwrap(),
            Swap::Moved { from: None }
        );
        assert_eq!(
            advance(d.path(), &p1, t, None).unwrap(),
            Swap::KeptHigher(p2.clone())
        );
        assert_eq!(advance(d.path(), &p2, t, None).unwrap(), Swap::Unchanged);
        assert_eq!(read(d.path()).unwrap(), Some(p2.clone()));
        assert_eq!(rollback(d.path(), &p1, "r1", t).unwrap(), Some(p2.clone()));
        // Held: rebuilding revision 2 does not undo the rollback.
        assert_eq!(advance(d.path(), &p2, t, None).unwrap(), Swap::Held(2));
        rollback_audited(d.path(), "r1").unwrap();
        assert!(rollback_journal(d.path()).unwrap().audited);
        assert_eq!(
            retired(d.path()),
            vec![Retired {
                dir: p2.dir.clone(),
                at_ms: 1_000
            }]
        );
        assert_eq!(read(d.path()).unwrap(), Some(p1.clone()));
        let json = read_json(d.path()).unwrap();
        assert_eq!((json.id.revision, json.dir), (1, p1.dir.clone()));
        assert!(d.path().join("current/manifest.json").exists());
    }
}

mod more {
    use crate::pointer::*;

    #[test]
    fn a_move_to_a_missing_revision_fails_and_leaves_the_pointer() {
        let d = tempfile::tempdir().unwrap();
        let p1 = Pointer::new(RevisionId::new(1, "aa"));
        let dir = d.path().join(REVISIONS).join(&p1.dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("manifest.json"), "{}").unwrap();
        advance(d.path(), &p1, Instant(0), None).unwrap();
        let gone = Pointer::new(RevisionId::new(2, "aa"));
        assert!(matches!(
            advance(d.path(), &gone, Instant(0), None),
            Err(OutputError::NoSuchRevision { .. })
        ));
        assert!(matches!(
            rollback(d.path(), &gone, "x", Instant(0)),
            Err(OutputError::NoSuchRevision { .. })
        ));
        assert_eq!(read(d.path()).unwrap(), Some(p1));
    }

    #[test]
    fn a_folder_in_place_of_the_pointer_is_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(CURRENT)).unwrap();
        let e = read(d.path()).unwrap_err().to_string();
        assert!(e.contains("not a symlink"), "{e}");
    }
}

mod decide {
    use crate::pointer::*;

    #[test]
    fn forward_only_and_never_past_a_hold() {
        use Decision::*;
        let table = [
            (None, None, 1, Move),
            (Some((1, true)), None, 1, Unchanged),
            (Some((1, false)), None, 1, Move), // same revision, new build
            (Some((1, false)), None, 2, Move),
            (Some((3, false)), None, 2, KeptHigher),
            (Some((1, false)), Some(3), 3, Held(3)),
            (Some((1, false)), Some(3), 2, Held(3)),
            (Some((1, false)), Some(3), 4, Move),
            (Some((1, true)), Some(3), 1, Unchanged),
            (None, Some(3), 3, Held(3)),
        ];
        for (live, held, to, want) in table {
            assert_eq!(
                decide(live, held, to, false),
                want,
                "{live:?} {held:?} {to}"
            );
        }
        // Sideways is backwards: a build of the live revision that was live and replaced.
        let sideways = [
            (Some((2, false)), None, 2, true, Replaced),
            (Some((2, false)), None, 2, false, Move),
            (Some((2, true)), None, 2, true, Unchanged),
            (Some((3, false)), None, 2, true, KeptHigher),
            (Some((1, false)), None, 2, true, Move),
        ];
        for (live, held, to, replaced, want) in sideways {
            assert_eq!(
                decide(live, held, to, replaced),
                want,
                "{live:?} {to} {replaced}"
            );
        }
    }
}

mod json {
    use crate::id::RevisionId;
    use crate::pointer::*;

    /// `current.json` is read by every stock static server setup and by the origins: its keys
    /// and their order are a contract.
    #[test]
    fn the_pointers_json_keeps_its_keys_in_their_order() {
        let p = Pointer::new(RevisionId::new(2, "aa"));
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{"revision":2,"build":"aa","dir":"2-aa"}"#);
        assert_eq!(serde_json::from_str::<Pointer>(&json).unwrap(), p);
        let c = CurrentJson::of(&p, None);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(
            json,
            r#"{"revision":2,"build":"aa","dir":"2-aa","next_change_at":null}"#
        );
        assert_eq!(serde_json::from_str::<CurrentJson>(&json).unwrap(), c);
    }
}
