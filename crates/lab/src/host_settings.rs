//! Host settings (sysctls) a run changes, recorded before they change, so that
//! they are put back however the run ends.
//!
//! [`raise`] writes a record (`sysctl-PID-KEY.json` in the lab's state folder:
//! the key, its file, its old value, the owner process) *before* it writes the
//! new value, and the returned [`Raised`] puts the old value back and removes the
//! record when dropped. A run killed with SIGKILL drops nothing: its records
//! stay, and [`restore_orphans`] (run by `lab clean` and at every study's start)
//! puts back every value whose owner is gone. A value someone else changed since
//! is left as it is, and said.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state::{ProcId, StateDir};

/// One changed setting, as recorded before the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The sysctl (`net.core.rmem_max`).
    pub key: String,
    /// Its file under `/proc/sys`.
    pub path: PathBuf,
    /// The value before the run.
    pub old: String,
    /// The value the run set.
    pub new: String,
    /// The run's process.
    pub owner: ProcId,
}

/// What [`raise`] did to one key.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Raised from `old` to `new`.
    Raised {
        /// Before.
        old: String,
        /// Now.
        new: u64,
    },
    /// Already at least what was asked: left alone.
    AlreadyAtLeast(u64),
    /// Could not be read or written (not root, no such key): left alone.
    Unchanged(String),
}

/// Settings raised for a run: put back when dropped.
#[derive(Debug, Default)]
pub struct Raised {
    records: Vec<(PathBuf, Record)>,
}

/// The file of `key`'s setting under `/proc/sys`.
pub fn sysctl_path(key: &str) -> PathBuf {
    Path::new("/proc/sys").join(key.replace('.', "/"))
}

fn record_path(dir: &StateDir, owner: &ProcId, key: &str) -> PathBuf {
    dir.path().join(format!(
        "sysctl-{}-{}.json",
        owner.pid,
        key.replace('/', "_")
    ))
}

/// Raises `key` (a sysctl) to at least `at_least` for this process's run,
/// recording its old value in `dir` first.
pub fn raise(dir: &StateDir, raised: &mut Raised, key: &str, at_least: u64) -> Outcome {
    raise_at(dir, raised, key, &sysctl_path(key), at_least)
}

/// [`raise`] for the setting in file `path` (tests use a file of their own).
pub fn raise_at(
    dir: &StateDir,
    raised: &mut Raised,
    key: &str,
    path: &Path,
    at_least: u64,
) -> Outcome {
    let old = match std::fs::read_to_string(path) {
        Ok(v) => v.trim().to_string(),
        Err(e) => return Outcome::Unchanged(e.to_string()),
    };
    if let Ok(v) = old.parse::<u64>() {
        if v >= at_least {
            return Outcome::AlreadyAtLeast(v);
        }
    }
    let rec = Record {
        key: key.into(),
        path: path.to_path_buf(),
        old: old.clone(),
        new: at_least.to_string(),
        owner: ProcId::me(),
    };
    let file = record_path(dir, &rec.owner, key);
    let written = std::fs::create_dir_all(dir.path())
        .and_then(|()| serde_json::to_vec(&rec).map_err(|e| std::io::Error::other(e.to_string())))
        .and_then(|json| std::fs::write(&file, json));
    if let Err(e) = written {
        // Without a record a kill would leave it changed: do not change it.
        return Outcome::Unchanged(format!(
            "cannot record its old value in {}: {e}",
            file.display()
        ));
    }
    match std::fs::write(path, &rec.new) {
        Ok(()) => {
            raised.records.push((file, rec));
            Outcome::Raised { old, new: at_least }
        }
        Err(e) => {
            let _ = std::fs::remove_file(&file);
            Outcome::Unchanged(e.to_string())
        }
    }
}

