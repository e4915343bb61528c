//! `syncline plot`: timing figures of a recording (MCAP or event CSV), as
//! PNG and SVG, drawn with plotters: per topic the inter-arrival time and
//! the latency over time and a histogram of the stamps' jitter; for two or
//! more topics the spread of the ApproximateTime sets over time.
//!
//! Text needs a TrueType font, read at run time (no fontconfig or
//! freetype): `SYNCLINE_FONT`, else DejaVu Sans or Liberation Sans where
//! Linux distributions install them. Without one the figures are drawn
//! without text, and a warning says so.

use std::path::{Path, PathBuf};

use clap::Args;
use plotters::coord::Shift;
use plotters::prelude::*;
use syncline::Timestamp;
use syncline::core::sync::{ApproximateConfig, ApproximateTime, Output as SyncOutput, SyncPolicy};

use crate::error::CliError;
use crate::events::EventInput;

/// Arguments of `syncline plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The topics to plot, comma-separated; with two or more, the spread
    /// of their ApproximateTime sets is plotted too.
    #[arg(long, value_name = "A,B,...", value_delimiter = ',', required = true)]
    topics: Vec<String>,
    /// The folder to write the figures to (created if missing).
    #[arg(long, value_name = "DIR")]
    out: String,
    /// The recording: an MCAP file or an event CSV
    /// (`topic,stamp_ns[,arrival_ns]`; `-` for standard input).
    #[arg(value_name = "FILE")]
    file: String,
}

const FONT_PATHS: [&str; 5] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// Registers a font for plotters' text; false when none was found.
fn register_font() -> bool {
    let env = std::env::var_os("SYNCLINE_FONT").map(PathBuf::from);
    let candidates = env.into_iter().chain(FONT_PATHS.iter().map(PathBuf::from));
    for path in candidates {
        if let Ok(bytes) = std::fs::read(&path) {
            // plotters keeps fonts for the whole run.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return true;
            }
        }
    }
    false
}

/// One figure: points (or bars) with its titles.
struct Figure {
    name: String,
    title: String,
    x_desc: &'static str,
    y_desc: &'static str,
    kind: Kind,
}

enum Kind {
    Points(Vec<(f64, f64)>),
    /// `(from, to, count)` bars.
    Bars(Vec<(f64, f64, f64)>),
}

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-9);
    (lo - pad, hi + pad)
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    fig: &Figure,
    text: bool,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (xr, yr) = match &fig.kind {
        Kind::Points(p) => (range(p.iter().map(|p| p.0)), range(p.iter().map(|p| p.1))),
        Kind::Bars(b) => (
            range(b.iter().flat_map(|b| [b.0, b.1])),
            (0.0, b.iter().map(|b| b.2).fold(1.0, f64::max) * 1.05),
        ),
    };
    let mut builder = ChartBuilder::on(&root);
    builder.margin(12);
    if text {
        builder
            .caption(&fig.title, ("sans-serif", 20))
            .x_label_area_size(40)
            .y_label_area_size(70);
    }
    let mut chart = builder
        .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
        .map_err(e)?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc(fig.x_desc).y_desc(fig.y_desc);
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(e)?;
    match &fig.kind {
        Kind::Points(p) => {
            chart
                .draw_series(
                    p.iter()
                        .map(|&(x, y)| Circle::new((x, y), 1, BLUE.filled())),
                )
                .map_err(e)?;
        }
        Kind::Bars(b) => {
            chart
                .draw_series(
                    b.iter()
                        .map(|&(x0, x1, c)| Rectangle::new([(x0, 0.0), (x1, c)], BLUE.filled())),
                )
                .map_err(e)?;
        }
    }
    root.present().map_err(e)
}

fn write(dir: &Path, fig: &Figure, text: bool) -> Result<Vec<PathBuf>, CliError> {
    let png = dir.join(format!("{}.png", fig.name));
    let svg = dir.join(format!("{}.svg", fig.name));
    let fail = |path: &Path, m: String| CliError::Io {
        file: path.display().to_string(),
        source: std::io::Error::other(m),
    };
    draw(
        BitMapBackend::new(&png, (1000, 500)).into_drawing_area(),
        fig,
        text,
    )
    .map_err(|m| fail(&png, m))?;
    draw(
        SVGBackend::new(&svg, (1000, 500)).into_drawing_area(),
        fig,
        text,
    )
    .map_err(|m| fail(&svg, m))?;
    Ok(vec![png, svg])
}

/// A file-name-safe form of a topic (`/imu/data` -> `imu_data`).
fn file_name(topic: &str) -> String {
    let s: String = topic
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('_').to_string();
    if s.is_empty() { "topic".into() } else { s }
}

/// Deviations (µs) of sorted stamps from their least-squares clock line
/// after numbering them with the median interval.
fn jitter_us(stamps: &[i64]) -> Vec<f64> {
    let mut sorted = stamps.to_vec();
    sorted.sort_unstable();
    let mut dts: Vec<i64> = sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0)
        .collect();
    if dts.is_empty() {
        return Vec::new();
    }
    let mid = dts.len() / 2;
    let p = *dts.select_nth_unstable(mid).1 as f64;
    let mut k = 0.0;
    let t0 = sorted[0];
    let pts: Vec<(f64, f64)> = sorted
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            if i > 0 {
                k += ((t - sorted[i - 1]) as f64 / p).round();
            }
            (k, (t - t0) as f64)
        })
        .collect();
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { p };
    pts.iter()
        .map(|&(x, y)| (y - my - slope * (x - mx)) / 1e3)
        .collect()
}

