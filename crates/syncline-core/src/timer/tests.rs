//! Deterministic tests of the coordinator with sans-IO participants, in the
//! style of quinn-proto's `Pair`: no runtime, no clock, no sleeping.

use proptest::prelude::*;

use super::*;
use crate::time::{TimeDelta, Timestamp};

fn ts(n: i64) -> Timestamp {
    Timestamp::from_nanos(n)
}

fn grid(p: i64, o: i64) -> Grid {
    Grid::new(TimeDelta::from_nanos(p), TimeDelta::from_nanos(o)).unwrap()
}

/// `from` reports "ready, next wake-up at `next`" at shell time `now`.
fn ready(c: &mut Coordinator, from: ParticipantId, next: i64, now: i64) {
    c.handle(
        Report::Ready {
            from,
            next: ts(next),
        },
        ts(now),
    )
    .unwrap();
}

/// A coordinator with sans-IO participants, stepped by hand.
struct Harness {
    coord: Coordinator,
    parts: Vec<(ParticipantId, SimParticipant)>,
    /// Every step run: (simulated time, participant index).
    steps: Vec<(Timestamp, usize)>,
    now: Timestamp,
    /// A command held back by `drive` (a trigger after its `until`).
    held: Option<Command>,
}

impl Harness {
    fn new(config: CoordinatorConfig, grids: &[Grid]) -> Self {
        let mut coord = Coordinator::new(config).unwrap();
        let mut parts = Vec::new();
        for (i, g) in grids.iter().enumerate() {
            let id = coord.register(&format!("p{i}")).unwrap();
            parts.push((id, SimParticipant::new(*g, Timestamp::EPOCH).unwrap()));
        }
        Harness {
            coord,
            parts,
            steps: Vec::new(),
            now: Timestamp::EPOCH,
            held: None,
        }
    }

    fn report_all(&mut self) {
        for i in 0..self.parts.len() {
            self.report(i);
        }
    }

    fn report(&mut self, i: usize) {
        let (id, p) = &self.parts[i];
        if let Some(next) = p.next() {
            let r = Report::Ready { from: *id, next };
            self.coord.handle(r, self.now).unwrap();
        }
    }

    fn index_of(&self, id: ParticipantId) -> usize {
        self.parts.iter().position(|(pid, _)| *pid == id).unwrap()
    }

    /// Delivers commands (answering each) until the coordinator is quiet or
    /// wants to trigger a time after `until`. `mute` participants never answer.
    fn drive(&mut self, until: Timestamp, mute: &[usize]) {
        while let Some(cmd) = self.held.take().or_else(|| self.coord.poll_command()) {
            if matches!(cmd.signal, Signal::Trigger(t) if t > until) {
                self.held = Some(cmd);
                break;
            }
            let targets: Vec<usize> = match cmd.to {
                Recipient::All => (0..self.parts.len()).collect(),
                Recipient::One(id) => vec![self.index_of(id)],
            };
            for i in targets {
                if mute.contains(&i) {
                    continue;
                }
                match self.parts[i].1.handle(cmd.signal) {
                    Action::Step(tick) => {
                        self.steps.push((tick.deadline, i));
                        self.report(i);
                    }
                    Action::Report => self.report(i),
                    Action::Ignore | Action::Stop => {}
                }
            }
        }
    }
}

#[test]
fn duplicate_registration_is_a_typed_error() {
    let mut c = Coordinator::new(CoordinatorConfig::simulated()).unwrap();
    let a = c.register("a").unwrap();
    assert_eq!(
        c.register("a"),
        Err(CoordinatorError::Duplicate("a".into()))
    );
    assert_eq!(c.lookup("a"), Some(a));
    assert_eq!(c.name(a), Some("a"));
    // A participant that left may rejoin under its old id.
    c.deregister(a, ts(0)).unwrap();
    assert_eq!(c.register("a"), Ok(a));
    let ghost = ParticipantId(7);
    assert_eq!(
        c.handle(
            Report::Ready {
                from: ghost,
                next: ts(0)
            },
            ts(0)
        ),
        Err(CoordinatorError::UnknownParticipant(ghost))
    );
}

