//! The man pages, shell completions and `--help` texts checked into `contrib/`
//! are what this build generates. After changing an option, regenerate them:
//! `NETSONDE_BLESS=1 cargo test -p netsonde --test tests golden`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::run;

fn contrib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib")
}

/// Compares `got` with the checked-in file, or writes it when blessing.
fn golden(rel: &str, got: &[u8]) {
    let path = contrib().join(rel);
    if std::env::var_os("NETSONDE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (regenerate with NETSONDE_BLESS=1)", path.display()));
    assert!(
        want == got,
        "{} is not what this build generates: regenerate with NETSONDE_BLESS=1 cargo test -p netsonde --test tests golden",
        path.display()
    );
}

fn stdout(args: &[&str]) -> Vec<u8> {
    let out = run(args, Duration::from_secs(30));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn completions_are_current() {
    for shell in ["bash", "zsh", "fish"] {
        golden(
            &format!("completions/netsonde.{shell}"),
            &stdout(&["completions", shell]),
        );
    }
}

#[test]
fn man_pages_are_current() {
    let dir = std::env::temp_dir().join(format!("netsonde-man-{}", std::process::id()));
    let out = run(&["man", dir.to_str().unwrap()], Duration::from_secs(30));
    assert!(out.status.success());
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(names.contains(&"netsonde.1".to_string()), "{names:?}");
    assert!(
        names.contains(&"netsonde-client.1".to_string()),
        "{names:?}"
    );
    for n in &names {
        golden(&format!("man/{n}"), &std::fs::read(dir.join(n)).unwrap());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 52: off a terminal, help fits 80 columns.
#[test]
fn help_texts_are_current() {
    let narrow = |what: &str, out: &[u8]| {
        let text = String::from_utf8_lossy(out);
        let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
        assert!(wide.is_empty(), "{what}: lines over 80 columns: {wide:#?}");
    };
    let top = stdout(&["--help"]);
    narrow("netsonde --help", &top);
    golden("help/netsonde.txt", &top);
    for cmd in ["client", "server", "sweep", "search"] {
        let out = stdout(&[cmd, "--help"]);
        narrow(cmd, &out);
        golden(&format!("help/{cmd}.txt"), &out);
    }
}
