//! Shared by the multi-process tests: `syncline coordinator` and
//! `syncline participant` processes whose JSON lines are read as they come.
#![allow(dead_code)] // each test file uses its own subset

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// A free TCP port on loopback (bound, then released for the test's use).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A zenoh TCP endpoint.
pub fn endpoint(host: &str, port: u16) -> String {
    format!("tcp/{host}:{port}")
}

/// A key prefix no other test run uses.
pub fn unique_prefix() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test/{}/{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A small xorshift generator, seeded from the clock (the seed is printed
/// so a failing case can be replayed with `SYNCLINE_TEST_SEED`).
pub struct Rng(u64);

impl Rng {
    pub fn seeded() -> Self {
        let seed = std::env::var("SYNCLINE_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
                    | 1
            });
        eprintln!("SYNCLINE_TEST_SEED={seed}");
        Rng(seed)
    }

    /// Uniform-ish in `lo..hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + (self.0 % (hi - lo) as u64) as i64
    }
}

/// The `n`-th (1-based) distinct time of the union of the grids
/// `(name, period, offset)` from their offsets: the time of step `n`.
pub fn grid_union_nth(grids: &[(String, i64, i64)], n: usize) -> i64 {
    let mut next: Vec<i64> = grids.iter().map(|g| g.2).collect();
    let mut t = i64::MIN;
    for _ in 0..n {
        t = *next.iter().min().expect("grids");
        for (i, g) in grids.iter().enumerate() {
            if next[i] == t {
                next[i] += g.1;
            }
        }
    }
    t
}

/// Simulated time: `ts` is the participant's grid from its offset, every
/// point once, in order.
pub fn check_grid_prefix(name: &str, ts: &[i64], period: i64, offset: i64) {
    for (k, &t) in ts.iter().enumerate() {
        assert_eq!(t, offset + k as i64 * period, "{name}: callback {k} at {t}");
    }
}

/// Real time: every `t` on the grid, strictly increasing (late wake-ups
/// may skip points, never repeat one).
pub fn check_on_grid(name: &str, ts: &[i64], period: i64, offset: i64) {
    for w in ts.windows(2) {
        assert!(w[0] < w[1], "{name}: {} then {}", w[0], w[1]);
    }
    for &t in ts {
        assert_eq!(
            (t - offset).rem_euclid(period),
            0,
            "{name}: {t} off the grid"
        );
    }
}

#[derive(Default)]
struct Lines {
    lines: Vec<(Instant, Value)>,
    closed: bool,
}

/// A running `syncline` process whose standard output is read line by line.
pub struct Proc {
    child: Child,
    lines: Arc<(Mutex<Lines>, Condvar)>,
    reader: Option<JoinHandle<()>>,
    stderr: Option<JoinHandle<String>>,
}

/// A finished process.
pub struct Finished {
    /// Exit status (`None`: killed by a signal or by the test's deadline).
    pub status: Option<i32>,
    pub lines: Vec<Value>,
    pub stderr: String,
}

impl Finished {
    /// Every line that is an event or a summary.
    pub fn events(&self) -> Vec<Value> {
        self.lines.clone()
    }

    /// The `t_ns` of every line of participant `name`.
    pub fn times(&self, name: &str) -> Vec<i64> {
        self.lines
            .iter()
            .filter(|l| l["name"] == name)
            .filter_map(|l| l["t_ns"].as_i64())
            .collect()
    }
}

/// The binary under test (or `SYNCLINE_BIN`, for running it inside a
/// network namespace through a wrapper).
pub fn bin() -> String {
    env!("CARGO_BIN_EXE_syncline").to_string()
}