#[test]
fn bad_config_is_a_typed_error() {
    let c = CoordinatorConfig::simulated().answer_timeout(TimeDelta::ZERO);
    assert!(matches!(
        Coordinator::new(c),
        Err(CoordinatorError::Config(_))
    ));
    let c = CoordinatorConfig::real_time(TimeDelta::from_nanos(-1));
    assert!(matches!(
        Coordinator::new(c),
        Err(CoordinatorError::Config(_))
    ));
    let c = CoordinatorConfig::real_time(TimeDelta::ZERO).heartbeat_timeout(TimeDelta::ZERO);
    assert!(matches!(
        Coordinator::new(c),
        Err(CoordinatorError::Config(_))
    ));
}

#[test]
fn real_time_silent_participant_is_reported_not_waited_for_and_recovers() {
    let config =
        CoordinatorConfig::real_time(TimeDelta::ZERO).heartbeat_timeout(TimeDelta::from_nanos(100));
    let mut c = Coordinator::new(config).unwrap();
    let a = c.register("a").unwrap();
    let b = c.register("b").unwrap();
    let idle = c.register("idle").unwrap(); // never reports: never started, never timed
    ready(&mut c, a, 0, 0);
    ready(&mut c, b, 0, 0);
    // Before the start nobody is timed.
    assert_eq!(c.poll_timeout(), None);
    c.start(ts(0));
    while c.poll_command().is_some() {}
    while c.poll_event().is_some() {}
    assert_eq!(c.poll_timeout(), Some(ts(100)));
    ready(&mut c, a, 0, 50); // heartbeats
    ready(&mut c, b, 0, 60);
    ready(&mut c, b, 0, 120);
    assert_eq!(c.poll_timeout(), Some(ts(150)));
    // An early wake-up finds nobody silent yet.
    c.handle_timeout(ts(149));
    assert_eq!(c.poll_event(), None);
    c.handle_timeout(ts(150));
    assert_eq!(
        c.poll_event(),
        Some(Event::Silent {
            participant: a,
            last_heard: ts(50)
        })
    );
    assert_eq!(c.poll_event(), None);
    let st = c.status();
    assert_eq!(st.unresponsive, 1);
    let state = |st: &CoordinatorStatus, id: ParticipantId| st.participants[id.0 as usize].state;
    assert_eq!(state(&st, a), ParticipantState::Unresponsive);
    assert_eq!(state(&st, b), ParticipantState::RealTime);
    assert_eq!(state(&st, idle), ParticipantState::Registered);
    // Only `b` is timed now; reported once, not again.
    assert_eq!(c.poll_timeout(), Some(ts(220)));
    c.handle_timeout(ts(200));
    assert_eq!(c.poll_event(), None);
    // Nothing was sent to or waited for on its account; the run goes on
    // (a late joiner still gets the start).
    assert_eq!(c.poll_command(), None);
    // `a` comes back: recovered, and told the start again.
    ready(&mut c, a, 0, 300);
    assert_eq!(c.poll_event(), Some(Event::Recovered { participant: a }));
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::One(a),
            signal: Signal::Start(ts(0))
        })
    );
    assert_eq!(state(&c.status(), a), ParticipantState::RealTime);
    // `b` went silent too (last heard 120): now reported.
    c.handle_timeout(ts(300));
    assert_eq!(
        c.poll_event(),
        Some(Event::Silent {
            participant: b,
            last_heard: ts(120)
        })
    );
    assert_eq!(c.poll_timeout(), Some(ts(400)));
    // After a stop nothing is timed.
    c.stop();
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn mixed_rates_interleave_in_time_order() {
    let grids = [grid(10, 0), grid(20, 5), grid(50, 0)];
    let mut h = Harness::new(CoordinatorConfig::simulated(), &grids);
    h.report_all();
    h.coord.start(ts(0));
    h.drive(ts(100), &[]);
    let expected: Vec<(Timestamp, usize)> = vec![
        (ts(0), 0),
        (ts(0), 2),
        (ts(5), 1),
        (ts(10), 0),
        (ts(20), 0),
        (ts(25), 1),
        (ts(30), 0),
        (ts(40), 0),
        (ts(45), 1),
        (ts(50), 0),
        (ts(50), 2),
        (ts(60), 0),
        (ts(65), 1),
        (ts(70), 0),
        (ts(80), 0),
        (ts(85), 1),
        (ts(90), 0),
        (ts(100), 0),
        (ts(100), 2),
    ];
    assert_eq!(h.steps, expected);
    let st = h.coord.status();
    assert_eq!(st.current, Some(ts(105))); // advanced, trigger held back
    assert_eq!(h.held.map(|c| c.signal), Some(Signal::Trigger(ts(105))));
    assert_eq!(st.steps, 17);
    assert_eq!(st.triggers, 20);
}

