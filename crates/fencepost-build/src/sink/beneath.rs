//! Rendered files written beneath the staging folder's open descriptor (`mkdirat`,
//! `openat`), as the early links are made: the kernel resolves the two or three names of
//! `answers/3/index.html`, not the staging folder's whole absolute path, for each of a cold
//! build's folders and files. Elsewhere, and when the folder cannot be opened, by path.

use super::super::report::{io, BuildError};
use std::path::{Path, PathBuf};

/// The staging folder files are written beneath.
pub(in super::super) struct Beneath {
    path: PathBuf,
    #[cfg(unix)]
    fd: Option<std::os::fd::OwnedFd>,
}

impl Beneath {
    pub(in super::super) fn open(path: &Path) -> Beneath {
        Beneath {
            path: path.to_path_buf(),
            #[cfg(unix)]
            fd: rustix::fs::open(
                path,
                fencepost_core::item::lookup_dir_flags(),
                rustix::fs::Mode::empty(),
            )
            .ok(),
        }
    }

    /// Writes `bytes` to `rel` (a `/`-separated path the plan made: no `..`, no leading
    /// `/`), making its folders first, replacing a file there.
    pub(in super::super) fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), BuildError> {
        #[cfg(unix)]
        if let Some(fd) = &self.fd {
            return write_at(fd, rel, bytes).map_err(io(&self.path.join(rel)));
        }
        let dst = super::place(&self.path, rel)?;
        std::fs::write(&dst, bytes).map_err(io(&dst))
    }
}

#[cfg(unix)]
fn write_at(fd: &std::os::fd::OwnedFd, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Write;
    if let Some((dir, _)) = rel.rsplit_once('/') {
        make_folders(fd, dir)?;
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC;
    let file = rustix::fs::openat(fd, rel, flags, Mode::from_raw_mode(0o666))?;
    std::fs::File::from(file).write_all(bytes)
}

/// `create_dir_all` beneath `fd`: the folder itself first (nearly always its parent exists),
/// its parents only when that says they are missing.
#[cfg(unix)]
fn make_folders(fd: &std::os::fd::OwnedFd, dir: &str) -> std::io::Result<()> {
    use rustix::io::Errno;
    match rustix::fs::mkdirat(fd, dir, rustix::fs::Mode::from_raw_mode(0o777)) {
        Ok(()) | Err(Errno::EXIST) => Ok(()),
        Err(Errno::NOENT) => {
            if let Some((parent, _)) = dir.rsplit_once('/') {
                make_folders(fd, parent)?;
            }
            match rustix::fs::mkdirat(fd, dir, rustix::fs::Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => Ok(()),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_beneath_the_folder_making_folders_and_replacing_files() {
        let t = tempfile::tempdir().unwrap();
        let b = Beneath::open(t.path());
        b.write("index.html", b"home").unwrap();
        b.write("a/b/c/index.html", b"deep").unwrap();
        b.write("a/b/d.html", b"beside").unwrap();
        b.write("a/b/c/index.html", b"again").unwrap();
        let read = |p: &str| std::fs::read_to_string(t.path().join(p)).unwrap();
        assert_eq!(read("index.html"), "home");
        assert_eq!(read("a/b/c/index.html"), "again");
        assert_eq!(read("a/b/d.html"), "beside");
        // A file where a folder should be: an error naming the file, not a panic.
        std::fs::write(t.path().join("f"), b"x").unwrap();
        let e = b.write("f/index.html", b"x").unwrap_err().to_string();
        assert!(e.contains("f/index.html"), "{e}");
    }
}
