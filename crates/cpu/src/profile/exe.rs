//! The running executable's own function symbols (its ELF `.symtab`, read
//! through a cache of the file, not loaded whole), to name the user-space
//! addresses of netsonde's own code without parsing its debug information:
//! that took a second and 100-250 MB per process. Addresses in shared
//! libraries (libc's `memcpy`) are left to `backtrace`, whose libraries are
//! small.

use std::sync::OnceLock;

use object::read::ReadCache;
use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};

/// The executable's text symbols, as run-time address ranges.
#[derive(Debug, Default)]
pub struct ExeSymbols {
    /// (start, end, mangled name), sorted by start: demangled when looked up.
    syms: Vec<(u64, u64, Box<str>)>,
}

impl ExeSymbols {
    /// The function `ip` (a run-time address) is in, when the executable's
    /// symbols cover it.
    pub fn lookup(&self, ip: u64) -> Option<String> {
        let i = self.syms.partition_point(|s| s.0 <= ip);
        let (start, end, name) = self.syms.get(i.checked_sub(1)?)?;
        (ip >= *start && ip < *end).then(|| format!("{:#}", rustc_demangle::demangle(name)))
    }

    /// Whether `ip` is within the executable's code (a symbol or not).
    pub fn covers(&self, ip: u64) -> bool {
        match (self.syms.first(), self.syms.last()) {
            (Some(lo), Some(hi)) => ip >= lo.0 && ip < hi.1,
            _ => false,
        }
    }

    /// Whether it has no symbols (a stripped binary).
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
}

/// Where the executable's file offset 0 is mapped (`/proc/self/maps`).
fn load_base(exe: &str) -> Option<u64> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let range = f.next()?;
        let _perms = f.next()?;
        let offset = u64::from_str_radix(f.next()?, 16).ok()?;
        let path = f.nth(2)?;
        (path == exe && offset == 0)
            .then(|| u64::from_str_radix(range.split('-').next()?, 16).ok())
            .flatten()
    })
}

fn read() -> Option<ExeSymbols> {
    let exe = std::fs::read_link("/proc/self/exe").ok()?;
    let exe = exe.to_str()?.to_string();
    let base = load_base(&exe)?;
    let file = std::fs::File::open(&exe).ok()?;
    let cache = ReadCache::new(file);
    let obj = object::File::parse(&cache).ok()?;
    // A position-independent executable's addresses are relative to where
    // its lowest segment was loaded.
    let low = obj.segments().map(|s| s.address()).min().unwrap_or(0);
    let bias = base.wrapping_sub(low);
    let mut syms: Vec<(u64, u64, Box<str>)> = obj
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .filter_map(|s| {
            let name = s.name().ok()?;
            let start = s.address().wrapping_add(bias);
            Some((start, start + s.size(), Box::from(name)))
        })
        .collect();
    syms.sort_unstable_by_key(|s| s.0);
    Some(ExeSymbols { syms })
}

/// This process's executable's symbols, read once.
pub fn symbols() -> &'static ExeSymbols {
    static S: OnceLock<ExeSymbols> = OnceLock::new();
    S.get_or_init(|| read().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_function_of_this_binary() -> u64 {
        std::hint::black_box(7)
    }

    #[test]
    fn this_binarys_own_function_is_named() {
        let s = symbols();
        if s.is_empty() {
            eprintln!("skipped: this test binary has no symbol table");
            return;
        }
        let ip = a_function_of_this_binary as *const () as usize as u64;
        let name = s.lookup(ip + 1).expect("covered");
        assert!(name.ends_with("a_function_of_this_binary"), "{name}");
        assert_eq!(s.lookup(0x10), None);
    }
}