#[test]
fn time_waits_for_every_participant_due() {
    let mut c = Coordinator::new(CoordinatorConfig::simulated()).unwrap();
    let a = c.register("a").unwrap();
    let b = c.register("b").unwrap();
    ready(&mut c, a, 0, 0);
    ready(&mut c, b, 0, 0);
    c.start(ts(0));
    while c.poll_command().is_some() {}
    ready(&mut c, a, 10, 0);
    assert_eq!(c.poll_command(), None);
    assert_eq!(c.current(), Some(ts(0)));
    ready(&mut c, b, 10, 0);
    assert_eq!(c.current(), Some(ts(10)));
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::One(a),
            signal: Signal::Trigger(ts(10))
        })
    );
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::One(b),
            signal: Signal::Trigger(ts(10))
        })
    );
    // A duplicate "still at the current step" report changes nothing.
    ready(&mut c, a, 10, 0);
    assert_eq!(c.poll_command(), None);
}

#[test]
fn expected_participants_start_automatically() {
    let config = CoordinatorConfig::simulated().expect(["a", "b"]);
    let mut c = Coordinator::new(config).unwrap();
    let a = c.register("a").unwrap();
    ready(&mut c, a, 0, 0);
    assert_eq!(c.phase(), Phase::Registering);
    assert_eq!(c.status().missing, vec!["b".to_string()]);
    let b = c.register("b").unwrap();
    assert_eq!(c.status().missing, vec!["b".to_string()]); // registered, not ready
    ready(&mut c, b, 3, 0);
    assert_eq!(c.phase(), Phase::Running);
    assert_eq!(c.poll_event(), Some(Event::Started { missing: 0 }));
    assert_eq!(c.current(), Some(ts(0)));
}

#[test]
fn start_on_command_reports_missing_expected() {
    let config = CoordinatorConfig::simulated().expect(["a", "b"]);
    let mut c = Coordinator::new(config).unwrap();
    let a = c.register("a").unwrap();
    ready(&mut c, a, 4, 0);
    c.start(ts(0));
    assert_eq!(c.poll_event(), Some(Event::Started { missing: 1 }));
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::One(a),
            signal: Signal::Trigger(ts(4))
        })
    );
}

#[test]
fn start_with_nobody_waits_for_the_first_report() {
    let mut c = Coordinator::new(CoordinatorConfig::simulated()).unwrap();
    c.start(ts(0));
    assert_eq!(c.poll_command(), None);
    let a = c.register("a").unwrap();
    ready(&mut c, a, 7, 0);
    assert_eq!(c.current(), Some(ts(7)));
    assert!(c.poll_command().is_some());
}

#[test]
fn out_of_sync_late_joiner_is_resynchronised() {
    let mut h = Harness::new(CoordinatorConfig::simulated(), &[grid(10, 0)]);
    h.report_all();
    h.coord.start(ts(0));
    h.drive(ts(50), &[]);
    assert_eq!(h.coord.current(), Some(ts(60))); // the trigger for 60 is held back
    // A late joiner with period 20, offset 5, reports its first wake-up, 5.
    let id = h.coord.register("late").unwrap();
    h.parts.push((
        id,
        SimParticipant::new(grid(20, 5), Timestamp::EPOCH).unwrap(),
    ));
    h.report(1);
    assert_eq!(h.coord.poll_event(), Some(Event::Started { missing: 0 }));
    assert_eq!(
        h.coord.poll_event(),
        Some(Event::OutOfSync {
            participant: id,
            reported: ts(5),
            current: ts(60)
        })
    );
    // It was told to resync to 60, fast-forwards to 65, and is stepped there.
    assert_eq!(
        h.coord.poll_command(),
        Some(Command {
            to: Recipient::One(id),
            signal: Signal::Resync(ts(60))
        })
    );
    assert_eq!(h.parts[1].1.handle(Signal::Resync(ts(60))), Action::Report);
    h.report(1);
    assert_eq!(
        h.coord.poll_event(),
        Some(Event::Recovered { participant: id })
    );
    h.drive(ts(80), &[]);
    let late: Vec<_> = h.steps.iter().filter(|s| s.1 == 1).map(|s| s.0).collect();
    assert_eq!(late, vec![ts(65)]);
    assert_eq!(h.coord.status().out_of_sync, 1);
}

