//! Text laid out for a terminal: columns two spaces apart within a width
//! (the last cut where it must), prose wrapped, numbers in three digits. What
//! the summary and the search's table share.

use std::fmt::Write;

/// Three significant digits (`17.7`, `170`, `0.237`).
pub(crate) fn sig3(v: f64) -> String {
    // As rounded: 9.996 is 10.0, not 10.00.
    let a = v.abs() * 1.0005;
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A value and its prefix: `(17.7, "G")` for 17.7e9.
pub(crate) fn prefixed(v: f64) -> (f64, &'static str) {
    // A value that three digits round up to the next prefix takes it: 999.6e6
    // is 1.00 G, not 1000 M.
    let rounded = v.abs() * 1.0005;
    [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| rounded >= *d)
        .map_or((v, ""), |(d, p)| (v / d, p))
}

/// A bit rate in three digits: `999 Mbit/s`, `17.7 Gbit/s`.
pub(crate) fn bit_rate(v: f64) -> String {
    let (scaled, prefix) = prefixed(v);
    format!("{} {prefix}bit/s", sig3(scaled))
}

/// Width in characters (every character this writes is one column wide).
pub(crate) fn width_of(s: &str) -> usize {
    s.chars().count()
}

/// `s` cut to `w` columns, with `…` where it was cut.
pub(crate) fn fit(s: &str, w: usize) -> String {
    if width_of(s) <= w {
        s.to_string()
    } else if w == 0 {
        String::new()
    } else {
        s.chars().take(w - 1).chain(['…']).collect()
    }
}

/// Rows of cells as aligned columns two spaces apart within `width`: columns
/// in `left` are aligned left, the others right, the last always left and cut
/// to what is left of the line (the first of `left`'s columns, the labels,
/// gives way first, down to 10 columns, so the last keeps `min_last`). A row
/// with fewer cells ends with a cell that
/// spans the rest of the line (a point that has no figures, and why).
/// Returns the text and whether a last cell was cut.
pub(crate) fn columns_cut(
    rows: &[Vec<String>],
    left: &[usize],
    min_last: usize,
    width: usize,
) -> (String, bool) {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut w: Vec<usize> = (0..n.saturating_sub(1))
        .map(|i| {
            rows.iter()
                .filter(|r| r.len() == n)
                .map(|r| width_of(&r[i]))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let used = |w: &[usize]| w.iter().map(|x| x + 2).sum::<usize>();
    if let Some(&first) = left.first() {
        if first < w.len() && used(&w) + min_last > width {
            let over = used(&w) + min_last - width;
            w[first] = w[first].saturating_sub(over).max(10).min(w[first]);
        }
    }
    let mut out = String::new();
    let mut cut = false;
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i + 1 == r.len() {
                let room = width.saturating_sub(width_of(&line));
                cut |= width_of(c) > room;
                line.push_str(&fit(c, room));
                break;
            }
            push_aligned(&mut line, &fit(c, w[i]), w[i], left.contains(&i));
            line.push_str("  ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    (out, cut)
}

/// `cell` padded to `w` columns: left-aligned, or right-aligned (numbers).
fn push_aligned(line: &mut String, cell: &str, w: usize, left: bool) {
    let pad = " ".repeat(w.saturating_sub(width_of(cell)));
    if left {
        let _ = write!(line, "{cell}{pad}");
    } else {
        let _ = write!(line, "{pad}{cell}");
    }
}

/// [`columns_cut`]'s text, the last column kept whole where the labels can
/// give way.
pub(crate) fn columns(rows: &[Vec<String>], left: &[usize], width: usize) -> String {
    let last = rows
        .iter()
        .skip(1)
        .filter_map(|r| r.last())
        .map(|c| width_of(c))
        .max()
        .unwrap_or(0);
    columns_cut(rows, left, last, width).0
}

/// Prose wrapped at `width`, its first line after `lead` and the rest under it.
pub fn wrapped(text: &str, width: usize, lead: &str) -> String {
    let indent = " ".repeat(width_of(lead));
    let opts = textwrap::Options::new(width)
        .initial_indent(lead)
        .subsequent_indent(&indent);
    let mut o = String::new();
    for para in text.lines() {
        for l in textwrap::wrap(para, &opts) {
            o.push_str(&l);
            o.push('\n');
        }
    }
    o
}

/// A table of cells laid out two spaces apart within `width`. When its
/// columns do not fit, they are split into blocks that do, each repeating the
/// first `keys` columns (what a row is), a blank line between: no cell is cut
/// and no row wraps. Columns in `left` are left-aligned, the others
/// right-aligned (numbers). A row of one cell is a note, written whole in its
/// place in the first block.
pub(crate) fn table(rows: &[Vec<String>], keys: usize, left: &[usize], width: usize) -> String {
    let cells = || rows.iter().filter(|r| r.len() > 1);
    let n = cells().map(Vec::len).max().unwrap_or(0);
    let w: Vec<usize> = (0..n)
        .map(|i| {
            cells()
                .filter_map(|r| r.get(i))
                .map(|c| width_of(c))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let keys = keys.min(n);
    let span = |cols: &[usize]| {
        cols.iter().map(|&c| w[c]).sum::<usize>() + 2 * cols.len().saturating_sub(1)
    };
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = (0..keys).collect();
    for i in keys..n {
        cur.push(i);
        if cur.len() > keys + 1 && span(&cur) > width {
            cur.pop();
            blocks.push(std::mem::replace(&mut cur, (0..keys).collect()));
            cur.push(i);
        }
    }
    if cur.len() > keys || blocks.is_empty() {
        blocks.push(cur);
    }
    let mut out = String::new();
    for (b, cols) in blocks.iter().enumerate() {
        if b > 0 {
            out.push('\n');
        }
        for r in rows {
            if r.len() <= 1 {
                if b == 0 {
                    out.push_str(r.first().map_or("", String::as_str));
                    out.push('\n');
                }
                continue;
            }
            // A short row (a total) has nothing in a later block.
            if b > 0 && cols[keys..].iter().all(|&c| c >= r.len()) {
                continue;
            }
            let mut line = String::new();
            for (k, &c) in cols.iter().enumerate() {
                if k > 0 {
                    line.push_str("  ");
                }
                let cell = r.get(c).map_or("", String::as_str);
                push_aligned(&mut line, cell, w[c], left.contains(&c));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Every line of prose wider than `width` wrapped to it, its continuation
/// under the text after its lead (`verdict: `, `  try: `, its indentation).
/// A table's row (cells two spaces apart) is left whole: its columns would not
/// survive a wrap.
pub fn prose_fitted(text: &str, width: usize) -> String {
    let mut o = String::with_capacity(text.len());
    for line in text.lines() {
        let body = line.trim_start();
        if width_of(line) <= width || body.contains("  ") {
            o.push_str(line);
            o.push('\n');
            continue;
        }
        let indent = line.len() - body.len();
        let lead_end = body
            .find(": ")
            .filter(|&i| i <= 24)
            .map_or(indent, |i| indent + i + 2);
        let (lead, rest) = line.split_at(lead_end);
        o.push_str(&wrapped(rest, width, lead));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_cut_to_fit_and_labels_give_way_first() {
        assert_eq!(fit("tcp-stream", 5), "tcp-…");
        assert_eq!(fit("tcp", 5), "tcp");
        let rows = vec![
            vec!["#".into(), "point".into(), "limit".into()],
            vec!["1".into(), "a".repeat(30), "b".repeat(20)],
        ];
        // The label gives way so the last column keeps its 20 columns.
        let (t, cut) = columns_cut(&rows, &[1], 20, 40);
        assert!(!cut, "{t}");
        assert!(t.lines().all(|l| width_of(l) <= 40), "{t}");
        assert!(t.contains(&"b".repeat(20)), "{t}");
        // Not below 10 columns: then the last is cut.
        let (t, cut) = columns_cut(&rows, &[1], 20, 30);
        assert!(cut, "{t}");
        assert!(t.lines().all(|l| width_of(l) <= 30), "{t}");
    }

    /// Columns that do not fit are split into blocks that do, each with the
    /// key column; a one-cell row is a note, once.
    #[test]
    fn a_wide_table_splits_into_blocks_with_its_keys() {
        let row = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let rows = vec![
            row(&["cpu", "busy", "user", "sys"]),
            row(&["client", "1.25", "10.0%", "45.0%"]),
            row(&["server  (no figures)"]),
        ];
        let all = table(&rows, 1, &[0], 80);
        assert_eq!(all.lines().next(), Some("cpu     busy   user    sys"));
        let narrow = table(&rows, 1, &[0], 20);
        assert!(narrow.lines().all(|l| width_of(l) <= 20), "{narrow}");
        assert_eq!(narrow.matches("client").count(), 2, "{narrow}");
        assert_eq!(narrow.matches("no figures").count(), 1, "{narrow}");
        assert!(narrow.contains("\n\ncpu "), "{narrow}");
    }

    #[test]
    fn three_digits() {
        assert_eq!(sig3(17.749), "17.7");
        assert_eq!(sig3(170.4), "170");
        assert_eq!(sig3(0.2374), "0.237");
        assert_eq!(sig3(9.996), "10.0");
        assert_eq!(bit_rate(9.41e9), "9.41 Gbit/s");
        assert_eq!(bit_rate(999.6e6), "1.00 Gbit/s");
        assert_eq!(bit_rate(999.4e6), "999 Mbit/s");
    }
}
