//! The man pages: clap's sections for each command, then EXAMPLES (per command)
//! and EXIT STATUS (the same for all).

use anyhow::Context;

/// Every page's examples: `PAGE[,PAGE...] | command line | what it does` a line.
const EXAMPLES: &str = include_str!("man_examples.txt");

/// Examples of the page `name`: (command line, what it does).
fn examples(name: &str) -> Vec<(&'static str, &'static str)> {
    EXAMPLES
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut f = l.splitn(3, " | ");
            let (pages, cmd, what) = (f.next()?, f.next()?, f.next()?);
            pages.split(',').any(|p| p == name).then_some((cmd, what))
        })
        .collect()
}

/// What each exit status means, for every command.
const EXIT_STATUS: [(&str, &str); 5] = [
    ("0", "success"),
    ("1", "the test, the store or the system failed (the reason is on one line on standard error)"),
    ("2", "bad arguments, files or settings, or a request refused before any traffic: the server's limits, a busy server, a key or protocol version that does not match"),
    ("3", "compare: the second run regressed"),
    ("4", "a sweep, search or study ended incomplete (what was measured is stored; --resume finishes it)"),
];

/// The EXAMPLES and EXIT STATUS sections of `name`'s page, in roff.
fn sections(name: &str) -> String {
    let esc = |s: &str| s.replace('\\', "\\\\").replace('-', "\\-");
    let mut o = String::new();
    let ex = examples(name);
    if !ex.is_empty() {
        o.push_str(".SH EXAMPLES\n");
        for (cmd, what) in &ex {
            o.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", esc(cmd), esc(what)));
        }
    }
    o.push_str(".SH \"EXIT STATUS\"\n");
    for (code, what) in EXIT_STATUS {
        o.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", esc(what)));
    }
    o
}

/// Writes `netsonde.1` and `netsonde-COMMAND.1` for each command of `cmd` into
/// `dir`; returns how many.
pub fn write_pages(cmd: clap::Command, dir: &std::path::Path) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut pages = vec![("netsonde".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        let name = format!("netsonde-{}", sub.get_name());
        let page = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("netsonde {}", sub.get_name()));
        pages.push((name, page));
    }
    for (name, page) in &pages {
        let mut out = Vec::new();
        clap_mangen::Man::new(page.clone())
            .title(name.to_uppercase())
            .render(&mut out)?;
        out.extend_from_slice(sections(name).as_bytes());
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(pages.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_says_its_exit_status_and_the_main_ones_show_examples() {
        let s = sections("netsonde-client");
        assert!(
            s.contains(".SH EXAMPLES\n.TP\n\\fBnetsonde client\\fR"),
            "{s}"
        );
        assert!(s.contains(".SH \"EXIT STATUS\""), "{s}");
        assert!(s.contains("\\fB3\\fR\ncompare"), "{s}");
        assert!(!sections("netsonde-keygen").contains("EXAMPLES"));
        assert!(sections("netsonde-keygen").contains("EXIT STATUS"));
        assert_eq!(examples("netsonde-server").len(), 3);
        assert!(examples("netsonde").contains(&(
            "netsonde client",
            "one TCP stream over loopback against an embedded server, with the verdict"
        )));
    }
}