#[test]
fn stale_report_is_ignored_and_counted() {
    let mut c = Coordinator::new(CoordinatorConfig::simulated()).unwrap();
    let a = c.register("a").unwrap();
    let b = c.register("b").unwrap();
    ready(&mut c, a, 0, 0);
    ready(&mut c, b, 0, 0);
    c.start(ts(0));
    ready(&mut c, a, 30, 0);
    // a reports again an earlier, still-future time: stale.
    ready(&mut c, a, 20, 0);
    while c
        .poll_event()
        .is_some_and(|e| !matches!(e, Event::StaleReport { .. }))
    {}
    assert_eq!(c.status().stale, 1);
    ready(&mut c, b, 40, 0);
    assert_eq!(c.current(), Some(ts(30)));
}

#[test]
fn unresponsive_participant_is_reported_and_not_waited_for() {
    let config = CoordinatorConfig::simulated().answer_timeout(TimeDelta::from_millis(100));
    let mut h = Harness::new(config, &[grid(10, 0), grid(10, 0)]);
    h.report_all();
    h.coord.start(ts(0));
    // Participant 1 never answers.
    h.drive(ts(1_000), &[1]);
    assert_eq!(h.coord.current(), Some(ts(0)));
    let t0 = h.now;
    assert_eq!(
        h.coord.poll_timeout(),
        Some(t0.saturating_add(TimeDelta::from_millis(100)))
    );
    h.coord
        .handle_timeout(t0.saturating_add(TimeDelta::from_millis(99)));
    assert_eq!(h.coord.poll_command(), None);
    h.now = t0.saturating_add(TimeDelta::from_millis(100));
    h.coord.handle_timeout(h.now);
    let p1 = h.parts[1].0;
    assert!(std::iter::from_fn(|| h.coord.poll_event()).any(|e| e
        == Event::Unresponsive {
            participant: p1,
            triggered_at: t0
        }));
    // Time goes on with participant 0 alone.
    h.drive(ts(30), &[1]);
    assert_eq!(h.steps.last(), Some(&(ts(30), 0)));
    assert_eq!(h.coord.status().unresponsive, 1);
    assert_eq!(
        h.coord.poll_timeout(),
        Some(h.now.saturating_add(TimeDelta::from_millis(100)))
    );
}

#[test]
fn pace_holds_steps_until_the_shell_clock_catches_up() {
    // Ten times faster than real time: 10 ms simulated per 1 ms of shell time.
    let config = CoordinatorConfig::simulated().pace(10, 1);
    let mut h = Harness::new(config, &[grid(10_000_000, 0)]);
    h.now = ts(1_000);
    h.report_all();
    h.coord.start(h.now);
    h.drive(ts(i64::MAX), &[]);
    // Step 0 runs at once; step 10 ms is held until shell time 1_000 + 1 ms.
    assert_eq!(h.steps, vec![(ts(0), 0)]);
    assert_eq!(h.coord.poll_timeout(), Some(ts(1_001_000)));
    h.coord.handle_timeout(ts(1_000_999));
    assert_eq!(h.coord.poll_command(), None);
    h.now = ts(1_001_000);
    h.coord.handle_timeout(h.now);
    h.drive(ts(i64::MAX), &[]);
    assert_eq!(h.steps, vec![(ts(0), 0), (ts(10_000_000), 0)]);
    assert_eq!(h.coord.poll_timeout(), Some(ts(2_001_000)));
    // A shell that looks late takes every step already due (20, 30, 40 ms),
    // and holds the next one (50 ms, due at 5_001_000).
    h.now = ts(5_000_000);
    h.coord.handle_timeout(h.now);
    h.drive(ts(i64::MAX), &[]);
    assert_eq!(h.steps.len(), 5);
    assert_eq!(h.coord.poll_timeout(), Some(ts(5_001_000)));
    assert!(matches!(
        Coordinator::new(CoordinatorConfig::simulated().pace(0, 1)),
        Err(CoordinatorError::Config(_))
    ));
}

