//! The code's shape, checked: no import loop between the files of a crate
//! (docs/ARCHITECTURE.md). A file's module is its first path component under
//! `src/`; it uses another when its code (not its comments or tests) names
//! `crate::other`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn uses(src: &str, own: &str) -> BTreeSet<String> {
    let code = src.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for part in line.split("crate::").skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != own {
                out.insert(name);
            }
        }
    }
    out
}

fn modules(dir: &Path, root: &Path, out: &mut BTreeMap<String, BTreeSet<String>>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            modules(&p, root, out);
            continue;
        }
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = p.strip_prefix(root).unwrap().with_extension("");
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .to_string();
        if ["lib", "main"].contains(&first.as_str()) || first.ends_with("_tests") {
            continue;
        }
        let src = std::fs::read_to_string(&p).unwrap();
        let u = uses(&src, &first);
        out.entry(first).or_default().extend(u);
    }
}

/// Every crate's files form no cycle of two or three modules.
#[test]
fn no_import_loops_between_files() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut loops = Vec::new();
    for c in std::fs::read_dir(&crates).unwrap().flatten() {
        let src = c.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let mut m = BTreeMap::new();
        modules(&src, &src, &mut m);
        for (a, ua) in &m {
            for b in ua.iter().filter(|b| m.contains_key(*b)) {
                if m[b].contains(a) && a < b {
                    loops.push(format!("{}: {a} <-> {b}", c.path().display()));
                }
                for x in m[b].iter().filter(|x| m.contains_key(*x) && *x != a) {
                    if m[x].contains(a) && a < b && a < x {
                        loops.push(format!("{}: {a} -> {b} -> {x} -> {a}", c.path().display()));
                    }
                }
            }
        }
    }
    assert!(loops.is_empty(), "import loops: {loops:#?}");
}
