//! What a replay reports: the allocation curve at arrived = k % of capacity, the CSV
//! contract, the table at one k (median and spread over seeds) and an SVG plot of
//! unallocated % against arrived %, one line per policy with its seed spread.

// Percentages and plot coordinates: integers of up to a few million become f64 exactly
// enough (far below 2^52).
#![allow(clippy::cast_precision_loss)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::protocol::Sample;

/// The last k of a curve: arrived demand up to 130 % of capacity.
pub const MAX_PCT: usize = 130;

/// The allocation (% of capacity) at the first attempt where the arrived demand
/// reaches k % of `capacity_milli`, for k = 0..=130. A k the samples never reach takes
/// the last sample.
pub fn curve(samples: &[Sample], capacity_milli: u64) -> Vec<f64> {
    let pct = |v: u64| 100.0 * v as f64 / capacity_milli.max(1) as f64;
    let mut out = Vec::with_capacity(MAX_PCT + 1);
    let mut i = 0;
    for k in 0..=MAX_PCT {
        let need = (k as u64 * capacity_milli).div_ceil(100);
        while i < samples.len() && samples[i].arrived < need {
            i += 1;
        }
        let s = if k == 0 {
            Sample {
                arrived: 0,
                allocated: 0,
            }
        } else {
            samples
                .get(i)
                .or(samples.last())
                .copied()
                .unwrap_or(Sample {
                    arrived: 0,
                    allocated: 0,
                })
        };
        out.push(pct(s.allocated));
    }
    out
}

/// One replay's curve.
#[derive(Clone, Debug, PartialEq)]
pub struct RunCurve {
    /// The pod file's name without its directory.
    pub workload: String,
    /// The policy's name.
    pub policy: String,
    /// The seed.
    pub seed: u64,
    /// Allocated % of capacity at arrived = k %, k = 0..=130.
    pub allocated_pct: Vec<f64>,
}

/// The CSV contract: `workload,policy,seed,arrived_pct,allocated_pct`, one row per
/// (workload, policy, seed, k).
pub fn csv(runs: &[RunCurve]) -> String {
    let mut out = String::from("workload,policy,seed,arrived_pct,allocated_pct\n");
    for r in runs {
        for (k, a) in r.allocated_pct.iter().enumerate() {
            let _ = writeln!(out, "{},{},{},{k},{a:.4}", r.workload, r.policy, r.seed);
        }
    }
    out
}

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        f64::midpoint(v[n / 2 - 1], v[n / 2])
    }
}

/// Unallocated % at arrived = `k` %, per (workload, policy): median, min and max over
/// the seeds.
pub fn at(runs: &[RunCurve], k: usize) -> BTreeMap<(String, String), (f64, f64, f64)> {
    let mut by: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for r in runs {
        if let Some(a) = r.allocated_pct.get(k) {
            by.entry((r.workload.clone(), r.policy.clone()))
                .or_default()
                .push(100.0 - a);
        }
    }
    by.into_iter()
        .map(|(key, mut v)| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (key, (median(&mut v), lo, hi))
        })
        .collect()
}

