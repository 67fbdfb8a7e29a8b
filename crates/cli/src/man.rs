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
    ("2", "bad arguments, files or settings (a key file missing or others can read), or a request refused before any traffic: the server's limits, a busy server, a key or protocol version that does not match, a server that is not netsonde's (an iperf3 -s without --peer iperf3)"),
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

/// `cmd`'s page named `name` (`netsonde-runs`, run as `netsonde runs`), then
/// one for each of its subcommands, nested ones too (`netsonde-runs-list`),
/// as clap_mangen's SEE ALSO names them.
fn pages(name: &str, bin: &str, cmd: &clap::Command, out: &mut Vec<(String, clap::Command)>) {
    out.push((
        name.to_string(),
        cmd.clone().name(name.to_string()).bin_name(bin.to_string()),
    ));
    for sub in cmd.get_subcommands() {
        let n = format!("{name}-{}", sub.get_name());
        let b = format!("{bin} {}", sub.get_name());
        if sub.get_name() == "help" {
            // clap's own: one page, not one per command it can explain.
            let about = sub.get_about().cloned().unwrap_or_default();
            let page = clap::Command::new(n.clone()).about(about);
            pages(&n, &b, &page, out);
        } else {
            pages(&n, &b, sub, out);
        }
    }
}

/// Writes `netsonde.1` and `netsonde-COMMAND[-SUBCOMMAND].1` for each command
/// of `cmd`, nested ones too, into `dir`; returns how many.
pub fn write_pages(cmd: clap::Command, dir: &std::path::Path) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // Built, so clap's own `help` subcommands are there, as SEE ALSO names them.
    let mut cmd = cmd;
    cmd.build();
    let mut all = Vec::new();
    pages("netsonde", "netsonde", &cmd, &mut all);
    for (name, page) in &all {
        let mut out = Vec::new();
        clap_mangen::Man::new(page.clone())
            .title(name.to_uppercase())
            .render(&mut out)?;
        out.extend_from_slice(sections(name).as_bytes());
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(all.len())
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
        // Every page SEE ALSO names is written, nested commands' too.
        let dir = std::env::temp_dir().join(format!("netsonde-man-{}", std::process::id()));
        write_pages(
            <netsonde_args::Cli as clap::CommandFactory>::command(),
            &dir,
        )
        .unwrap();
        for page in std::fs::read_dir(&dir).unwrap() {
            let path = page.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for named in text
                .lines()
                .filter_map(|l| l.trim().strip_suffix("(1)"))
                .filter(|l| l.starts_with("netsonde"))
            {
                let file = dir.join(format!("{}.1", named.replace("\\-", "-")));
                assert!(file.exists(), "{} names {named}(1)", path.display());
            }
        }
        assert!(dir.join("netsonde-runs-list.1").exists());
        let _ = std::fs::remove_dir_all(&dir);
        assert!(examples("netsonde").contains(&(
            "netsonde client",
            "one TCP stream over loopback against an embedded server, with the verdict"
        )));
    }
}
