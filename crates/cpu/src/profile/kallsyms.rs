//! The kernel's function symbols from `/proc/kallsyms`, to name the addresses in
//! a sample's kernel call chain.

use std::sync::{Arc, OnceLock};

/// Where the kernel lists its symbols.
pub const KALLSYMS: &str = "/proc/kallsyms";

/// The kernel's text symbols, sorted by address.
#[derive(Debug, Default)]
pub struct Kallsyms {
    addrs: Vec<u64>,
    names: Vec<Box<str>>,
}

impl Kallsyms {
    /// Parses `/proc/kallsyms` text: its text symbols (`t`, `T`, `w`, `W`),
    /// modules' included (their `[module]` suffix dropped). Lines that do not
    /// parse are skipped.
    pub fn parse(text: &str) -> Kallsyms {
        let mut syms: Vec<(u64, &str)> = text
            .lines()
            .filter_map(|line| {
                let mut it = line.split_whitespace();
                let addr = u64::from_str_radix(it.next()?, 16).ok()?;
                let kind = it.next()?;
                let name = it.next()?;
                matches!(kind, "t" | "T" | "w" | "W").then_some((addr, name))
            })
            .collect();
        syms.sort_unstable_by_key(|s| s.0);
        Kallsyms {
            addrs: syms.iter().map(|s| s.0).collect(),
            names: syms.iter().map(|s| Box::from(s.1)).collect(),
        }
    }

    /// Whether the addresses are hidden (`kernel.kptr_restrict`: every one 0).
    pub fn hidden(&self) -> bool {
        self.addrs.last().is_none_or(|a| *a == 0)
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// The function `addr` is in: the symbol at or below it. `None` below the
    /// first symbol.
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.addrs.partition_point(|a| *a <= addr);
        (i > 0).then(|| &*self.names[i - 1])
    }
}

/// The kernel's symbols, read once per process (they change only as modules
/// load). `None` when the file cannot be read.
pub fn kernel() -> Option<Arc<Kallsyms>> {
    static K: OnceLock<Option<Arc<Kallsyms>>> = OnceLock::new();
    K.get_or_init(|| {
        let text = std::fs::read_to_string(KALLSYMS).ok()?;
        Some(Arc::new(Kallsyms::parse(&text)))
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
ffffffff81000080 T entry_SYSCALL_64
ffffffff81000300 d some_data
ffffffff81a00000 t tcp_sendmsg_locked
ffffffff81a01000 T tcp_sendmsg
ffffffffc0201000 t veth_xmit\t[veth]
garbage line
";

    #[test]
    fn an_address_is_named_by_the_symbol_at_or_below_it() {
        let k = Kallsyms::parse(TEXT);
        assert_eq!(k.len(), 4, "data symbols and bad lines are skipped");
        assert!(!k.hidden());
        assert_eq!(k.lookup(0xffffffff81000000), None);
        assert_eq!(k.lookup(0xffffffff81000080), Some("entry_SYSCALL_64"));
        assert_eq!(k.lookup(0xffffffff81a00fff), Some("tcp_sendmsg_locked"));
        assert_eq!(k.lookup(0xffffffff81a01004), Some("tcp_sendmsg"));
        assert_eq!(k.lookup(0xffffffffc0201010), Some("veth_xmit"));
    }

    #[test]
    fn restricted_addresses_are_hidden() {
        let k = Kallsyms::parse("0000000000000000 T a\n0000000000000000 t b\n");
        assert!(k.hidden());
        assert!(Kallsyms::parse("").hidden());
    }

    #[test]
    fn this_hosts_symbols_load() {
        let Some(k) = kernel() else {
            eprintln!("skipped: {KALLSYMS} unreadable");
            return;
        };
        assert!(k.len() > 1000, "{} symbols", k.len());
    }
}
