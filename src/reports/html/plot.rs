//! The report page's progress plot: targets covered and faults found over the
//! requests sent, as an inline SVG with round ticks.

use std::fmt::Write;

use crate::reports::{Report, escape_text};

/// Tick step and axis top for 0..=max with about `n` ticks: 1, 2 or 5 times a
/// power of ten (at least 1 when the axis counts whole things).
fn ticks(max: f64, n: usize, whole: bool) -> (f64, f64) {
    let max = if max > 0.0 { max } else { 1.0 };
    let raw = max / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let mut step = mag
        * if norm <= 1.0 {
            1.0
        } else if norm <= 2.0 {
            2.0
        } else if norm <= 5.0 {
            5.0
        } else {
            10.0
        };
    if whole {
        step = step.max(1.0);
    }
    (step, (max / step).ceil() * step)
}

/// The ticks 0, step, 2·step, … up to `top`, counted rather than summed so
/// rounding never drops the last one.
fn tick_values(step: f64, top: f64) -> impl Iterator<Item = f64> {
    let n = (top / step).round() as u64;
    (0..=n).map(move |i| i as f64 * step)
}

/// The number on a tick: whole numbers as such, thousands as `12k`.
fn tick_label(v: f64) -> String {
    if v >= 10_000.0 && (v / 1000.0).fract() == 0.0 {
        format!("{}k", v / 1000.0)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// A step line's points: from (0, 0), one unit up at each event's x.
fn step_points(xs: &[f64], x_end: f64, sx: &dyn Fn(f64) -> f64, sy: &dyn Fn(f64) -> f64) -> String {
    let mut pts = vec![(sx(0.0), sy(0.0))];
    let mut n = 0.0;
    let mut i = 0;
    while i < xs.len() {
        let x = xs[i];
        let mut j = i;
        while j < xs.len() && xs[j] == x {
            j += 1;
        }
        pts.push((sx(x), sy(n)));
        n += (j - i) as f64;
        pts.push((sx(x), sy(n)));
        i = j;
    }
    pts.push((sx(x_end), sy(n)));
    pts.iter()
        .map(|(x, y)| format!("{x:.1},{y:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The progress plot: targets covered (left axis) and faults found (right
/// axis) over requests sent, as step lines. Two axes because there are
/// typically a hundred times more targets than faults; on one axis the fault
/// line would lie flat on the floor.
pub(super) fn plot(report: &Report) -> String {
    // `seq` counts from 0, so the request at seq s is the (s + 1)th sent.
    let mut covered: Vec<f64> = report
        .search
        .as_ref()
        .map(|s| {
            s.covered_at
                .iter()
                .map(|(_, seq)| *seq as f64 + 1.0)
                .collect()
        })
        .unwrap_or_default();
    covered.sort_by(f64::total_cmp);
    let mut found: Vec<f64> = report
        .faults
        .iter()
        .map(|f| f.first_seq as f64 + 1.0)
        .collect();
    found.sort_by(f64::total_cmp);
    let x_last = covered
        .last()
        .copied()
        .unwrap_or(0.0)
        .max(found.last().copied().unwrap_or(0.0))
        .max(report.requests as f64);
    if x_last <= 0.0 {
        return "<p class=\"note\">No request was sent: nothing to plot.</p>".to_string();
    }

    let (w, h) = (960.0, 340.0);
    let (left, right, top, bottom) = (70.0, 70.0, 44.0, 56.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let (x_step, x_top) = ticks(x_last, 8, true);
    // Some headroom, so a line at its maximum does not run along the frame.
    let (yl_step, yl_top) = ticks(covered.len() as f64 * 1.05, 5, true);
    let (yr_step, yr_top) = ticks(found.len() as f64 * 1.05, 5, true);
    let sx = |x: f64| left + x / x_top * pw;
    let syl = |y: f64| top + ph - y / yl_top * ph;
    let syr = |y: f64| top + ph - y / yr_top * ph;
    let (c_targets, c_faults, grid, axis, muted) =
        ("#0969da", "#cf222e", "#eaeef2", "#57606a", "#59636e");

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"Targets covered and faults found over requests\" font-family=\"system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif\" font-size=\"12\">"
    );
    // Grid and x ticks.
    for x in tick_values(x_step, x_top) {
        let px = sx(x);
        let _ = write!(
            svg,
            "<line x1=\"{px:.1}\" y1=\"{top}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"{grid}\"/>\n<line x1=\"{px:.1}\" y1=\"{:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"{axis}\"/>\n<text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{muted}\">{}</text>\n",
            top + ph,
            top + ph,
            top + ph + 5.0,
            top + ph + 19.0,
            tick_label(x)
        );
    }
    // Left ticks (targets) with horizontal grid lines.
    for y in tick_values(yl_step, yl_top) {
        let py = syl(y);
        let _ = write!(
            svg,
            "<line x1=\"{left}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"{grid}\"/>\n<line x1=\"{:.1}\" y1=\"{py:.1}\" x2=\"{left}\" y2=\"{py:.1}\" stroke=\"{axis}\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{c_targets}\">{}</text>\n",
            left + pw,
            left - 5.0,
            left - 8.0,
            py + 4.0,
            tick_label(y)
        );
    }
    // Right ticks (faults).
    for y in tick_values(yr_step, yr_top) {
        let py = syr(y);
        let _ = write!(
            svg,
            "<line x1=\"{:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"{axis}\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{c_faults}\">{}</text>\n",
            left + pw,
            left + pw + 5.0,
            left + pw + 8.0,
            py + 4.0,
            tick_label(y)
        );
    }
    // Axes and their labels.
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{:.1}\" stroke=\"{axis}\"/>\n<line x1=\"{:.1}\" y1=\"{top}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{axis}\"/>\n<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{axis}\"/>\n",
        top + ph,
        left + pw,
        left + pw,
        top + ph,
        top + ph,
        left + pw,
        top + ph
    );
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{axis}\" font-size=\"13\">requests sent</text>\n<text transform=\"translate(18 {:.1}) rotate(-90)\" text-anchor=\"middle\" fill=\"{c_targets}\" font-size=\"13\">targets covered</text>\n<text transform=\"translate({:.1} {:.1}) rotate(90)\" text-anchor=\"middle\" fill=\"{c_faults}\" font-size=\"13\">faults found</text>\n",
        left + pw / 2.0,
        h - 12.0,
        top + ph / 2.0,
        w - 16.0,
        top + ph / 2.0
    );
    // The lines: faults drawn last so they stay visible where they cross.
    let _ = writeln!(
        svg,
        "<polyline class=\"targets\" fill=\"none\" stroke=\"{c_targets}\" stroke-width=\"2.2\" stroke-linejoin=\"round\" points=\"{}\"/>",
        step_points(&covered, x_last, &sx, &syl)
    );
    let _ = writeln!(
        svg,
        "<polyline class=\"faults\" fill=\"none\" stroke=\"{c_faults}\" stroke-width=\"2.2\" stroke-dasharray=\"6 3\" stroke-linejoin=\"round\" points=\"{}\"/>",
        step_points(&found, x_last, &sx, &syr)
    );
    // Legend above the plot, where no line can cross it.
    let targets_label = if report.search.is_some() {
        format!("targets covered ({})", covered.len())
    } else {
        "targets covered (not recorded)".to_string()
    };
    let ly = 18.0;
    let fx = left + 250.0;
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{ly}\" x2=\"{:.1}\" y2=\"{ly}\" stroke=\"{c_targets}\" stroke-width=\"2.2\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#1f2328\" font-size=\"13\">{}</text>\n<line x1=\"{fx}\" y1=\"{ly}\" x2=\"{:.1}\" y2=\"{ly}\" stroke=\"{c_faults}\" stroke-width=\"2.2\" stroke-dasharray=\"6 3\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#1f2328\" font-size=\"13\">faults found ({})</text>\n",
        left + 26.0,
        left + 34.0,
        ly + 4.5,
        escape_text(&targets_label),
        fx + 26.0,
        fx + 34.0,
        ly + 4.5,
        found.len()
    );
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(1500.0, 8, true), (200.0, 1600.0));
        assert_eq!(ticks(3.0, 5, true), (1.0, 3.0));
        assert_eq!(ticks(0.0, 5, true), (1.0, 1.0));
        assert_eq!(ticks(97.0, 5, true), (20.0, 100.0));
    }

    #[test]
    fn steps_rise_once_per_event_and_merge_ties() {
        let id = |v: f64| v;
        assert_eq!(
            step_points(&[2.0, 2.0, 5.0], 10.0, &id, &id),
            "0.0,0.0 2.0,0.0 2.0,2.0 5.0,2.0 5.0,3.0 10.0,3.0"
        );
    }
}
