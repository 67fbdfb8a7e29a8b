//! Draws a [`PlotSpec`] as a self-contained SVG (plotters' SVG backend: no fonts
//! are loaded, text is left to the viewer's `sans-serif`).

use plotters::prelude::*;

use crate::study::PlotSpec;

/// Ten distinguishable colours (Tableau 10), for every figure.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn bounds(spec: &PlotSpec) -> Option<((f64, f64), (f64, f64))> {
    let mut xs = spec
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .peekable();
    xs.peek()?;
    let (mut x0, mut x1) = (f64::MAX, f64::MIN);
    for x in xs {
        x0 = x0.min(x);
        x1 = x1.max(x);
    }
    let mut y1 = f64::MIN;
    for s in &spec.series {
        for p in &s.points {
            y1 = y1.max(p.1);
        }
        for b in &s.band {
            y1 = y1.max(b.2);
        }
    }
    if x1 <= x0 {
        x1 = x0 * 2.0 + 1.0;
    }
    if spec.log_x && x0 <= 0.0 {
        x0 = 1.0;
    }
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.08 };
    Some(((x0, x1), (0.0, y1)))
}

/// Renders the plot as SVG text; a plot with no points renders a note instead.
pub fn svg(spec: &PlotSpec) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (760, 440)).into_drawing_area();
        let _ = draw(&root, spec);
        let _ = root.present();
    }
    out
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    spec: &PlotSpec,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let Some(((x0, x1), (y0, y1))) = bounds(spec) else {
        root.draw(&Text::new("no data", (340, 210), ("sans-serif", 18)))?;
        return Ok(());
    };
    let mut b = ChartBuilder::on(root);
    b.caption(&spec.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(58);
    if spec.log_x {
        let mut c = b.build_cartesian_2d((x0..x1).log_scale(), y0..y1)?;
        c.configure_mesh()
            .x_desc(&spec.x_label)
            .y_desc(&spec.y_label)
            .draw()?;
        series(&mut c, spec)?;
    } else {
        let mut c = b.build_cartesian_2d(x0..x1, y0..y1)?;
        c.configure_mesh()
            .x_desc(&spec.x_label)
            .y_desc(&spec.y_label)
            .draw()?;
        series(&mut c, spec)?;
    }
    Ok(())
}

fn series<'a, DB: DrawingBackend + 'a, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    c: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    spec: &PlotSpec,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    for (i, s) in spec.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        if s.band.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = s.band.iter().map(|b| (b.0, b.2)).collect();
            poly.extend(s.band.iter().rev().map(|b| (b.0, b.1)));
            c.draw_series(std::iter::once(Polygon::new(
                poly,
                color.mix(0.18).filled(),
            )))?;
        }
        let style = ShapeStyle::from(&color).stroke_width(2);
        if s.dashed {
            c.draw_series(DashedLineSeries::new(s.points.iter().copied(), 8, 5, style))?
                .label(&s.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        } else {
            c.draw_series(LineSeries::new(s.points.iter().copied(), style))?
                .label(&s.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
            c.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}