#[test]
fn real_time_start_is_latched_for_late_joiners() {
    let config = CoordinatorConfig::real_time(TimeDelta::from_secs(1));
    let mut c = Coordinator::new(config).unwrap();
    let a = c.register("a").unwrap();
    ready(&mut c, a, 0, 5);
    c.start(ts(5));
    let at = ts(1_000_000_005);
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::All,
            signal: Signal::Start(at)
        })
    );
    let late = c.register("late").unwrap();
    ready(&mut c, late, 0, 9);
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::One(late),
            signal: Signal::Start(at)
        })
    );
    // A heartbeat from a started participant is not answered again.
    ready(&mut c, late, 0, 10);
    assert_eq!(c.poll_command(), None);
    // The liveness check: the first heartbeat timeout to end (`a`, last
    // heard at 5, default 5 s).
    assert_eq!(c.poll_timeout(), Some(ts(5_000_000_005)));
    assert_eq!(c.status().start_at, Some(at));
}

#[test]
fn stop_is_latched_and_stop_request_stops_everyone() {
    let mut c = Coordinator::new(CoordinatorConfig::simulated()).unwrap();
    let a = c.register("a").unwrap();
    c.handle(Report::StopRequest { from: a }, ts(0)).unwrap();
    assert_eq!(c.phase(), Phase::Stopped);
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::All,
            signal: Signal::Stop
        })
    );
    assert_eq!(
        c.poll_event(),
        Some(Event::StopRequested { participant: a })
    );
    assert_eq!(c.poll_event(), Some(Event::Stopped));
    ready(&mut c, a, 0, 0);
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::One(a),
            signal: Signal::Stop
        })
    );
    let late = c.register("late").unwrap();
    assert_eq!(
        c.poll_command(),
        Some(Command {
            to: Recipient::One(late),
            signal: Signal::Stop
        })
    );
    c.start(ts(0)); // no effect once stopped
    assert_eq!(c.phase(), Phase::Stopped);
    c.stop();
    assert_eq!(c.poll_command(), None);
}

#[test]
fn deregistering_a_working_participant_lets_time_go_on() {
    let mut h = Harness::new(CoordinatorConfig::simulated(), &[grid(10, 0), grid(10, 0)]);
    h.report_all();
    h.coord.start(ts(0));
    h.drive(ts(100), &[1]);
    assert_eq!(h.coord.current(), Some(ts(0)));
    h.coord.deregister(h.parts[1].0, ts(0)).unwrap();
    h.drive(ts(20), &[1]);
    assert_eq!(h.steps.last(), Some(&(ts(20), 0)));
}

#[test]
fn status_serialises() {
    let mut h = Harness::new(CoordinatorConfig::simulated(), &[grid(10, 0)]);
    h.report_all();
    h.coord.start(ts(0));
    let json = serde_json::to_value(h.coord.status()).unwrap();
    assert_eq!(json["phase"], "Running");
    assert_eq!(json["participants"][0]["state"], "Working");
    assert_eq!(json["participants"][0]["name"], "p0");
}

