//! The sweep report's stacked bars of where each end's CPU went: a bar per
//! point, its length the flow threads' cost per KiB (or per transaction), cut
//! by category, all on one scale per end, so per-byte and per-packet costs
//! separate at a glance across message sizes, strategies or MTUs. Inline SVG:
//! the report carries no script.

use std::fmt::Write;

use netsonde_model::profile::Category;

use crate::figure::PALETTE;
use crate::markup::esc;
use crate::view::RunView;

/// Each category's colour: the palette's, `other` grey.
fn colour(c: Category) -> String {
    let i = Category::ALL.iter().position(|x| *x == c).unwrap_or(0);
    let p = if c == Category::Other {
        plotters::style::RGBColor(190, 190, 190)
    } else {
        PALETTE[i % PALETTE.len()]
    };
    format!("#{:02x}{:02x}{:02x}", p.0, p.1, p.2)
}

/// The section: one figure per end, or nothing without a breakdown.
pub fn section(s: &RunView) -> String {
    let mut o = String::new();
    for side in ["client", "server"] {
        let bars: Vec<(String, &crate::view::SideBreakdown)> = s
            .points
            .iter()
            .flat_map(|p| {
                p.breakdown
                    .iter()
                    .filter(|b| b.side == side)
                    .map(move |b| (format!("#{} {}", p.idx, s.label(p)), b))
            })
            .collect();
        if bars.is_empty() {
            continue;
        }
        if o.is_empty() {
            o.push_str(
                "<h2>Where the CPU went</h2><p class=\"note\">Each end's flow threads' CPU \
                 per unit moved, split by their sampled call chains (docs/CPU-BREAKDOWN.md); \
                 medians over repetitions. One scale per end.</p>\n",
            );
        }
        let max = bars.iter().map(|(_, b)| b.total()).fold(0.0, f64::max);
        let unit = bars[0].1.unit;
        let (label_w, bar_w, row_h) = (300.0, 420.0, 18.0);
        let width = label_w + bar_w + 60.0;
        // The legend: the categories any bar has, in rows that fit the width.
        let mut legend = Vec::new();
        let (mut lx, mut ly) = (label_w, row_h * bars.len() as f64 + 8.0);
        for c in Category::ALL {
            if !bars
                .iter()
                .any(|(_, b)| b.categories.iter().any(|x| x.0 == c))
            {
                continue;
            }
            let w = 18.0 + 6.5 * c.label().len() as f64;
            if lx + w > width {
                lx = label_w;
                ly += row_h;
            }
            legend.push((c, lx, ly));
            lx += w;
        }
        let h = ly + row_h + 4.0;
        let _ = write!(
            o,
            "<figure class=\"plot\" id=\"breakdown-{side}\"><figcaption>{side}: {unit} \
             (longest {max:.3})</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" \
             width=\"{width}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">"
        );
        for (i, (label, b)) in bars.iter().enumerate() {
            let y = row_h * i as f64;
            let _ = write!(
                o,
                "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                label_w - 6.0,
                y + 13.0,
                esc(label)
            );
            let mut x = label_w;
            for (c, v) in &b.categories {
                let w = if max > 0.0 { bar_w * v / max } else { 0.0 };
                let _ = write!(
                    o,
                    "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.0}\" \
                     fill=\"{}\"><title>{}: {v:.3} {unit}</title></rect>",
                    y + 2.0,
                    row_h - 4.0,
                    colour(*c),
                    c.label()
                );
                x += w;
            }
            let _ = write!(
                o,
                "<text x=\"{:.1}\" y=\"{:.1}\">{:.3}</text>",
                x + 4.0,
                y + 13.0,
                b.total()
            );
        }
        for (c, x, y) in legend {
            let _ = write!(
                o,
                "<rect x=\"{x:.0}\" y=\"{y:.0}\" width=\"10\" height=\"10\" fill=\"{}\"/>\
                 <text x=\"{:.0}\" y=\"{:.0}\">{}</text>",
                colour(c),
                x + 13.0,
                y + 9.0,
                c.label()
            );
        }
        o.push_str("</svg></figure>\n");
    }
    o
}
