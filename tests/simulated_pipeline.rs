//! A pipeline in simulated time is deterministic: the same program gives
//! the same outputs on every run. Two coordinator-driven timers exchange
//! stamped messages, and a coarse timer runs on the same simulated clock.

use std::sync::{Arc, Mutex};

use syncline::clock::{Clock, SystemClock};
use syncline::core::timer::{CoordinatorConfig, Header, ValidReader};
use syncline::timer::{
    CoarseTimer, PeriodicTimer, SimClock, TimerConfig, TimingCoordinator, in_process_bus,
};
use syncline::{TimeDelta, Timestamp};

type Log = Arc<Mutex<Vec<(i64, &'static str, i64)>>>;

fn run_once() -> Vec<(i64, &'static str, i64)> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _enter = rt.enter();
    let (bus, connector) = in_process_bus();
    let config = CoordinatorConfig::simulated().expect(["fast", "slow"]);
    let coordinator = TimingCoordinator::spawn(config, bus, SystemClock).unwrap();
    let clock = SimClock::default();
    let log: Log = Arc::default();
    let mailbox = Arc::new(Mutex::new(ValidReader::with_capacity(32)));

    let coarse_log = log.clone();
    let coarse_clock = clock.clone();
    let coarse = CoarseTimer::spawn(clock.clone(), TimeDelta::from_millis(250), move |t| {
        assert!(coarse_clock.now() >= t);
        coarse_log.lock().unwrap().push((t.as_nanos(), "coarse", 0));
    })
    .unwrap();

    let mut timers = Vec::new();
    for (name, period_ms, offset_ms) in [("fast", 10, 0), ("slow", 30, 5)] {
        let cfg = TimerConfig::new(
            name,
            TimeDelta::from_millis(period_ms),
            TimeDelta::from_millis(offset_ms),
        )
        .simulated(true, true);
        let timer = PeriodicTimer::new(cfg, Some(connector.connect(name).unwrap()))
            .unwrap()
            .with_sim_clock(clock.clone());
        let (log, mailbox) = (log.clone(), mailbox.clone());
        timer
            .start_async(move |t: Timestamp| {
                let mut mb = mailbox.lock().unwrap();
                let value = if name == "slow" {
                    let v = t.as_nanos() / 1_000_000 * 3 + 1;
                    mb.push(Header::stamp(t, TimeDelta::from_millis(12)).unwrap(), v);
                    v
                } else {
                    mb.newest_valid(t).map_or(-1, |s| s.value)
                };
                log.lock().unwrap().push((t.as_nanos(), name, value));
            })
            .unwrap();
        timers.push(timer);
    }
    rt.block_on(clock.sleep_until(Timestamp::from_nanos(1_000_000_000)));
    for t in &timers {
        t.stop();
    }
    rt.block_on(async {
        coarse.stop().await;
        coordinator.stop();
        coordinator.join().await;
    });
    let mut log: Vec<_> = log
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|e| e.0 <= 1_000_000_000)
        .collect();
    log.sort();
    log
}

#[test]
fn the_same_simulated_program_gives_the_same_outputs() {
    let first = run_once();
    assert_eq!(first.iter().filter(|e| e.1 == "fast").count(), 101);
    assert_eq!(first.iter().filter(|e| e.1 == "slow").count(), 34);
    // The coarse timer only observes the simulated clock (it is not a
    // coordinator participant), so how far it got is not compared; its
    // deadlines are on its grid.
    assert!(first.iter().any(|e| e.1 == "coarse"));
    assert!(
        first
            .iter()
            .filter(|e| e.1 == "coarse")
            .all(|e| e.0 % 250_000_000 == 0)
    );
    let participants = |log: Vec<(i64, &'static str, i64)>| -> Vec<_> {
        log.into_iter().filter(|e| e.1 != "coarse").collect()
    };
    let first = participants(first);
    // "fast" at 20 ms sees the message "slow" sent at 5 ms (valid at 17 ms).
    assert!(first.contains(&(20_000_000, "fast", 16)));
    for _ in 0..3 {
        assert_eq!(participants(run_once()), first);
    }
}