fn histogram(values: &[f64], bins: usize) -> Vec<(f64, f64, f64)> {
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return Vec::new();
    }
    let width = ((hi - lo) / bins as f64).max(1e-6);
    let mut counts = vec![0.0; bins];
    for &v in values {
        let i = (((v - lo) / width) as usize).min(bins - 1);
        counts[i] += 1.0;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + i as f64 * width, lo + (i + 1) as f64 * width, c))
        .collect()
}

/// Runs `syncline plot`.
pub fn run(args: PlotArgs) -> Result<(), CliError> {
    let topics: Vec<&str> = args.topics.iter().map(|t| t.trim()).collect();
    if topics.iter().any(|t| t.is_empty()) {
        return Err(CliError::flag("--topics", "a topic name is empty"));
    }
    let mut input = EventInput::open(&args.file, false)?;
    // Per topic: (stamp, arrival) in recording order.
    let mut data: Vec<Vec<(i64, Option<i64>)>> = vec![Vec::new(); topics.len()];
    let mut events: Vec<(usize, i64, i64)> = Vec::new();
    while let Some(ev) = input.next(&topics, " (not in --topics)")? {
        data[ev.topic].push((ev.stamp, ev.arrival));
        events.push((ev.topic, ev.stamp, ev.arrival.unwrap_or(ev.stamp)));
    }
    for (t, d) in topics.iter().zip(&data) {
        if d.is_empty() {
            eprintln!("syncline: warning: no messages on `{t}`");
        }
    }
    let dir = PathBuf::from(&args.out);
    std::fs::create_dir_all(&dir).map_err(|source| CliError::Io {
        file: args.out.clone(),
        source,
    })?;
    let text = register_font();
    if !text {
        eprintln!(
            "syncline: warning: no TrueType font found (set SYNCLINE_FONT to a .ttf file): figures without text"
        );
    }
    let mut figures = Vec::new();
    for (topic, d) in topics.iter().zip(&data) {
        if d.len() < 2 {
            continue;
        }
        let name = file_name(topic);
        let time = |a: i64| a.saturating_sub(d[0].1.unwrap_or(d[0].0)) as f64 / 1e9;
        let arrival = |(s, a): (i64, Option<i64>)| a.unwrap_or(s);
        let inter: Vec<(f64, f64)> = d
            .windows(2)
            .map(|w| {
                let (a0, a1) = (arrival(w[0]), arrival(w[1]));
                (time(a1), a1.saturating_sub(a0) as f64 / 1e6)
            })
            .collect();
        figures.push(Figure {
            name: format!("{name}_interarrival"),
            title: format!("{topic}: time between arrivals"),
            x_desc: "arrival (s from the first)",
            y_desc: "inter-arrival (ms)",
            kind: Kind::Points(inter),
        });
        let latency: Vec<(f64, f64)> = d
            .iter()
            .filter_map(|&(s, a)| a.map(|a| (time(a), a.saturating_sub(s) as f64 / 1e6)))
            .collect();
        if latency.iter().any(|l| l.1 != 0.0) {
            figures.push(Figure {
                name: format!("{name}_latency"),
                title: format!("{topic}: latency (arrival - stamp)"),
                x_desc: "arrival (s from the first)",
                y_desc: "latency (ms)",
                kind: Kind::Points(latency),
            });
        }
        let stamps: Vec<i64> = d.iter().map(|p| p.0).collect();
        let jitter = jitter_us(&stamps);
        if !jitter.is_empty() {
            figures.push(Figure {
                name: format!("{name}_jitter"),
                title: format!("{topic}: stamp deviation from the fitted clock"),
                x_desc: "deviation (µs)",
                y_desc: "messages",
                kind: Kind::Bars(histogram(&jitter, 60)),
            });
        }
    }
    if topics.len() >= 2 {
        let mut sync = ApproximateTime::<u64>::new(ApproximateConfig::new(topics.len()))
            .map_err(|e| CliError::flag("--topics", e.to_string()))?;
        let first = events.first().map_or(0, |e| e.1);
        let mut spread = Vec::new();
        for (id, &(topic, stamp, arrival)) in events.iter().enumerate() {
            let _ = sync.push_at(
                topic,
                Timestamp::from_nanos(stamp),
                id as u64,
                Timestamp::from_nanos(arrival),
            );
            while let Some(o) = sync.poll_output() {
                if let SyncOutput::Set(set) = o {
                    let st: Vec<i64> = set
                        .members()
                        .iter()
                        .flatten()
                        .map(|m| m.stamp.as_nanos())
                        .collect();
                    if let (Some(lo), Some(hi)) = (st.iter().min(), st.iter().max()) {
                        spread.push((
                            lo.saturating_sub(first) as f64 / 1e9,
                            hi.saturating_sub(*lo) as f64 / 1e6,
                        ));
                    }
                }
            }
        }
        if !spread.is_empty() {
            figures.push(Figure {
                name: "sync_spread".into(),
                title: format!("ApproximateTime sets of {}: spread", topics.join(", ")),
                x_desc: "set stamp (s from the first message)",
                y_desc: "newest - oldest stamp in the set (ms)",
                kind: Kind::Points(spread),
            });
        }
    }
    for fig in &figures {
        for path in write(&dir, fig, text)? {
            println!("{}", path.display());
        }
    }
    Ok(())
}
