//! Opening a file of a revision so that no symlink anywhere on its path is followed, checked
//! on every open: a folder swapped for a symlink after the first request cannot lead out.
//!
//! On POSIX every component is resolved relative to an open descriptor with `O_NOFOLLOW`
//! (one `openat2` on Linux), so nothing can be swapped between the check and the open. On
//! Windows, which has no `openat`, each component is checked with `symlink_metadata` (no
//! symlink, no junction) before the file is opened by path: a swap in between is a race
//! there, which the revision's own folder (written by fencepost, not by visitors) narrows.

use std::fs::File;
use std::io;
use std::path::Path;
#[cfg(unix)]
use std::{
    ffi::CString,
    os::fd::{AsRawFd, FromRawFd},
};

/// A revision's folder, held open (POSIX) or by path (Windows), to open files beneath it.
pub struct Dir {
    #[cfg(unix)]
    file: File,
    #[cfg(not(unix))]
    path: std::path::PathBuf,
}

impl Dir {
    pub fn open(path: &Path) -> io::Result<Dir> {
        #[cfg(unix)]
        {
            Ok(Dir {
                file: File::open(path)?,
            })
        }
        #[cfg(not(unix))]
        {
            if !std::fs::metadata(path)?.is_dir() {
                return Err(io::ErrorKind::NotFound.into());
            }
            Ok(Dir {
                path: path.to_path_buf(),
            })
        }
    }

    pub fn metadata(&self) -> io::Result<std::fs::Metadata> {
        #[cfg(unix)]
        {
            self.file.metadata()
        }
        #[cfg(not(unix))]
        {
            std::fs::metadata(&self.path)
        }
    }

    /// Opens `rel` (a checked, `/`-separated path without `.` or `..`) beneath the folder,
    /// following no symlink; [`is_symlink_refusal`] tells a planted symlink from other errors.
    pub fn open_file(&self, rel: &str) -> io::Result<File> {
        #[cfg(unix)]
        {
            open(&self.file, rel)
        }
        #[cfg(not(unix))]
        {
            let mut at = self.path.clone();
            for part in rel.split('/') {
                at.push(part);
                if std::fs::symlink_metadata(&at)?.file_type().is_symlink() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "a symlink on the path",
                    ));
                }
            }
            File::open(&at)
        }
    }
}

/// Whether [`Dir::open_file`] refused a symlink on the way.
pub fn is_symlink_refusal(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EXDEV))
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::InvalidInput
    }
}

/// `struct open_how` of openat2(2) (libc's is non-exhaustive, so it cannot be built here).
#[cfg(target_os = "linux")]
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// Opens `rel` (a checked, `/`-separated path without `.` or `..`) for reading beneath the
/// folder `dir`, refusing any symlink on the way (`ELOOP`/`EXDEV`). Uses openat2(2) with
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (one system call); where the kernel lacks it, walks
/// the components with `O_NOFOLLOW` (as on every other Unix, which has no openat2).
#[cfg(target_os = "linux")]
pub fn open(dir: &File, rel: &str) -> io::Result<File> {
    let c = CString::new(rel).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let how = OpenHow {
        flags: (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW) as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: a valid directory descriptor, a NUL-terminated path and a properly sized
    // open_how; the returned descriptor is owned by the File below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd >= 0 {
        // SAFETY: the kernel just gave us this descriptor.
        return Ok(unsafe { File::from_raw_fd(fd as i32) });
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        // No openat2 here (old kernel, or a seccomp filter that refuses it).
        Some(libc::ENOSYS) | Some(libc::EPERM) => walk(dir, rel),
        _ => Err(err),
    }
}

/// [`open`] where there is no openat2 (macOS, the BSDs): component by component.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn open(dir: &File, rel: &str) -> io::Result<File> {
    walk(dir, rel)
}

#[cfg(unix)]
fn walk(dir: &File, rel: &str) -> io::Result<File> {
    let parts: Vec<&str> = rel.split('/').collect();
    let mut current: Option<File> = None;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let c = CString::new(*part).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mut flags = libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW;
        if !last {
            flags |= libc::O_DIRECTORY;
        }
        let at = current.as_ref().unwrap_or(dir).as_raw_fd();
        // SAFETY: a valid descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(at, c.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel just gave us this descriptor.
        current = Some(unsafe { File::from_raw_fd(fd) });
    }
    current.ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn refuses_symlinks_anywhere_on_the_path() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("rev");
        let outside = d.path().join("outside");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("a/f.txt"), "inside").unwrap();
        std::fs::write(outside.join("f.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("b")).unwrap();
        std::os::unix::fs::symlink(outside.join("f.txt"), root.join("a/l.txt")).unwrap();
        let dir = File::open(&root).unwrap();
        let read = |r: io::Result<File>| {
            let mut s = String::new();
            io::Read::read_to_string(&mut r.unwrap(), &mut s).unwrap();
            s
        };
        assert_eq!(read(open(&dir, "a/f.txt")), "inside");
        assert_eq!(read(walk(&dir, "a/f.txt")), "inside");
        for rel in ["b/f.txt", "a/l.txt"] {
            assert!(open(&dir, rel).is_err(), "{rel}");
            assert!(walk(&dir, rel).is_err(), "{rel}");
        }
    }
}
