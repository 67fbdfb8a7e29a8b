//! The man pages: clap's sections for each command, then EXAMPLES (per command)
//! and EXIT STATUS (the same for all).

use anyhow::Context;

/// Examples per command: (command line, what it does).
fn examples(command: &str) -> &'static [(&'static str, &'static str)] {
    match command {
        "netsonde" | "netsonde-client" => &[
            (
                "netsonde client",
                "one TCP stream over loopback against an embedded server, with the verdict",
            ),
            (
                "netsonde client HOST -P 4 -t 30",
                "four streams for 30 s against `netsonde server` on HOST",
            ),
            (
                "netsonde client HOST -u -b 1G -l 1400",
                "UDP at 1 Gbit/s in 1400-byte datagrams",
            ),
            (
                "netsonde client HOST -T tcp-rr --request-size 64",
                "request/response latency and rate",
            ),
            (
                "netsonde client HOST --rrul",
                "latency under load (responsiveness, RPM)",
            ),
            (
                "netsonde -c HOST --peer iperf3 -R -J",
                "against an unmodified iperf3 -s, reversed, one JSON document",
            ),
            (
                "netsonde client HOST -f m --title edge1",
                "rates in Mbit/s, every line titled, as iperf3's -f and --title",
            ),
        ],
        "netsonde-server" => &[
            (
                "netsonde server",
                "serve netsonde and iperf3 clients on [::]:5300",
            ),
            (
                "netsonde -s -p 5201 --max-sessions 4",
                "in iperf3's place, four tests at once",
            ),
            (
                "netsonde server --auth-key key.psk",
                "only clients holding the key; sessions sealed",
            ),
        ],
        "netsonde-sweep" => &[
            (
                "netsonde sweep HOST --tests tcp-stream,tcp-rr --sizes 64,1K,64K --repeat 5",
                "every combination, 5 repetitions each, stored and reported",
            ),
            (
                "netsonde sweep --resume 3",
                "finish what run 3 left pending",
            ),
        ],
        "netsonde-search" => &[(
            "netsonde search HOST --frames 64,1518 --repeat 3",
            "RFC 2544 loss-free rate per frame size, three searches each",
        )],
        "netsonde-compare" => &[
            (
                "netsonde compare 3 4",
                "judge run 4 against run 3; exit 3 if it regressed",
            ),
            (
                "netsonde compare 3 4 --threshold 10%",
                "count only changes of 10% or more",
            ),
        ],
        "netsonde-lab" => &[(
            "sudo netsonde lab run --rate 100M --delay 10ms -- client -t 5",
            "a test through an emulated 100 Mbit/s, 20 ms link between two namespaces",
        )],
        _ => &[],
    }
}

/// What each exit status means, for every command.
const EXIT_STATUS: [(&str, &str); 5] = [
    ("0", "success"),
    ("1", "the test, the store or the system failed (the reason is on one line on standard error)"),
    ("2", "bad arguments, files or settings, or a request refused before any traffic"),
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
        for (cmd, what) in ex {
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
    }
}
