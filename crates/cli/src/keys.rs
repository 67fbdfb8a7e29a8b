//! Pre-shared key files: `netsonde keygen` writes one, `--auth-key` reads one.
//! A key file that others can read, or group can write, is refused: a key
//! that anyone on the host can read authenticates anyone. One readable by its
//! group is taken only when root owns it, as PostgreSQL takes its server key
//! (0640 owned by root): root gave that group the key (Kubernetes mounts a
//! Secret so, owned by root with the pod's fsGroup, for a non-root process).

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::Context;
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

/// Why a key file of `mode` owned by `uid` is refused, if it is.
fn refused(mode: u32, uid: u32) -> Option<&'static str> {
    if mode & 0o007 != 0 {
        Some("accessible to others")
    } else if mode & 0o020 != 0 {
        Some("writable by its group")
    } else if mode & 0o050 != 0 && uid != 0 {
        Some("accessible to its group and not owned by root")
    } else {
        None
    }
}

/// Reads a key file, refusing one its mode does not keep to its owner (see
/// the module), and anything but a small regular file.
pub fn load(path: &Path) -> anyhow::Result<Key> {
    // A key file that is missing or unreadable is bad input: exit 2.
    let meta = std::fs::metadata(path).map_err(|e| {
        netsonde_args::UsageError(format!("reading key file {}: {e}", path.display()))
    })?;
    let mode = meta.permissions().mode() & 0o777;
    if let Some(why) = refused(mode, meta.uid()).filter(|_| meta.is_file()) {
        return Err(netsonde_args::UsageError(format!(
            "key file {} is {why} (mode {mode:03o}); run: chmod 600 {}",
            path.display(),
            path.display()
        ))
        .into());
    }
    let text = crate::files::read_small(path, "key file", crate::files::KEY_FILE_MAX)?;
    Key::from_hex(&text).with_context(|| format!("key file {}", path.display()))
}

/// Loads an optional key file.
pub fn load_opt(path: Option<&Path>) -> anyhow::Result<Option<Key>> {
    path.map(load).transpose()
}

#[cfg(test)]
mod tests {
    use super::refused;

    #[test]
    fn a_key_stays_with_its_owner_or_roots_group() {
        assert_eq!(refused(0o600, 1000), None);
        assert_eq!(refused(0o400, 65534), None);
        // Root's key given to a group (a Kubernetes Secret with fsGroup).
        assert_eq!(refused(0o440, 0), None);
        assert_eq!(refused(0o640, 0), None);
        assert!(refused(0o640, 1000).is_some());
        assert!(refused(0o660, 0).is_some());
        assert!(refused(0o644, 0).is_some());
        assert!(refused(0o604, 1000).is_some());
    }
}