proptest! {
    /// The coordinator steps every participant at exactly its grid points,
    /// in time order (ties in registration order), with no step skipped.
    #[test]
    fn steps_are_the_merged_grids(
        spec in proptest::collection::vec((1i64..50, 0.0f64..1.0), 1..8),
        until in 0i64..500,
    ) {
        let grids: Vec<Grid> = spec
            .iter()
            .map(|&(p, f)| grid(p, ((p as f64 * f) as i64).min(p - 1)))
            .collect();
        let mut h = Harness::new(CoordinatorConfig::simulated(), &grids);
        h.report_all();
        h.coord.start(ts(0));
        h.drive(ts(until), &[]);
        let mut expected = Vec::new();
        for (i, g) in grids.iter().enumerate() {
            let mut t = g.offset().as_nanos();
            while t <= until {
                expected.push((ts(t), i));
                t += g.period().as_nanos();
            }
        }
        expected.sort();
        prop_assert_eq!(&h.steps, &expected);
        for (_, p) in &h.parts {
            prop_assert_eq!(p.status().schedule.missed, 0);
            prop_assert_eq!(p.status().stale_triggers, 0);
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Register(u8),
    Ready(u8, i64),
    StopRequest(u8),
    Leave(u8),
    Start,
    Stop,
    Timeout(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0u8..3).prop_map(Op::Register),
        6 => ((0u8..4), (-5i64..40)).prop_map(|(p, t)| Op::Ready(p, t)),
        1 => (0u8..4).prop_map(Op::StopRequest),
        1 => (0u8..4).prop_map(Op::Leave),
        2 => Just(Op::Start),
        1 => Just(Op::Stop),
        2 => (0i64..5_000).prop_map(Op::Timeout),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]
    /// Any sequence of inputs, valid or not: no panic, and simulated time
    /// never stalls with participants waiting but nobody working.
    #[test]
    fn arbitrary_inputs_never_panic_or_stall(
        ops in proptest::collection::vec(op(), 0..60),
        timeout_ms in 1i64..3,
        real_time in proptest::bool::weighted(0.25),
    ) {
        let config = if real_time {
            CoordinatorConfig::real_time(TimeDelta::from_millis(1))
                .heartbeat_timeout(TimeDelta::from_millis(timeout_ms))
        } else {
            CoordinatorConfig::simulated().answer_timeout(TimeDelta::from_millis(timeout_ms))
        };
        let mut c = Coordinator::new(config).unwrap();
        let mut now = 0i64;
        for op in ops {
            now += 100_000;
            let id = |p: u8| ParticipantId(u32::from(p));
            let timed_out = matches!(op, Op::Timeout(_));
            let _ = match op {
                Op::Register(p) => c.register(&format!("p{p}")).map(drop),
                Op::Ready(p, t) => c.handle(Report::Ready { from: id(p), next: ts(t) }, ts(now)),
                Op::StopRequest(p) => c.handle(Report::StopRequest { from: id(p) }, ts(now)),
                Op::Leave(p) => c.deregister(id(p), ts(now)),
                Op::Start => { c.start(ts(now)); Ok(()) }
                Op::Stop => { c.stop(); Ok(()) }
                Op::Timeout(dt) => { now += dt * 1_000; c.handle_timeout(ts(now)); Ok(()) }
            };
            while c.poll_command().is_some() {}
            while c.poll_event().is_some() {}
            let st = c.status();
            if real_time {
                // Liveness: whoever is started is timed; a timeout leaves
                // nobody started past its heartbeat timeout.
                let started = st.participants.iter().filter(|p| p.state == ParticipantState::RealTime);
                let limit = TimeDelta::from_millis(timeout_ms);
                prop_assert_eq!(
                    c.poll_timeout(),
                    started.clone().filter_map(|p| p.last_heard).min().map(|t| t.saturating_add(limit))
                        .filter(|_| st.phase == Phase::Running)
                );
                if timed_out && st.phase == Phase::Running {
                    for p in started {
                        prop_assert!(p.last_heard.is_some_and(|t| t.saturating_add(limit) > ts(now)));
                    }
                }
                continue;
            }
            let working = st.participants.iter().any(|p| p.state == ParticipantState::Working);
            let waiting = st.participants.iter().any(|p| p.state == ParticipantState::Waiting);
            if st.phase == Phase::Running {
                prop_assert!(!waiting || working, "stalled: {st:?}");
                prop_assert_eq!(c.poll_timeout().is_some(), working);
            } else {
                prop_assert!(!working);
            }
            if let (Some(cur), true) = (st.current, working) {
                for p in st.participants.iter().filter(|p| p.state == ParticipantState::Working) {
                    prop_assert_eq!(p.next, Some(cur));
                }
            }
        }
    }
}
