//! Tests of the async timer shell: coordinator + participants over the
//! in-process bus on tokio's paused clock, and the timer threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::clock::{Clock, TokioClock};
use syncline_core::timer::{CoordinatorConfig, Grid, Phase, Signal, SimParticipant};
use syncline_core::{TimeDelta, Timestamp};

fn grid(ms: i64, offset_ms: i64) -> Grid {
    Grid::new(
        TimeDelta::from_millis(ms),
        TimeDelta::from_millis(offset_ms),
    )
    .unwrap()
}

type Log = Arc<Mutex<Vec<(i64, &'static str)>>>;

/// A one-worker multi-thread runtime running a coordinator with `config`
/// on `clock` over a fresh in-process bus; the connector joins participants.
fn coordinator_on_runtime(
    config: CoordinatorConfig,
    clock: impl Clock,
) -> (tokio::runtime::Runtime, BusConnector, TimingCoordinator) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (bus, connector) = in_process_bus();
    let coordinator = rt
        .block_on(async { TimingCoordinator::spawn(config, bus, clock) })
        .unwrap();
    (rt, connector, coordinator)
}

async fn shutdown(coordinator: TimingCoordinator) {
    coordinator.stop();
    assert_eq!(coordinator.join().await.unwrap().phase, Phase::Stopped);
}

/// Spawns a simulated participant task that logs its steps until `until`.
fn spawn_participant(
    connector: &BusConnector,
    name: &'static str,
    g: Grid,
    clock: SimClock,
    log: Log,
    until: Timestamp,
) -> tokio::task::JoinHandle<Ended> {
    let mut link = connector.connect(name).unwrap();
    tokio::spawn(async move {
        let mut core = SimParticipant::new(g, Timestamp::EPOCH).unwrap();
        let stop = StopSignal::new();
        let s = stop.clone();
        let c = clock.clone();
        run_simulated(
            &mut link,
            &mut core,
            &clock,
            &stop,
            |t| {
                assert_eq!(c.now(), t); // the clock reads the step's time
                log.lock().unwrap().push((t.as_nanos() / 1_000_000, name));
                if t >= until {
                    s.stop();
                }
            },
            None,
        )
        .await
    })
}

#[tokio::test(start_paused = true)]
async fn coordinator_drives_participants_in_time_order() {
    let (bus, connector) = in_process_bus();
    let config = CoordinatorConfig::simulated().expect(["a", "b", "c"]);
    let coordinator = TimingCoordinator::spawn(config, bus, TokioClock::new()).unwrap();
    let clock = SimClock::default();
    let log: Log = Arc::default();
    let until = Timestamp::from_nanos(40_000_000);
    let tasks = [
        spawn_participant(
            &connector,
            "a",
            grid(10, 0),
            clock.clone(),
            log.clone(),
            until,
        ),
        spawn_participant(
            &connector,
            "b",
            grid(20, 5),
            clock.clone(),
            log.clone(),
            until,
        ),
        spawn_participant(
            &connector,
            "c",
            grid(40, 0),
            clock.clone(),
            log.clone(),
            until,
        ),
    ];
    // "b" never reaches `until` exactly (its grid is 5, 25, 45): it is
    // stepped at 45 only after "a" and "c" stopped, i.e. left.
    for t in tasks {
        assert_eq!(t.await.unwrap(), Ended::Stopped);
    }
    let mut log = log.lock().unwrap().clone();
    // Within one instant, the order of participants may vary; across
    // instants it may not.
    let times: Vec<i64> = log.iter().map(|e| e.0).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{log:?}");
    log.sort();
    assert_eq!(
        log,
        vec![
            (0, "a"),
            (0, "c"),
            (5, "b"),
            (10, "a"),
            (20, "a"),
            (25, "b"),
            (30, "a"),
            (40, "a"),
            (40, "c"),
            (45, "b"),
        ]
    );
    assert_eq!(clock.now(), Timestamp::from_nanos(45_000_000));
    let status = coordinator.status().await.unwrap();
    assert_eq!(status.phase, Phase::Running);
    coordinator.stop();
    assert_eq!(coordinator.join().await.unwrap().phase, Phase::Stopped);
}