/// The table at arrived = `k` %: one row per workload, one column per policy, each
/// cell `median (min–max)` of the unallocated %.
pub fn table(runs: &[RunCurve], k: usize) -> String {
    let cells = at(runs, k);
    let mut policies: Vec<&str> = Vec::new();
    for r in runs {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    let mut workloads: Vec<&str> = Vec::new();
    for r in runs {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let mut out = format!("unallocated GPU % at {k} % arrived (median over seeds, min–max)\n");
    let _ = write!(out, "{:<32}", "workload");
    for p in &policies {
        let _ = write!(out, "  {p:>22}");
    }
    out.push('\n');
    for w in &workloads {
        let _ = write!(out, "{w:<32}");
        for p in &policies {
            match cells.get(&((*w).to_owned(), (*p).to_owned())) {
                Some((m, lo, hi)) => {
                    let cell = format!("{m:.2} ({lo:.2}–{hi:.2})");
                    let _ = write!(out, "  {cell:>22}");
                }
                None => {
                    let _ = write!(out, "  {:>22}", "-");
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The plots' line colours, one per policy in order.
pub const COLOURS: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7D5BA6", "#8C6D31",
];

/// A percentage plot's frame (y from 0 to 100 %, x from 0 to `x_max`): its size and
/// margins, the grid, the axis labels and the legend.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub(crate) width: f64,
    pub(crate) height: f64,
    pub(crate) left: f64,
    pub(crate) right: f64,
    pub(crate) top: f64,
    pub(crate) bottom: f64,
    pub(crate) x_max: f64,
}

impl Frame {
    fn plot_width(&self) -> f64 {
        self.width - self.left - self.right
    }

    fn plot_height(&self) -> f64 {
        self.height - self.top - self.bottom
    }

    /// The horizontal position of `v` (0 to `x_max`).
    pub(crate) fn x(&self, v: f64) -> f64 {
        self.left + self.plot_width() * v / self.x_max.max(1e-9)
    }

    /// The vertical position of `pct` (0 to 100).
    pub(crate) fn y(&self, pct: f64) -> f64 {
        self.top + self.plot_height() * (1.0 - pct / 100.0)
    }

    /// Opens the SVG: white background, `title` (the tooltip) and `heading`, the grid
    /// (y every 20 %, x at `x_ticks`) and the axis labels.
    pub(crate) fn open(
        &self,
        title: &str,
        heading: &str,
        x_ticks: impl Iterator<Item = usize>,
        x_label: &str,
        y_label: Option<&str>,
    ) -> String {
        let Frame {
            width,
            height,
            left,
            top,
            ..
        } = *self;
        let (pw, ph) = (self.plot_width(), self.plot_height());
        let mut out = String::new();
        let _ = writeln!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12"><title>{title}</title><rect width="{width}" height="{height}" fill="#fff"/>"##
        );
        let _ = writeln!(
            out,
            r#"<text x="{left}" y="24" font-size="14" font-weight="bold">{heading}</text>"#
        );
        for t in (0..=100).step_by(20) {
            let yy = self.y(f64::from(t));
            let _ = writeln!(
                out,
                r##"<line x1="{left}" x2="{}" y1="{yy}" y2="{yy}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{t}</text>"##,
                left + pw,
                left - 6.0,
                yy + 4.0
            );
        }
        for t in x_ticks {
            let xx = self.x(t as f64);
            let _ = writeln!(
                out,
                r##"<line x1="{xx}" x2="{xx}" y1="{top}" y2="{}" stroke="#eee"/><text x="{xx}" y="{}" text-anchor="middle">{t}</text>"##,
                top + ph,
                top + ph + 16.0
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{x_label}</text>"#,
            left + pw / 2.0,
            height - 10.0
        );
        if let Some(label) = y_label {
            let _ = writeln!(
                out,
                r#"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{label}</text>"#,
                top + ph / 2.0
            );
        }
        out
    }

    /// Legend entry `i` (from the top, right of the plot): a `colour` swatch and `text`.
    pub(crate) fn legend(&self, out: &mut String, i: usize, colour: &str, text: &str) {
        let x0 = self.left + self.plot_width();
        let ly = self.top + 16.0 + 20.0 * i as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{text}</text>"#,
            x0 + 12.0,
            x0 + 32.0,
            x0 + 38.0,
            ly + 4.0
        );
    }
}

/// An SVG plot for one workload: unallocated % (y) against arrived % (x, 0–130), the
/// median line of each policy and the band between its seeds' min and max.
pub fn svg(runs: &[RunCurve], workload: &str) -> String {
    let frame = Frame {
        width: 860.0,
        height: 460.0,
        left: 60.0,
        right: 290.0,
        top: 40.0,
        bottom: 50.0,
        x_max: MAX_PCT as f64,
    };
    let x = |k: f64| frame.x(k);
    let y = |u: f64| frame.y(u);
    let mut out = frame.open(
        &format!("Unallocated GPU % against arrived workload %: {workload}"),
        &format!("{workload}: unallocated GPU % vs arrived %"),
        (0..=MAX_PCT).step_by(10),
        "arrived workload (% of GPU capacity)",
        Some("unallocated GPU %"),
    );
    let mut policies: Vec<&str> = Vec::new();
    for r in runs.iter().filter(|r| r.workload == workload) {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    for (i, p) in policies.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let curves: Vec<&RunCurve> = runs
            .iter()
            .filter(|r| r.workload == workload && r.policy == *p)
            .collect();
        let mut med = Vec::new();
        let mut lo = Vec::new();
        let mut hi = Vec::new();
        for k in 0..=MAX_PCT {
            let mut v: Vec<f64> = curves
                .iter()
                .filter_map(|c| c.allocated_pct.get(k))
                .map(|a| 100.0 - a)
                .collect();
            if v.is_empty() {
                continue;
            }
            lo.push((k, v.iter().copied().fold(f64::INFINITY, f64::min)));
            hi.push((k, v.iter().copied().fold(f64::NEG_INFINITY, f64::max)));
            med.push((k, median(&mut v)));
        }
        let band: Vec<String> = hi
            .iter()
            .chain(lo.iter().rev())
            .map(|&(k, u)| format!("{:.1},{:.1}", x(k as f64), y(u)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polygon points="{}" fill="{colour}" fill-opacity="0.18" stroke="none"/>"#,
            band.join(" ")
        );
        let line: Vec<String> = med
            .iter()
            .map(|&(k, u)| format!("{:.1},{:.1}", x(k as f64), y(u)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            line.join(" ")
        );
        let at100 = med
            .iter()
            .find(|(k, _)| *k == 100)
            .map_or(String::new(), |(_, u)| format!(" ({u:.2} %)"));
        frame.legend(&mut out, i, colour, &format!("{p}{at100}"));
    }
    out.push_str("</svg>\n");
    out
}