/// Puts `rec` back, unless someone changed it since; one line saying what.
fn put_back(rec: &Record) -> String {
    let now = std::fs::read_to_string(&rec.path)
        .map(|v| v.trim().to_string())
        .unwrap_or_default();
    if now != rec.new {
        return format!(
            "{} is {now}, not the {} the run set: left as it is (it was {})",
            rec.key, rec.new, rec.old
        );
    }
    match std::fs::write(&rec.path, &rec.old) {
        Ok(()) => format!("{} restored to {}", rec.key, rec.old),
        Err(e) => format!("{}: could not restore {}: {e}", rec.key, rec.old),
    }
}

impl Raised {
    /// Puts every setting back now and returns what was done.
    pub fn restore(&mut self) -> Vec<String> {
        let mut said = Vec::new();
        for (file, rec) in self.records.drain(..) {
            said.push(put_back(&rec));
            let _ = std::fs::remove_file(file);
        }
        said
    }
}

/// Puts the settings back if [`Raised::restore`] was not called; what it did is
/// lost with it, so a caller that says what it did calls `restore` itself.
impl Drop for Raised {
    fn drop(&mut self) {
        self.restore();
    }
}

/// Puts back every setting a run that is gone (killed) left changed, and
/// removes its records; one line per setting. Records of runs still going are
/// left alone.
pub fn restore_orphans(dir: &StateDir) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.path()) else {
        return Vec::new();
    };
    let mut said = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("sysctl-") && name.ends_with(".json")) {
            continue;
        }
        let rec: Record = match std::fs::read(e.path())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(r) => r,
            None => {
                said.push(format!("{name}: not a setting's record, left alone"));
                continue;
            }
        };
        if rec.owner.alive() {
            continue;
        }
        said.push(format!(
            "{} (left by process {}, gone)",
            put_back(&rec),
            rec.owner.pid
        ));
        let _ = std::fs::remove_file(e.path());
    }
    said.sort();
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> (StateDir, PathBuf) {
        let d = std::env::temp_dir().join(format!("netsonde-hs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let setting = d.join("rmem_max");
        std::fs::write(&setting, "212992\n").unwrap();
        (StateDir::new(d.join("state")), setting)
    }

    #[test]
    fn a_raised_setting_is_put_back_when_dropped() {
        let (dir, file) = scratch("drop");
        let mut r = Raised::default();
        let got = raise_at(&dir, &mut r, "net.core.rmem_max", &file, 1 << 28);
        assert!(
            matches!(got, Outcome::Raised { ref old, .. } if old == "212992"),
            "{got:?}"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            (1u64 << 28).to_string()
        );
        let said = r.restore();
        assert_eq!(
            said,
            vec!["net.core.rmem_max restored to 212992".to_string()]
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "212992");
        assert_eq!(restore_orphans(&dir), Vec::<String>::new());
        // Already high enough: untouched, no record.
        assert_eq!(
            raise_at(&dir, &mut r, "net.core.rmem_max", &file, 4096),
            Outcome::AlreadyAtLeast(212992)
        );
    }

    /// A run killed with SIGKILL drops nothing: the record it left restores the
    /// value once its process is gone, and only then.
    #[test]
    fn a_killed_runs_record_restores_the_setting() {
        let (dir, file) = scratch("orphan");
        let mut r = Raised::default();
        raise_at(&dir, &mut r, "net.core.rmem_max", &file, 1 << 28);
        // Forget it, as a SIGKILL would.
        let records = std::mem::take(&mut r.records);
        assert_eq!(records.len(), 1);
        // Its owner (this process) still runs: left alone.
        assert!(restore_orphans(&dir).is_empty());
        // Rewrite the record as a gone process's.
        let mut rec = records[0].1.clone();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let gone = ProcId::of(pid);
        child.wait().unwrap();
        rec.owner = gone.unwrap_or(ProcId { pid, start: 1 });
        std::fs::write(&records[0].0, serde_json::to_vec(&rec).unwrap()).unwrap();
        let said = restore_orphans(&dir);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("net.core.rmem_max restored to 212992"),
            "{said:?}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "212992");
        assert!(restore_orphans(&dir).is_empty());
    }
}