#[tokio::test(start_paused = true)]
async fn an_unresponsive_participant_is_not_waited_for() {
    let (bus, connector) = in_process_bus();
    let config = CoordinatorConfig::simulated()
        .expect(["ok", "mute"])
        .answer_timeout(TimeDelta::from_millis(200));
    let coordinator = TimingCoordinator::spawn(config, bus, TokioClock::new()).unwrap();
    // "mute" reports ready once and then never answers a trigger.
    let mut mute = connector.connect("mute").unwrap();
    mute.send(Outbound::Ready(Timestamp::EPOCH)).unwrap();
    let log: Log = Arc::default();
    let until = Timestamp::from_nanos(30_000_000);
    let ok = spawn_participant(
        &connector,
        "ok",
        grid(10, 0),
        SimClock::default(),
        log.clone(),
        until,
    );
    assert_eq!(ok.await.unwrap(), Ended::Stopped);
    assert_eq!(log.lock().unwrap().len(), 4);
    let status = coordinator.status().await.unwrap();
    assert_eq!(status.unresponsive, 1);
    let mute_state = status
        .participants
        .iter()
        .find(|p| p.name == "mute")
        .unwrap()
        .state;
    assert_eq!(
        mute_state,
        syncline_core::timer::ParticipantState::Unresponsive
    );
    drop(mute);
    shutdown(coordinator).await;
}

#[tokio::test(start_paused = true)]
async fn a_participant_ends_when_the_coordinator_is_gone() {
    let (bus, connector) = in_process_bus();
    let coordinator =
        TimingCoordinator::spawn(CoordinatorConfig::simulated(), bus, TokioClock::new()).unwrap();
    let mut link = connector.connect("p").unwrap();
    coordinator.stop();
    coordinator.join().await;
    let mut core = SimParticipant::new(grid(10, 0), Timestamp::EPOCH).unwrap();
    let ended = run_simulated(
        &mut link,
        &mut core,
        &SimClock::default(),
        &StopSignal::new(),
        |_| {},
        None,
    )
    .await;
    assert!(matches!(ended, Ended::StopSignal | Ended::CoordinatorGone));
}

#[tokio::test(start_paused = true)]
async fn stop_signal_calls_on_stop_instead_of_ending() {
    let (bus, connector) = in_process_bus();
    let config = CoordinatorConfig::simulated().expect(["p"]);
    let coordinator = TimingCoordinator::spawn(config, bus, TokioClock::new()).unwrap();
    let mut link = connector.connect("p").unwrap();
    let mut core = SimParticipant::new(grid(10, 0), Timestamp::EPOCH).unwrap();
    let calls = AtomicU64::new(0);
    let mut on_stop = || {
        calls.fetch_add(1, Ordering::Relaxed);
    };
    let steps = AtomicU64::new(0);
    let ended = run_simulated(
        &mut link,
        &mut core,
        &SimClock::default(),
        &StopSignal::new(),
        |_| {
            if steps.fetch_add(1, Ordering::Relaxed) == 2 {
                coordinator.stop();
            }
        },
        Some(&mut on_stop),
    )
    .await;
    // The coordinator stopped and went away; the participant ran on_stop
    // and then ended because the coordinator was gone.
    assert_eq!(ended, Ended::CoordinatorGone);
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    assert_eq!(steps.load(Ordering::Relaxed), 3);
}

#[tokio::test(start_paused = true)]
async fn duplicate_names_are_rejected_without_harming_the_original() {
    let (bus, connector) = in_process_bus();
    let config = CoordinatorConfig::simulated().expect(["p"]);
    let coordinator = TimingCoordinator::spawn(config, bus, TokioClock::new()).unwrap();
    let first = connector.connect("p").unwrap();
    let mut dup = connector.connect("p").unwrap();
    assert_eq!(dup.recv().await, None); // closed at once
    assert_eq!(
        dup.send(Outbound::Ready(Timestamp::EPOCH)),
        Err(TransportClosed)
    );
    drop(dup); // its "leave" must not remove the original
    // Let the coordinator take both joins (and no leave).
    tokio::time::sleep(Duration::from_millis(1)).await;
    let status = coordinator.status().await.unwrap();
    assert_eq!(status.participants.len(), 1);
    assert_eq!(
        status.participants[0].state,
        syncline_core::timer::ParticipantState::Registered
    );
    drop(first);
    shutdown(coordinator).await;
}

