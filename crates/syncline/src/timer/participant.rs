//! The participant's async shell for simulated time: runs a
//! [`SimParticipant`] core over a [`ParticipantTransport`].

use std::time::Duration;

use super::sim_clock::SimClock;
use super::stop::StopSignal;
use super::transport::{Outbound, ParticipantTransport};
use syncline_core::Timestamp;
use syncline_core::timer::{Action, SimParticipant};

/// How often a participant repeats its first "ready" until the coordinator
/// answers (so a coordinator that starts later still sees it), and the
/// default heartbeat of a started real-time timer
/// ([`TimerConfig::heartbeat`](super::TimerConfig::heartbeat)).
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// Why a participant's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// [`StopSignal::stop`] was called locally.
    Stopped,
    /// The coordinator sent a stop signal.
    StopSignal,
    /// The coordinator is gone (the transport closed).
    CoordinatorGone,
}

/// Runs one participant in simulated time until it is stopped: reports its
/// first wake-up, then for every trigger due sets `clock` to the trigger's
/// time, calls `step(deadline)` and reports its next wake-up.
///
/// With `on_stop`, a stop signal from the coordinator calls it instead of
/// ending the run (CPM's behaviour); the run then ends when the coordinator
/// goes away or `stop` is raised.
///
/// ```
/// use syncline::core::timer::{CoordinatorConfig, Grid, SimParticipant};
/// use syncline::clock::SystemClock;
/// use syncline::timer::{Ended, SimClock, StopSignal, TimingCoordinator, in_process_bus, run_simulated};
/// use syncline::{TimeDelta, Timestamp};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (bus, connector) = in_process_bus();
/// let config = CoordinatorConfig::simulated().expect(["ctl"]);
/// let coordinator = TimingCoordinator::spawn(config, bus, SystemClock).unwrap();
/// let grid = Grid::new(TimeDelta::from_millis(10), TimeDelta::ZERO).unwrap();
/// let mut core = SimParticipant::new(grid, Timestamp::EPOCH).unwrap();
/// let mut link = connector.connect("ctl").unwrap();
/// let (clock, stop) = (SimClock::default(), StopSignal::new());
/// let mut seen = vec![];
/// let ended = run_simulated(&mut link, &mut core, &clock, &stop, |t| {
///     seen.push(t.as_nanos());
///     if seen.len() == 3 { stop.stop(); }
/// }, None).await;
/// assert_eq!(ended, Ended::Stopped);
/// assert_eq!(seen, [0, 10_000_000, 20_000_000]);
/// coordinator.stop();
/// # }
/// ```
pub async fn run_simulated<T: ParticipantTransport>(
    transport: &mut T,
    core: &mut SimParticipant,
    clock: &SimClock,
    stop: &StopSignal,
    mut step: impl FnMut(Timestamp),
    mut on_stop: Option<&mut (dyn FnMut() + Send)>,
) -> Ended {
    let report = |transport: &mut T, core: &SimParticipant| match core.next() {
        Some(next) => transport.send(Outbound::Ready(next)).is_ok(),
        None => true,
    };
    if !report(transport, core) {
        return Ended::CoordinatorGone;
    }
    let mut heard = false;
    let stopped = stop.stopped();
    tokio::pin!(stopped);
    loop {
        // The flag first (one atomic load): a local stop wins over a queued
        // trigger. The select then polls the transport first, so the stop
        // future (a mutex in `Notify`) is only polled when no signal waits.
        if stop.is_stopped() {
            return Ended::Stopped;
        }
        let heartbeat = async {
            if heard {
                std::future::pending::<()>().await
            } else {
                tokio::time::sleep(HEARTBEAT).await
            }
        };
        let signal = tokio::select! {
            biased;
            s = transport.recv() => s,
            () = &mut stopped => return Ended::Stopped,
            () = heartbeat => {
                if !report(transport, core) {
                    return Ended::CoordinatorGone;
                }
                continue;
            }
        };
        let Some(signal) = signal else {
            return Ended::CoordinatorGone;
        };
        heard = true;
        match core.handle(signal) {
            Action::Step(tick) => {
                if tick.missed > 0 {
                    tracing::warn!(
                        participant = transport.name(),
                        missed = tick.missed,
                        "timing: steps skipped"
                    );
                }
                clock.advance_to(tick.deadline);
                step(tick.deadline);
                if !report(transport, core) {
                    return Ended::CoordinatorGone;
                }
            }
            Action::Report => {
                if !report(transport, core) {
                    return Ended::CoordinatorGone;
                }
            }
            Action::Ignore => {}
            Action::Stop => match on_stop.as_mut() {
                Some(f) => f(),
                None => return Ended::StopSignal,
            },
        }
    }
}
