//! A small SVG line chart: axes with round ticks, one polyline and markers
//! per series, a legend. Self-contained markup for the HTML report.

use std::fmt::Write;

const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 340.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 130.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 50.0;

/// One line of the chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub points: Vec<(f64, f64)>,
}

/// A chart with labelled axes.
#[derive(Debug, Clone)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
}

impl Chart {
    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let all = self.series.iter().flat_map(|s| s.points.iter());
        let (x_max, y_max) = all.fold((0.0f64, 0.0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
        let x_ticks = ticks(x_max);
        let y_ticks = ticks(y_max);
        let x_top = *x_ticks.last().expect("ticks");
        let y_top = *y_ticks.last().expect("ticks");
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let sx = |x: f64| LEFT + x / x_top * plot_w;
        let sy = |y: f64| TOP + plot_h - y / y_top * plot_h;
        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg id="{}" class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#,
            escape(&self.id)
        );
        let _ = write!(
            svg,
            r#"<text x="{}" y="20" font-size="15" font-weight="bold">{}</text>"#,
            LEFT,
            escape(&self.title)
        );
        for &t in &x_ticks {
            let x = sx(t);
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + plot_h,
                TOP + plot_h + 16.0,
                label(t)
            );
        }
        for &t in &y_ticks {
            let y = sy(t);
            let _ = write!(
                svg,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + plot_w,
                LEFT - 6.0,
                y + 4.0,
                label(t)
            );
        }
        let _ = write!(
            svg,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"##,
            LEFT + plot_w / 2.0,
            HEIGHT - 10.0,
            escape(&self.x_label),
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        for (i, s) in self.series.iter().enumerate() {
            let points: Vec<String> = s
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                .collect();
            let _ = write!(
                svg,
                r#"<polyline class="series" data-name="{}" points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
                escape(&s.name),
                points.join(" "),
                s.color
            );
            for &(x, y) in &s.points {
                let _ = write!(
                    svg,
                    r#"<circle class="point" cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                    sx(x),
                    sy(y),
                    s.color
                );
            }
            let ly = TOP + 10.0 + i as f64 * 18.0;
            let lx = LEFT + plot_w + 12.0;
            let _ = write!(
                svg,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
                lx + 18.0,
                s.color,
                lx + 24.0,
                ly + 4.0,
                escape(&s.name)
            );
        }
        svg.push_str("</svg>");
        svg
    }
}

/// Round tick values from 0 to at least `max` (1-2-5 steps, 4 to 10 ticks).
fn ticks(max: f64) -> Vec<f64> {
    let max = if max > 0.0 { max } else { 1.0 };
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let count = (max / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

/// A tick label: integers plain, large numbers with k/M.
fn label(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Text made safe for HTML and SVG.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(9.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(1234.0), [0.0, 500.0, 1000.0, 1500.0]);
        let unit = ticks(0.0);
        assert_eq!((unit.len(), unit[5]), (6, 1.0));
        assert_eq!(label(25_000.0), "25k");
        assert_eq!(label(1_500_000.0), "1.5M");
        assert_eq!(label(0.5), "0.5");
    }

    #[test]
    fn chart_has_one_line_and_marker_per_point() {
        let chart = Chart {
            id: "c".into(),
            title: "<t>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                name: "a".into(),
                color: "red",
                points: vec![(1.0, 2.0), (2.0, 4.0)],
            }],
        };
        let svg = chart.render();
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches(r#"class="point""#).count(), 2);
        assert!(svg.contains("&lt;t&gt;") && svg.ends_with("</svg>"));
    }
}
