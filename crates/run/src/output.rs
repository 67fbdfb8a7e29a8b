//! A run's figures as files: each plot as a standalone SVG and, with a font for
//! its text, a PNG.

use std::path::Path;

use netsonde_report::raster::{RasterError, Rasterizer};
use netsonde_report::view::PlotSpec;

/// Why figures could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A file could not be written.
    #[error("writing {path}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A figure could not be drawn as PNG.
    #[error(transparent)]
    Raster(#[from] RasterError),
}

/// What [`write_figures`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Whether the PNGs were written.
    pub png: bool,
    /// Why there are figures as SVG only (no font for the PNGs' text).
    pub svg_only: Option<String>,
}

/// Writes `body` to `path`.
pub fn write(path: &Path, body: impl AsRef<[u8]>) -> Result<(), OutputError> {
    std::fs::write(path, body).map_err(|source| OutputError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Writes each figure as a standalone `ID.svg` and `ID.png` into `dir`; without
/// a font for the PNGs' text, the SVGs only, and why.
pub fn write_figures(dir: &Path, plots: &[PlotSpec]) -> Result<Written, OutputError> {
    let (raster, svg_only) = match Rasterizer::with_system_fonts() {
        Ok(r) => (Some(r), None),
        Err(e) if !plots.is_empty() => (None, Some(e.to_string())),
        Err(_) => (None, None),
    };
    for p in plots {
        let svg = netsonde_report::plot::svg(p);
        write(&dir.join(format!("{}.svg", p.id)), &svg)?;
        if let Some(r) = &raster {
            write(&dir.join(format!("{}.png", p.id)), r.png(&svg, 1.5)?)?;
        }
    }
    Ok(Written {
        png: raster.is_some(),
        svg_only,
    })
}
