//! What differs between the operating systems fencepost runs on, in one place: Linux and
//! macOS (POSIX: directory descriptors, `O_NONBLOCK`, inode numbers, symlinks anyone may make,
//! a rename that replaces a symlink atomically) and Windows.
//!
//! On Windows: a file's identity is its creation and modification times (there is no stable
//! inode number in the standard library); opens never block on a FIFO, for there are none;
//! `public/current` is a directory symlink, which needs Developer Mode (or the right to create
//! symbolic links), and replacing it is a remove then a rename — a reader can miss it for that
//! instant, where on POSIX the swap is atomic. The Windows build is compiled by
//! `scripts/check-windows` and not run-tested here.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// Opens `path` for reading without ever blocking on it (a FIFO or device opens at once and
/// is then refused by its metadata, never waited on).
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Reads into `buf` at `pos`, each read naming its own offset (POSIX `pread`; Windows'
/// `seek_read`), so threads may share the file; returns how many bytes were read.
pub fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, pos)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, pos)
    }
}

/// Fills `buf` from `pos`.
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut pos: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, pos)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                pos += n as u64;
            }
        }
    }
    Ok(())
}

/// What tells one file (or folder) from another that replaced it at the same path: the
/// device and inode on POSIX, the creation and modification times on Windows.
pub fn file_id(meta: &Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let nanos = |t: io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as u64)
        };
        (nanos(meta.created()), nanos(meta.modified()))
    }
}

/// This machine's name.
pub fn host_name() -> String {
    #[cfg(unix)]
    {
        rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned()
    }
    #[cfg(not(unix))]
    {
        std::env::var("COMPUTERNAME").unwrap_or_else(|_| "localhost".into())
    }
}

/// Makes `link` a symlink to the folder `target`.
pub fn symlink_dir(target: &Path, link: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::symlink_dir(target, link)
    }
}

/// Renames the symlink `from` over the symlink `to`: atomically on POSIX; on Windows, where a
/// rename cannot replace a folder's symlink, `to` is removed first.
pub fn replace_symlink(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::rename(from, to)
    }
    #[cfg(windows)]
    {
        match std::fs::rename(from, to) {
            Ok(()) => Ok(()),
            Err(_) if to.symlink_metadata().is_ok() => {
                std::fs::remove_dir(to).or_else(|_| std::fs::remove_file(to))?;
                std::fs::rename(from, to)
            }
            Err(e) => Err(e),
        }
    }
}

/// Exchanges the folders `a` and `b` (both must exist, on one file system) in one step:
/// `renameat2(RENAME_EXCHANGE)` on Linux, so a path that names either always names a complete
/// folder. Elsewhere (or a file system without it) two renames through a third name: for a
/// moment `b` does not exist.
pub fn exchange_dirs(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => return Ok(()),
            Err(e) if e != rustix::io::Errno::INVAL && e != rustix::io::Errno::NOSYS => {
                return Err(e.into())
            }
            Err(_) => {}
        }
    }
    let aside = b.with_extension(format!("exchange-{}", std::process::id()));
    std::fs::rename(b, &aside)?;
    std::fs::rename(a, b)?;
    std::fs::rename(&aside, a)
}

/// The signals that ask a process to stop: SIGTERM and SIGINT on POSIX, Ctrl-C and Ctrl-Break
/// on Windows. Made inside a tokio runtime; each [`StopSignals::recv`] waits for the next.
pub struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(windows)]
    ctrl_c: tokio::signal::windows::CtrlC,
    #[cfg(windows)]
    ctrl_break: tokio::signal::windows::CtrlBreak,
}

impl StopSignals {
    pub fn new() -> io::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(StopSignals {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(windows)]
        {
            Ok(StopSignals {
                ctrl_c: tokio::signal::windows::ctrl_c()?,
                ctrl_break: tokio::signal::windows::ctrl_break()?,
            })
        }
    }

    /// Waits for the next stop signal.
    pub async fn recv(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.term.recv() => {},
            _ = self.int.recv() => {},
        }
        #[cfg(windows)]
        tokio::select! {
            _ = self.ctrl_c.recv() => {},
            _ = self.ctrl_break.recv() => {},
        }
    }
}