impl Proc {
    /// Runs `prefix_cmd... syncline args...`.
    pub fn spawn(wrapper: &[&str], args: &[String]) -> Proc {
        let mut cmd = match wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(bin());
                c
            }
            None => Command::new(bin()),
        };
        let mut child = cmd
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn syncline");
        let lines = Arc::new((Mutex::new(Lines::default()), Condvar::new()));
        let out = child.stdout.take().expect("stdout");
        let shared = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    panic!("not a JSON line: {line:?}");
                };
                let (m, cv) = &*shared;
                m.lock().unwrap().lines.push((Instant::now(), v));
                cv.notify_all();
            }
            let (m, cv) = &*shared;
            m.lock().unwrap().closed = true;
            cv.notify_all();
        });
        let err = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(err), &mut s);
            s
        });
        Proc {
            child,
            lines,
            reader: Some(reader),
            stderr: Some(stderr),
        }
    }

    /// `syncline coordinator --listen EP --expect NAMES --prefix P EXTRA...`.
    pub fn coordinator(ep: &str, prefix: &str, expect: &str, extra: &[&str]) -> Proc {
        Self::coordinator_in(&[], ep, prefix, expect, extra)
    }

    /// The same, run through `wrapper` (`ip netns exec NS`).
    pub fn coordinator_in(
        wrapper: &[&str],
        ep: &str,
        prefix: &str,
        expect: &str,
        extra: &[&str],
    ) -> Proc {
        let mut args: Vec<String> = [
            "coordinator",
            "--listen",
            ep,
            "--expect",
            expect,
            "--prefix",
            prefix,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        Self::spawn(wrapper, &args)
    }

    /// `syncline participant --connect EP --name N --period-ns P --offset-ns O --prefix P EXTRA...`.
    pub fn participant(
        ep: &str,
        prefix: &str,
        name: &str,
        period: i64,
        offset: i64,
        extra: &[&str],
    ) -> Proc {
        Self::participant_in(&[], ep, prefix, name, period, offset, extra)
    }

    /// The same, run through `wrapper`.
    pub fn participant_in(
        wrapper: &[&str],
        ep: &str,
        prefix: &str,
        name: &str,
        period: i64,
        offset: i64,
        extra: &[&str],
    ) -> Proc {
        let mut args: Vec<String> = [
            "participant",
            "--connect",
            ep,
            "--name",
            name,
            "--prefix",
            prefix,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend([
            "--period-ns".to_string(),
            period.to_string(),
            "--offset-ns".to_string(),
            offset.to_string(),
        ]);
        args.extend(extra.iter().map(|s| s.to_string()));
        Self::spawn(wrapper, &args)
    }

    /// Waits until `pred` holds for some line; when it arrived.
    pub fn wait_event(&self, pred: impl Fn(&Value) -> bool, timeout: Duration) -> Option<Instant> {
        let (m, cv) = &*self.lines;
        let deadline = Instant::now() + timeout;
        let mut g = m.lock().unwrap();
        loop {
            if let Some((at, _)) = g.lines.iter().find(|(_, v)| pred(v)) {
                return Some(*at);
            }
            let now = Instant::now();
            if g.closed || now >= deadline {
                return None;
            }
            g = cv.wait_timeout(g, deadline - now).unwrap().0;
        }
    }

    /// Waits until at least `n` lines have been printed.
    pub fn wait_lines(&self, n: usize, timeout: Duration) -> bool {
        let (m, cv) = &*self.lines;
        let deadline = Instant::now() + timeout;
        let mut g = m.lock().unwrap();
        loop {
            if g.lines.len() >= n {
                return true;
            }
            let now = Instant::now();
            if g.closed || now >= deadline {
                return false;
            }
            g = cv.wait_timeout(g, deadline - now).unwrap().0;
        }
    }

    /// Lines printed so far.
    pub fn count(&self) -> usize {
        self.lines.0.lock().unwrap().lines.len()
    }

    /// SIGKILL.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the exit (killing the process after `timeout`).
    pub fn finish(mut self, timeout: Duration) -> Finished {
        let deadline = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break s.code(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break None;
                }
            }
        };
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let lines = std::mem::take(&mut self.lines.0.lock().unwrap().lines)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        Finished {
            status,
            lines,
            stderr,
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // Never leave a process behind (a failed assertion unwinds here).
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
