//! A build killed at each of its step boundaries (fail points) leaves the previous revision served.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;

#[cfg(feature = "failpoints")]
#[test]
fn a_build_crash_at_any_step_leaves_the_previous_revision_served() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    let served = s.current_dir();
    let mut n = 1;
    for point in [
        "build.after_snapshot",
        "build.after_render",
        "build.before_rename",
        "build.before_pointer_rename",
    ] {
        n += 1;
        s.item(n, "2026-11-02");
        s.publish(NOW);
        let out = s.with_failpoints(&["build", "--now", NOW], &format!("{point}=return"));
        assert_eq!(
            out.status.code(),
            Some(137),
            "{point}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            s.current_dir(),
            served,
            "{point}: the pointer must not move"
        );
        assert!(s.current_dir().join(".fencepost/manifest.json").exists());
        // The next build succeeds and clears what the dead one left.
        let r = s.build(&[]);
        assert_eq!(r["revision"], n, "{point}");
        assert_eq!(r["pointer"], "moved", "{point}");
        let leftovers: Vec<String> = std::fs::read_dir(s.path("public/revisions"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{point}: {leftovers:?}");
        // Roll the served revision back so the next crash is judged against it.
        let _ = std::fs::remove_dir_all(s.current_dir());
        std::fs::remove_file(s.path("public/current")).unwrap();
        std::os::unix::fs::symlink(&served, s.path("public/current")).unwrap();
    }
}
