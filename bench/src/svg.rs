//! Line charts in plain SVG, written by hand: one line per contestant.

use std::fmt::Write as _;

/// One line of a chart.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points (x, y), any order.
    pub points: Vec<(f64, f64)>,
}

const COLORS: [&str; 18] = [
    "#000000", "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
    "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#e7969c", "#843c39", "#6b6ecf",
    "#b5cf6b", "#fdae6b",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn nice_step(range: f64) -> f64 {
    let raw = range / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    mag * if n < 1.5 {
        1.0
    } else if n < 3.0 {
        2.0
    } else if n < 7.0 {
        5.0
    } else {
        10.0
    }
}

fn short(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{}k", v / 1e3)
    } else {
        format!("{v}")
    }
}

/// Draws the chart. `log_x` spaces x logarithmically; `xs` are the tick positions.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    xs: &[f64],
    log_x: bool,
    series: &[Series],
) -> String {
    let (w, h) = (820.0, 480.0);
    let (left, right, top, bottom) = (80.0, 200.0, 40.0, 60.0);
    let pw = w - left - right;
    let ph = h - top - bottom;
    let fx = |x: f64| if log_x { x.max(1e-9).ln() } else { x };
    let (x0, x1) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(fx(x)), b.max(fx(x)))
        });
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 1.0, x0 + 1.0)
    };
    let ymax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let step = nice_step(if ymax > 0.0 { ymax * 1.05 } else { 1.0 });
    let ytop = (ymax * 1.05 / step).ceil().max(1.0) * step;
    let px = |x: f64| left + (fx(x) - x0) / (x1 - x0) * pw;
    let py = |y: f64| top + ph - y / ytop * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        left + pw / 2.0,
        esc(title)
    );
    // Grid and y ticks.
    let mut y = 0.0;
    while y <= ytop + step / 2.0 {
        let yy = py(y);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + pw,
            left - 6.0,
            yy + 4.0,
            short(y)
        );
        y += step;
    }
    for &x in xs {
        let xx = px(x);
        let _ = writeln!(
            s,
            r##"<line x1="{xx:.1}" y1="{top}" x2="{xx:.1}" y2="{:.1}" stroke="#eee"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            top + ph,
            top + ph + 18.0,
            short(x)
        );
    }
    let _ = writeln!(
        s,
        r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        h - 18.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
        top + ph / 2.0,
        top + ph / 2.0,
        esc(y_label)
    );
    for (i, se) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut pts = se.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let dash = if i >= COLORS.len() {
            r#" stroke-dasharray="5,3""#
        } else {
            ""
        };
        let width = if se.name == "mcpool" { 3 } else { 2 };
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="{width}"{dash}/>"#,
            path.join(" ")
        );
        for (x, y) in &pts {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                px(*x),
                py(*y)
            );
        }
        let ly = top + 10.0 + i as f64 * 20.0;
        let lx = left + pw + 15.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="{width}"{dash}/><text x="{}" y="{}">{}</text>"#,
            lx + 24.0,
            lx + 30.0,
            ly + 4.0,
            esc(&se.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws() {
        let s = line_chart(
            "t <1>",
            "threads",
            "ops/s",
            &[1.0, 10.0, 300.0],
            false,
            &[Series {
                name: "mcpool".into(),
                points: vec![(1.0, 10.0), (10.0, 20.0), (300.0, 15.0)],
            }],
        );
        assert!(s.starts_with("<svg") && s.ends_with("</svg>\n"));
        assert!(s.contains("t &lt;1&gt;"));
        assert!(s.contains("<polyline"));
    }
}
