//! Reading the small files a user names (key files, experiment files): only a
//! regular file, only up to a bound. A FIFO would block the read forever and a
//! character device (`/dev/zero`) would never end, so both are refused before a
//! byte is read. The file is opened non-blocking, so even opening a FIFO with no
//! writer returns at once, and checked through the open descriptor, so it cannot be
//! swapped between the check and the read.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use anyhow::{bail, Context};

/// The most a key file may hold.
pub const KEY_FILE_MAX: u64 = 4 << 10;
/// The most an experiment or link file may hold.
pub const TEXT_FILE_MAX: u64 = 1 << 20;

/// Reads `path` as UTF-8 text, if it is a regular file of at most `max` bytes.
/// `what` names it in errors ("key file", "experiment file").
pub fn read_small(path: &Path, what: &str, max: u64) -> anyhow::Result<String> {
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32)
        .open(path)
        .with_context(|| format!("reading {what} {shown}"))?;
    let meta = file
        .metadata()
        .with_context(|| format!("reading {what} {shown}"))?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let is = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        bail!("{what} {shown} is {is}: give a regular file");
    }
    if meta.len() > max {
        bail!(
            "{what} {shown} is {} bytes, more than the {max} a {what} may hold",
            meta.len()
        );
    }
    let mut text = String::new();
    file.take(max + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("reading {what} {shown}"))?;
    if text.len() as u64 > max {
        bail!("{what} {shown} grew past {max} bytes while being read");
    }
    Ok(text)
}

/// `--db-file`: the store named by the first line of `path` that is not
/// blank (a mounted secret holding a PostgreSQL URL). A file that names none,
/// or a line `--db` would refuse, is a usage error that never quotes it.
pub fn read_db_location(path: &Path) -> anyhow::Result<netsonde_store::Location> {
    let text = read_small(path, "--db-file", KEY_FILE_MAX)?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    let Some(line) = line else {
        return Err(netsonde_args::UsageError(format!(
            "--db-file {}: the file names no database (its first line is the URL or path)",
            path.display()
        ))
        .into());
    };
    line.parse().map_err(|e: String| {
        netsonde_args::UsageError(format!("--db-file {}: {e}", path.display())).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = std::env::temp_dir().join(format!("sonde-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok");
        std::fs::write(&ok, "hello").unwrap();
        assert_eq!(read_small(&ok, "key file", 10).unwrap(), "hello");
        let e = read_small(&ok, "key file", 4).unwrap_err().to_string();
        assert!(e.contains("more than the 4"), "{e}");
        let e = read_small(&dir, "key file", 10).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = read_small(Path::new("/dev/zero"), "key file", 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
        let fifo = dir.join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::RWXU).unwrap();
        let e = read_small(&fifo, "key file", 10).unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
