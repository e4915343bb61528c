//! Speed of the CLI's CSV reader on generated 1,000,000-row inputs of the
//! three shapes the subcommands read: estimator events
//! (`event,time_ns,index`), messages with arrivals
//! (`topic,stamp_ns,arrival_ns`: `analyze`, `sync --policy latest`, `align
//! --wall-timeout`) and messages (`topic,stamp_ns`: `sync`,
//! `align`). Every row's cells are read as the subcommands read them.
//!
//! Each shape is read twice: by the CLI's reader (`events`, `arrivals`,
//! `messages`: `csv-core` driven into fixed buffers, with the record-length
//! limit and the physical line of each row) and by the `csv` crate's own
//! reader (`csv_crate_*`: `ByteRecord` reading into one reused record, cells
//! trimmed and parsed the same way), which checks that the CLI's wrapper
//! around the parser costs nothing.
//!
//! `cargo bench -p syncline-cli --bench csv_input`, or with the project's
//! one release build: `cargo test --release -p syncline-cli --bench
//! csv_input --no-run`, then run the printed executable with `--bench`.

use std::hint::black_box;
use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::BytesCount;

// The reader is a module of the `syncline` binary: compiled in here as is.
#[allow(dead_code)]
#[path = "../src/error.rs"]
mod error;
#[allow(dead_code)]
#[path = "../src/input.rs"]
mod input;

use input::{CsvInput, parse_i64};

const ROWS: u64 = 1_000_000;
const T0: i64 = 1_700_000_000_000_000_000;

fn main() {
    divan::main();
}

/// A deterministic xorshift stream of jitters in `0..1_000_000` ns.
fn jitters() -> impl FnMut() -> i64 {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 1_000_000) as i64
    }
}

static EVENTS: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let mut j = jitters();
    let mut s = String::from("event,time_ns,index\n");
    for k in 0..ROWS as i64 {
        let t = T0 + k * 10_000_000 + j();
        s.push_str(&format!("sample,{t},{k}\n"));
    }
    s.into_bytes()
});

static ARRIVALS: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let mut j = jitters();
    let mut s = String::from("topic,stamp_ns,arrival_ns\n");
    for k in 0..ROWS as i64 {
        let stamp = T0 + k * 5_000_000;
        let topic = ["/imu", "/camera/left", "/lidar"][k as usize % 3];
        s.push_str(&format!("{topic},{stamp},{}\n", stamp + 1_000_000 + j()));
    }
    s.into_bytes()
});

static MESSAGES: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let mut j = jitters();
    let mut s = String::from("topic,stamp_ns\n");
    for k in 0..ROWS as i64 {
        let topic = ["t0", "t1", "t2"][k as usize % 3];
        s.push_str(&format!("{topic},{}\n", T0 + k * 5_000_000 + j()));
    }
    s.into_bytes()
});

/// Reads every row of `text`, parsing the integer columns `ints` and
/// looking at the text column `label`, as the subcommands do; returns a
/// checksum.
fn read_all(text: &'static [u8], label: &str, ints: &[&str]) -> i64 {
    let mut csv = CsvInput::from_reader("bench.csv", Box::new(text)).expect("header");
    let label = csv.require(label).expect("label column");
    let cols: Vec<usize> = ints
        .iter()
        .map(|c| csv.require(c).expect("column"))
        .collect();
    let mut sum = 0i64;
    while let Some(pos) = csv.next_row().expect("row") {
        sum = sum.wrapping_add(csv.cell(label).map_or(0, |c| c.len() as i64));
        for &c in &cols {
            sum = sum.wrapping_add(csv.required_i64(c, pos).expect("integer"));
        }
    }
    sum
}

fn bench(bencher: Bencher, text: &'static LazyLock<Vec<u8>>, label: &str, ints: &[&str]) {
    let text: &'static [u8] = text.as_slice();
    bencher
        .counter(BytesCount::new(text.len()))
        .bench(|| black_box(read_all(black_box(text), label, ints)));
}

/// `event,time_ns,index` (syncline estimate).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn events(bencher: Bencher) {
    bench(bencher, &EVENTS, "event", &["time_ns", "index"]);
}

/// `topic,stamp_ns,arrival_ns` (messages with their arrival).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn arrivals(bencher: Bencher) {
    bench(bencher, &ARRIVALS, "topic", &["stamp_ns", "arrival_ns"]);
}

/// `topic,stamp_ns` (syncline sync and align).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn messages(bencher: Bencher) {
    bench(bencher, &MESSAGES, "topic", &["stamp_ns"]);
}

/// The same reading with the `csv` crate alone: header by name, comments,
/// rows of any length, cells trimmed of spaces and parsed as the CLI does.
fn read_all_csv_crate(text: &'static [u8], label: &str, ints: &[&str]) -> i64 {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .comment(Some(b'#'))
        .from_reader(text);
    let header = reader.byte_headers().expect("header").clone();
    let find = |name: &str| {
        header
            .iter()
            .position(|h| h.trim_ascii() == name.as_bytes())
            .expect("column")
    };
    let label = find(label);
    let cols: Vec<usize> = ints.iter().map(|c| find(c)).collect();
    let mut record = csv::ByteRecord::new();
    let mut sum = 0i64;
    while reader.read_byte_record(&mut record).expect("row") {
        sum = sum.wrapping_add(record.get(label).map_or(0, |c| c.trim_ascii().len() as i64));
        for &c in &cols {
            let cell = record.get(c).map(<[u8]>::trim_ascii).expect("cell");
            sum = sum.wrapping_add(parse_i64(cell).expect("integer"));
        }
    }
    sum
}

fn bench_csv_crate(bencher: Bencher, text: &'static LazyLock<Vec<u8>>, label: &str, ints: &[&str]) {
    let text: &'static [u8] = text.as_slice();
    assert_eq!(
        read_all_csv_crate(text, label, ints),
        read_all(text, label, ints),
        "the two readers must read the same values"
    );
    bencher
        .counter(BytesCount::new(text.len()))
        .bench(|| black_box(read_all_csv_crate(black_box(text), label, ints)));
}

/// `event,time_ns,index` with the `csv` crate.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn csv_crate_events(bencher: Bencher) {
    bench_csv_crate(bencher, &EVENTS, "event", &["time_ns", "index"]);
}

/// `topic,stamp_ns,arrival_ns` with the `csv` crate.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn csv_crate_arrivals(bencher: Bencher) {
    bench_csv_crate(bencher, &ARRIVALS, "topic", &["stamp_ns", "arrival_ns"]);
}

/// `topic,stamp_ns` with the `csv` crate.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn csv_crate_messages(bencher: Bencher) {
    bench_csv_crate(bencher, &MESSAGES, "topic", &["stamp_ns"]);
}
