//! Simulated-time step rate: a timing coordinator with 20 participants, as
//! the pure sans-IO core (coordinator and participants stepped in one loop)
//! and over the in-process timing bus (tokio channels, one task per
//! participant, current-thread runtime).
//!
//! Two shapes: `one_due` (20 participants on one 20 ms period with offsets
//! 0..19 ms: each step triggers one participant) and `all_due` (20
//! participants on the same 1 ms grid: each step triggers all 20).
//!
//! Run: `cargo bench --bench coordinator -- --sample-count 10`

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use syncline::clock::SystemClock;
use syncline::core::timer::{
    Action, Coordinator, CoordinatorConfig, Grid, Recipient, Report, SimParticipant,
};
use syncline::timer::{SimClock, StopSignal, TimingCoordinator, in_process_bus, run_simulated};
use syncline::{TimeDelta, Timestamp};

fn main() {
    divan::main();
}

const PARTICIPANTS: i64 = 20;

/// Grids, the simulated time after which participants stop, and the exact
/// number of coordinator steps that takes.
#[derive(Debug, Clone, Copy)]
enum Shape {
    OneDue,
    AllDue,
}

impl Shape {
    fn grids(self) -> Vec<Grid> {
        (0..PARTICIPANTS)
            .map(|i| match self {
                Shape::OneDue => Grid::new(TimeDelta::from_millis(20), TimeDelta::from_millis(i)),
                Shape::AllDue => Grid::new(TimeDelta::from_millis(1), TimeDelta::ZERO),
            })
            .collect::<Result<_, _>>()
            .expect("valid grids")
    }

    /// Each participant stops after its first step at or after this time.
    fn until(self) -> Timestamp {
        match self {
            Shape::OneDue => Timestamp::from_nanos(19_980_000_000),
            Shape::AllDue => Timestamp::from_nanos(1_999_000_000),
        }
    }

    /// Steps from 0 to the last participant's last step (one per ms).
    fn steps(self) -> u64 {
        match self {
            Shape::OneDue => 20_000,
            Shape::AllDue => 2_000,
        }
    }
}

const SHAPES: [Shape; 2] = [Shape::OneDue, Shape::AllDue];

/// The sans-IO core alone: the coordinator and 20 participant cores.
fn run_core(shape: Shape) -> u64 {
    let mut coord = Coordinator::new(CoordinatorConfig::simulated()).expect("config");
    let until = shape.until();
    let mut parts: Vec<SimParticipant> = Vec::new();
    for (i, g) in shape.grids().into_iter().enumerate() {
        coord.register(&format!("p{i}")).expect("unique");
        parts.push(SimParticipant::new(g, Timestamp::EPOCH).expect("grid"));
    }
    let now = Timestamp::EPOCH;
    for (i, p) in parts.iter().enumerate() {
        let from = coord.lookup(&format!("p{i}")).expect("registered");
        let next = p.next().expect("first wake-up");
        coord
            .handle(Report::Ready { from, next }, now)
            .expect("known");
    }
    coord.start(now);
    while let Some(cmd) = coord.poll_command() {
        let Recipient::One(id) = cmd.to else { continue };
        let p = &mut parts[id.0 as usize];
        if let Action::Step(tick) = p.handle(cmd.signal) {
            black_box(tick);
            if tick.deadline >= until {
                coord.deregister(id, now).expect("known");
                continue;
            }
            let next = p.next().expect("next wake-up");
            coord
                .handle(Report::Ready { from: id, next }, now)
                .expect("known");
        }
    }
    coord.status().steps
}

/// The same over the in-process bus: a coordinator task and 20 participant
/// tasks exchanging ready reports and triggers through tokio channels.
fn run_bus(rt: &tokio::runtime::Runtime, shape: Shape) -> u64 {
    rt.block_on(async {
        let (bus, connector) = in_process_bus();
        let names: Vec<String> = (0..PARTICIPANTS).map(|i| format!("p{i}")).collect();
        let config = CoordinatorConfig::simulated().expect(names.iter().cloned());
        let coordinator = TimingCoordinator::spawn(config, bus, SystemClock).expect("config");
        let until = shape.until();
        let clock = SimClock::default();
        let mut tasks = Vec::new();
        for (name, g) in names.iter().zip(shape.grids()) {
            let mut link = connector.connect(name).expect("bus open");
            let clock = clock.clone();
            tasks.push(tokio::spawn(async move {
                let mut core = SimParticipant::new(g, Timestamp::EPOCH).expect("grid");
                let stop = StopSignal::new();
                run_simulated(
                    &mut link,
                    &mut core,
                    &clock,
                    &stop,
                    |t| {
                        if t >= until {
                            stop.stop();
                        }
                        black_box(t);
                    },
                    None,
                )
                .await
            }));
        }
        for t in tasks {
            t.await.expect("participant task");
        }
        let steps = coordinator.status().await.map_or(0, |s| s.steps);
        coordinator.stop();
        coordinator.join().await;
        steps
    })
}

#[divan::bench(args = SHAPES)]
fn core_20_participants(bencher: Bencher, shape: Shape) {
    assert_eq!(run_core(shape), shape.steps());
    bencher
        .counter(ItemsCount::new(shape.steps()))
        .bench_local(|| run_core(shape));
}

#[divan::bench(args = SHAPES)]
fn bus_20_participants(bencher: Bencher, shape: Shape) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    // Participants report once more after their last step, so the
    // coordinator takes one more step than the core loop does.
    let steps = run_bus(&rt, shape);
    assert_eq!(steps, shape.steps() + 1);
    bencher
        .counter(ItemsCount::new(steps))
        .bench_local(|| run_bus(&rt, shape));
}
