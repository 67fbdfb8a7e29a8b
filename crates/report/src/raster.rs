//! A figure's SVG as PNG (resvg), for places that do not show SVG. Text is set in
//! the system's sans-serif font; the one I/O here is reading the system's fonts,
//! once per [`Rasterizer`].

/// Why a figure could not be rasterized.
#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    /// The SVG did not parse.
    #[error("the figure is not valid SVG: {0}")]
    Svg(String),
    /// The system has no font to set the figure's text in.
    #[error("no sans-serif font on this system (install fonts-dejavu or fonts-liberation): a PNG would have no text")]
    NoFont,
    /// The figure has no size or could not be encoded.
    #[error("the figure could not be encoded as PNG: {0}")]
    Encode(String),
}

/// Turns SVG figures into PNG with the system's fonts.
pub struct Rasterizer {
    options: resvg::usvg::Options<'static>,
}

impl std::fmt::Debug for Rasterizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rasterizer")
            .field("fonts", &self.options.fontdb.len())
            .finish()
    }
}

impl Rasterizer {
    /// Loads the system's fonts; fails when none can set sans-serif text.
    pub fn with_system_fonts() -> Result<Rasterizer, RasterError> {
        let mut options = resvg::usvg::Options::default();
        let db = options.fontdb_mut();
        db.load_system_fonts();
        let family = [
            "DejaVu Sans",
            "Liberation Sans",
            "Noto Sans",
            "FreeSans",
            "Arial",
        ]
        .into_iter()
        .find(|f| {
            db.faces()
                .any(|face| face.families.iter().any(|(n, _)| n == f))
        })
        .ok_or(RasterError::NoFont)?;
        db.set_sans_serif_family(family);
        Ok(Rasterizer { options })
    }

    /// The figure as PNG bytes, at `scale` times its SVG size.
    pub fn png(&self, svg: &str, scale: f32) -> Result<Vec<u8>, RasterError> {
        let tree = resvg::usvg::Tree::from_str(svg, &self.options)
            .map_err(|e| RasterError::Svg(e.to_string()))?;
        let size = tree
            .size()
            .to_int_size()
            .scale_by(scale)
            .ok_or_else(|| RasterError::Encode("zero size".into()))?;
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
            .ok_or_else(|| RasterError::Encode("zero size".into()))?;
        pixmap.fill(resvg::tiny_skia::Color::WHITE);
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| RasterError::Encode(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_becomes_a_png_with_its_text_drawn() {
        let Ok(r) = Rasterizer::with_system_fonts() else {
            eprintln!("SKIPPED raster: no sans-serif font on this system");
            return;
        };
        let blank = r
            .png(
                r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="50"></svg>"#,
                1.0,
            )
            .unwrap();
        let text = r
            .png(
                r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="50"><text x="10" y="30" font-family="sans-serif" font-size="20">64 K</text></svg>"#,
                1.0,
            )
            .unwrap();
        assert!(text.starts_with(b"\x89PNG"));
        // Drawn glyphs compress worse than a blank page.
        assert!(
            text.len() > blank.len() + 100,
            "{} vs {}",
            text.len(),
            blank.len()
        );
        assert!(matches!(r.png("<svg", 1.0), Err(RasterError::Svg(_))));
    }
}