#[tokio::test(start_paused = true)]
async fn coarse_timer_ticks_on_grid_and_stops_at_once() {
    let clock = TokioClock::starting_at(Timestamp::from_nanos(5_000_000));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let timer = CoarseTimer::spawn(clock, TimeDelta::from_millis(100), move |t| {
        s.lock().unwrap().push(t.as_nanos() / 1_000_000);
    })
    .unwrap();
    tokio::time::sleep(Duration::from_millis(350)).await;
    let stop_at = tokio::time::Instant::now();
    assert_eq!(timer.stop().await, 3);
    assert_eq!(tokio::time::Instant::now(), stop_at); // no waiting for the next tick
    assert_eq!(*seen.lock().unwrap(), vec![100, 200, 300]);
    assert!(matches!(
        CoarseTimer::spawn(TokioClock::new(), TimeDelta::from_micros(10), |_| {}),
        Err(TimerError::PeriodTooShort { .. })
    ));
}

#[test]
fn bad_timer_configs_are_typed_errors() {
    let cfg = |p, o| TimerConfig::new("t", TimeDelta::from_nanos(p), TimeDelta::from_nanos(o));
    assert!(matches!(
        PeriodicTimer::<BusParticipant>::new(cfg(0, 0), None),
        Err(TimerError::Schedule(_))
    ));
    assert!(matches!(
        PeriodicTimer::<BusParticipant>::new(cfg(10, 10), None),
        Err(TimerError::Schedule(_))
    ));
    assert!(matches!(
        PeriodicTimer::<BusParticipant>::new(cfg(10, 0).simulated(false, true), None),
        Err(TimerError::SimulatedNotAllowed)
    ));
    assert!(matches!(
        PeriodicTimer::<BusParticipant>::new(cfg(10, 0).simulated(true, true), None),
        Err(TimerError::NeedsCoordinator)
    ));
    assert!(matches!(
        PeriodicTimer::<BusParticipant>::new(cfg(10, 0).wait_for_start(true), None),
        Err(TimerError::NeedsCoordinator)
    ));
}

