//! Pre-shared key files: `netsonde keygen` writes one, `--auth-key` reads one.
//! A key file readable by group or others is refused: a key that anyone on the
//! host can read authenticates anyone.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::{bail, Context};
use netsonde_proto::auth::Key;

/// Writes a fresh random key (64 hex digits) to a new file with mode 600.
pub fn generate(path: &Path) -> anyhow::Result<()> {
    let bytes = netsonde_driver::random_bytes::<32>().context("drawing a random key")?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| {
            format!(
                "creating {} (an existing key is never overwritten)",
                path.display()
            )
        })?;
    writeln!(f, "{}", Key(bytes).to_hex())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Reads a key file, refusing one that group or others can read or write, and
/// anything but a small regular file.
pub fn load(path: &Path) -> anyhow::Result<Key> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("reading key file {}", path.display()))?;
    let mode = meta.permissions().mode() & 0o777;
    if meta.is_file() && mode & 0o077 != 0 {
        bail!(
            "key file {} is accessible to group or others (mode {mode:03o}); run: chmod 600 {}",
            path.display(),
            path.display()
        );
    }
    let text = crate::files::read_small(path, "key file", crate::files::KEY_FILE_MAX)?;
    Key::from_hex(&text).with_context(|| format!("key file {}", path.display()))
}

/// Loads an optional key file.
pub fn load_opt(path: Option<&Path>) -> anyhow::Result<Option<Key>> {
    path.map(load).transpose()
}