#[test]
fn real_time_timer_counts_panics_and_overruns_and_keeps_its_grid() {
    let period = TimeDelta::from_millis(2);
    let config = TimerConfig::new("rt", period, TimeDelta::from_micros(500));
    let timer = Arc::new(PeriodicTimer::standalone(config).unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (t, s) = (timer.clone(), seen.clone());
    timer
        .start_async(move |deadline| {
            let n = {
                let mut seen = s.lock().unwrap();
                seen.push(deadline);
                seen.len()
            };
            match n {
                2 => panic!("callback failure (expected by the test)"),
                3 => std::thread::sleep(Duration::from_millis(7)), // overrun: > 3 periods
                6 => t.stop_async(),
                _ => {}
            }
        })
        .unwrap();
    assert!(matches!(timer.join(), Some(Ok(Ended::Stopped))));
    let stats = timer.stats();
    assert_eq!(stats.ticks, 6);
    assert_eq!(stats.panics, 1);
    assert!(stats.overruns >= 1);
    assert!(stats.missed >= 2); // d + 2 ms and d + 4 ms at least
    let seen = seen.lock().unwrap();
    for w in seen.windows(2) {
        let d = w[1].checked_since(w[0]).unwrap().as_nanos();
        assert!(d > 0 && d % period.as_nanos() == 0, "grid kept: {d}");
    }
    assert!(seen.iter().all(|t| t.as_nanos() % 2_000_000 == 500_000));
    assert!(matches!(
        timer.start_async(|_| {}),
        Err(TimerError::AlreadyStarted)
    ));
}

#[test]
fn stop_returns_promptly_for_a_long_period_timer() {
    // A one-hour period: stop() must not wait for the next tick.
    let config = TimerConfig::new("slow", TimeDelta::from_secs(3600), TimeDelta::ZERO);
    let timer = PeriodicTimer::standalone(config).unwrap();
    let ticks = Arc::new(AtomicU64::new(0));
    let t = ticks.clone();
    timer
        .start_async(move |_| {
            t.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert!(matches!(timer.stop(), Some(Ok(Ended::Stopped))));
    assert_eq!(ticks.load(Ordering::Relaxed), 0);
}

#[test]
fn simulated_timer_steps_with_the_coordinator_and_survives_its_loss() {
    let (rt, connector, coordinator) = coordinator_on_runtime(
        CoordinatorConfig::simulated().expect(["sim"]),
        TokioClock::new(),
    );
    let link = connector.connect("sim").unwrap();
    let cfg = TimerConfig::new("sim", TimeDelta::from_millis(10), TimeDelta::from_millis(3))
        .simulated(true, true);
    let timer = Arc::new(PeriodicTimer::new(cfg, Some(link)).unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let t = timer.clone();
    timer
        .start_async(move |deadline| {
            assert_eq!(t.time(), deadline);
            let _ = tx.send(deadline.as_nanos());
        })
        .unwrap();
    let got: Vec<i64> = rx.iter().take(4).collect();
    assert_eq!(got, vec![3_000_000, 13_000_000, 23_000_000, 33_000_000]);
    // The coordinator goes away: the timer ends by itself, stop() does not hang.
    rt.block_on(async {
        coordinator.stop();
        coordinator.join().await;
    });
    let ended = timer.join(); // it ends by itself: no local stop
    assert!(
        matches!(ended, Some(Ok(Ended::StopSignal | Ended::CoordinatorGone))),
        "{ended:?}"
    );
    assert!(timer.stop().is_none()); // already ended and joined
    assert_eq!(timer.start_time(), Some(Timestamp::EPOCH));
}

#[test]
fn real_time_timer_waits_for_the_latched_start() {
    let (rt, connector, coordinator) = coordinator_on_runtime(
        CoordinatorConfig::real_time(TimeDelta::from_millis(20)).expect(["rt"]),
        crate::clock::SystemClock,
    );
    let link = connector.connect("rt").unwrap();
    let cfg = TimerConfig::new("rt", TimeDelta::from_millis(5), TimeDelta::from_millis(1))
        .wait_for_start(true);
    let timer = PeriodicTimer::new(cfg, Some(link)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    timer
        .start_async(move |deadline| {
            let _ = tx.send(deadline);
        })
        .unwrap();
    let first = rx.recv().unwrap();
    let status = rt.block_on(coordinator.status()).unwrap();
    let at = status.start_at.unwrap();
    assert!(first >= at, "first tick {first} before the start {at}");
    assert_eq!(first.as_nanos() % 5_000_000, 1_000_000);
    // The first deadline (a busy machine may wake past it: then skipped).
    let start = timer.start_time().unwrap();
    assert!(start >= at && start <= first);
    assert!(matches!(timer.stop(), Some(Ok(Ended::Stopped))));
    rt.block_on(async {
        coordinator.stop();
        coordinator.join().await;
    });
}

#[test]
fn channel_delivers_deadlines_to_async_code() {
    let config = TimerConfig::new("chan", TimeDelta::from_millis(1), TimeDelta::ZERO);
    let timer = PeriodicTimer::standalone(config).unwrap();
    let mut rx = timer.start_channel(8).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let got: Vec<Timestamp> = rt.block_on(async {
        let mut got = Vec::new();
        while got.len() < 3 {
            got.push(rx.recv().await.unwrap());
        }
        got
    });
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    assert!(got.iter().all(|t| t.as_nanos() % 1_000_000 == 0));
    assert!(matches!(timer.stop(), Some(Ok(Ended::Stopped))));
}

#[test]
fn coordinator_stop_calls_the_stop_callback_and_the_timer_goes_on() {
    let (rt, connector, coordinator) = coordinator_on_runtime(
        CoordinatorConfig::real_time(TimeDelta::ZERO).expect(["rt"]),
        crate::clock::SystemClock,
    );
    let cfg =
        TimerConfig::new("rt", TimeDelta::from_millis(1), TimeDelta::ZERO).wait_for_start(true);
    let timer = PeriodicTimer::new(cfg, Some(connector.connect("rt").unwrap())).unwrap();
    let (tick_tx, tick_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel();
    timer
        .start_async_with_stop(
            move |t| {
                let _ = tick_tx.send(t);
            },
            Some(move || {
                let _ = stop_tx.send(());
            }),
        )
        .unwrap();
    tick_rx.recv().unwrap(); // started
    rt.block_on(async {
        coordinator.stop();
        coordinator.join().await;
    });
    stop_rx.recv().unwrap(); // the stop callback ran instead of stopping
    let before = timer.stats().ticks;
    while timer.stats().ticks == before {
        tick_rx.recv().unwrap(); // still ticking, coordinator gone
    }
    assert!(matches!(timer.stop(), Some(Ok(Ended::Stopped))));
    assert!(stop_rx.try_recv().is_err()); // called once
}

#[tokio::test(start_paused = true)]
async fn real_time_silent_participant_is_reported_and_not_waited_for() {
    let (bus, connector) = in_process_bus();
    let config = CoordinatorConfig::real_time(TimeDelta::from_millis(10))
        .expect(["alive", "mute"])
        .heartbeat_timeout(TimeDelta::from_millis(500));
    let coordinator = TimingCoordinator::spawn(config, bus, TokioClock::new()).unwrap();
    let mut alive = connector.connect("alive").unwrap();
    let mut mute = connector.connect("mute").unwrap();
    alive.send(Outbound::Ready(Timestamp::EPOCH)).unwrap();
    mute.send(Outbound::Ready(Timestamp::EPOCH)).unwrap();
    // Both ready: the start is distributed.
    assert!(matches!(alive.recv().await, Some(Signal::Start(_))));
    assert!(matches!(mute.recv().await, Some(Signal::Start(_))));
    let beating = tokio::spawn(async move {
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            alive.send(Outbound::Ready(Timestamp::EPOCH)).unwrap();
        }
        alive
    });
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let status = coordinator.status().await.unwrap();
    let state = |name: &str| {
        status
            .participants
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.state)
    };
    use syncline_core::timer::ParticipantState;
    assert_eq!(state("mute"), Some(ParticipantState::Unresponsive));
    assert_eq!(state("alive"), Some(ParticipantState::RealTime));
    assert_eq!(status.unresponsive, 1);
    assert_eq!(status.phase, Phase::Running);
    // It comes back: started again, and timed again.
    mute.send(Outbound::Ready(Timestamp::EPOCH)).unwrap();
    assert!(matches!(mute.recv().await, Some(Signal::Start(_))));
    let status = coordinator.status().await.unwrap();
    assert!(
        status
            .participants
            .iter()
            .all(|p| p.state == ParticipantState::RealTime)
    );
    drop(beating.await.unwrap());
    drop(mute);
    shutdown(coordinator).await;
}

#[test]
fn real_time_timer_sends_heartbeats_from_its_tick_loop() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut coord, connector) = in_process_bus();
    let mut cfg =
        TimerConfig::new("rt", TimeDelta::from_millis(1), TimeDelta::ZERO).wait_for_start(true);
    cfg.heartbeat = Duration::from_millis(3);
    let timer = PeriodicTimer::new(cfg, Some(connector.connect("rt").unwrap())).unwrap();
    let ticks = Arc::new(Mutex::new(Vec::new()));
    let seen = ticks.clone();
    timer
        .start_async(move |t| seen.lock().unwrap().push(t))
        .unwrap();
    let beats = rt.block_on(async {
        let Some(Inbound::Join { peer, name }) = coord.recv().await else {
            panic!("no join");
        };
        assert_eq!(&*name, "rt");
        // Waiting for the start: ready, next 0.
        let ready = Inbound::Ready {
            peer,
            next: Timestamp::EPOCH,
        };
        assert_eq!(coord.recv().await, Some(ready));
        let start = crate::timer::system_now();
        coord.send(Some(peer), Signal::Start(start)).unwrap();
        let mut beats = Vec::new();
        while beats.len() < 3 {
            match coord.recv().await {
                Some(Inbound::Ready { next, .. }) if next > Timestamp::EPOCH => beats.push(next),
                other => panic!("unexpected {other:?}"),
            }
        }
        (start, beats)
    });
    let (start, beats) = beats;
    assert!(matches!(timer.stop(), Some(Ok(Ended::Stopped))));
    // Heartbeats carry tick deadlines, at least 3 ms apart, after the start.
    let ticks = ticks.lock().unwrap();
    assert!(beats.iter().all(|b| *b >= start && ticks.contains(b)));
    assert!(
        beats
            .windows(2)
            .all(|w| w[1].nanos_since_wide(w[0]) >= 3_000_000)
    );
}

#[tokio::test(start_paused = true)]
async fn coarse_timer_counts_a_panicking_callback_and_keeps_its_grid() {
    let clock = TokioClock::starting_at(Timestamp::EPOCH);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let timer = CoarseTimer::spawn(clock, TimeDelta::from_millis(100), move |t| {
        let ms = t.as_nanos() / 1_000_000;
        if ms == 100 {
            panic!("callback failure (expected by the test)");
        }
        s.lock().unwrap().push(ms);
    })
    .unwrap();
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(timer.panics(), 1);
    assert_eq!(timer.stop().await, 4); // 0, 100 (panicked), 200, 300
    assert_eq!(*seen.lock().unwrap(), vec![0, 200, 300]);
}

#[test]
fn simulated_timer_counts_a_panicking_callback_and_steps_on() {
    let (rt, connector, coordinator) = coordinator_on_runtime(
        CoordinatorConfig::simulated().expect(["sim"]),
        TokioClock::new(),
    );
    let cfg =
        TimerConfig::new("sim", TimeDelta::from_millis(10), TimeDelta::ZERO).simulated(true, true);
    let timer = PeriodicTimer::new(cfg, Some(connector.connect("sim").unwrap())).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    timer
        .start_async(move |deadline| {
            if deadline == Timestamp::from_nanos(10_000_000) {
                panic!("callback failure (expected by the test)");
            }
            let _ = tx.send(deadline.as_nanos());
        })
        .unwrap();
    let got: Vec<i64> = rx.iter().take(3).collect();
    assert_eq!(got, vec![0, 20_000_000, 30_000_000]);
    assert_eq!(timer.stats().panics, 1);
    assert!(matches!(timer.stop(), Some(Ok(Ended::Stopped))));
    rt.block_on(shutdown(coordinator));
}

/// The bus on a multi-thread runtime, where the coordinator and the
/// participants run on different workers: a lost wake-up would hang this
/// test, a lost or duplicated step would change the log.
#[test]
fn bus_on_the_multi_thread_runtime_loses_no_step() {
    const NAMES: [&str; 8] = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"];
    for _round in 0..5 {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let log: Log = Arc::default();
        let steps = rt.block_on(async {
            let (bus, connector) = in_process_bus();
            let config = CoordinatorConfig::simulated().expect(NAMES);
            let coordinator = TimingCoordinator::spawn(config, bus, TokioClock::new()).unwrap();
            let tasks: Vec<_> = NAMES
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    // Half on a 1 ms grid (all due together), half offset.
                    let g = if i % 2 == 0 { grid(1, 0) } else { grid(2, 1) };
                    let until = Timestamp::from_nanos(200_000_000);
                    spawn_participant(&connector, name, g, SimClock::default(), log.clone(), until)
                })
                .collect();
            for t in tasks {
                assert_eq!(t.await.unwrap(), Ended::Stopped);
            }
            let steps = coordinator.status().await.unwrap().steps;
            shutdown(coordinator).await;
            steps
        });
        let mut log = log.lock().unwrap().clone();
        // Every participant ran every step of its grid up to 200 ms, once.
        let per_name = |n: &str| log.iter().filter(|(_, m)| *m == n).count();
        for (i, name) in NAMES.iter().enumerate() {
            assert_eq!(per_name(name), if i % 2 == 0 { 201 } else { 101 }, "{name}");
        }
        // Every millisecond 0..=201 was a step (201: the offset grid's last).
        log.sort();
        log.dedup_by_key(|(t, _)| *t);
        assert!(log.iter().map(|(t, _)| *t).eq(0..=201));
        assert!(steps >= 202);
    }
}
