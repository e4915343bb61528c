//! The coordinator's async shell: drives a [`Coordinator`] core over a
//! [`CoordinatorTransport`], event-driven (no polling, no debounce sleeps).

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::transport::{CoordinatorTransport, Inbound, PeerKey};
use crate::clock::{Clock, ClockSleep};
use syncline_core::Timestamp;
use syncline_core::timer::{
    Coordinator, CoordinatorConfig, CoordinatorError, CoordinatorStatus, Event, ParticipantId,
    Phase, Recipient, Report,
};

enum Control {
    Start,
    Stop,
    Status(oneshot::Sender<CoordinatorStatus>),
}

/// A timing coordinator running as a tokio task.
///
/// ```
/// use syncline::clock::SystemClock;
/// use syncline::core::timer::CoordinatorConfig;
/// use syncline::timer::{TimingCoordinator, in_process_bus};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (bus, _connector) = in_process_bus();
/// let coordinator = TimingCoordinator::spawn(CoordinatorConfig::simulated(), bus, SystemClock).unwrap();
/// coordinator.stop();
/// let status = coordinator.join().await.unwrap();
/// assert_eq!(status.phase, syncline::core::timer::Phase::Stopped);
/// # }
/// ```
#[derive(Debug)]
pub struct TimingCoordinator {
    ctrl: mpsc::UnboundedSender<Control>,
    task: JoinHandle<CoordinatorStatus>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Control::Start => "Start",
            Control::Stop => "Stop",
            Control::Status(_) => "Status",
        })
    }
}

impl TimingCoordinator {
    /// Spawns the coordinator on the current tokio runtime. `clock` is the
    /// coordinator's own clock, used only for the answer timeout (it is not
    /// simulated time).
    pub fn spawn<T: CoordinatorTransport, C: Clock>(
        config: CoordinatorConfig,
        transport: T,
        clock: C,
    ) -> Result<Self, CoordinatorError> {
        let core = Coordinator::new(config)?;
        let (ctrl, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(drive(core, transport, clock, rx));
        Ok(TimingCoordinator { ctrl, task })
    }

    /// Starts the run (with whoever is ready).
    pub fn start(&self) {
        let _ = self.ctrl.send(Control::Start);
    }

    /// Stops the run: every participant gets a stop signal, then the
    /// coordinator ends.
    pub fn stop(&self) {
        let _ = self.ctrl.send(Control::Stop);
    }

    /// The coordinator's status, or `None` once it has ended.
    pub async fn status(&self) -> Option<CoordinatorStatus> {
        let (tx, rx) = oneshot::channel();
        self.ctrl.send(Control::Status(tx)).ok()?;
        rx.await.ok()
    }

    /// Waits until the coordinator ends (after a stop, or when every
    /// participant and connector is gone) and returns its final status;
    /// `None` if its task was cancelled (its runtime shut down).
    pub async fn join(self) -> Option<CoordinatorStatus> {
        drop(self.ctrl);
        match self.task.await {
            Ok(status) => Some(status),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => None,
        }
    }
}

fn log_event(core: &Coordinator, e: Event) {
    let name = |id| core.name(id).unwrap_or("?").to_string();
    match e {
        Event::Started { missing } => tracing::info!(missing, "timing: started"),
        Event::OutOfSync {
            participant,
            reported,
            current,
        } => tracing::warn!(
            participant = name(participant),
            %reported,
            %current,
            "timing: participant out of sync, resync sent"
        ),
        Event::StaleReport {
            participant,
            reported,
        } => {
            tracing::debug!(participant = name(participant), %reported, "timing: stale report ignored")
        }
        Event::Unresponsive {
            participant,
            triggered_at,
        } => tracing::warn!(
            participant = name(participant),
            %triggered_at,
            "timing: participant unresponsive, no longer waited for"
        ),
        Event::Silent {
            participant,
            last_heard,
        } => tracing::warn!(
            participant = name(participant),
            %last_heard,
            "timing: participant silent (no heartbeat), marked unresponsive"
        ),
        Event::Recovered { participant } => {
            tracing::info!(participant = name(participant), "timing: participant back")
        }
        Event::StopRequested { participant } => {
            tracing::info!(participant = name(participant), "timing: stop requested")
        }
        Event::Stopped => tracing::info!("timing: stopped"),
    }
}

/// The largest [`PeerKey`] the driver accepts (its table is indexed by key).
const MAX_PEER_KEY: u32 = 1 << 20;

/// Transport connections <-> coordinator participants (both directions are
/// table lookups: no name hashing per message).
#[derive(Default)]
struct Peers {
    by_key: Vec<Option<ParticipantId>>,
    by_id: Vec<Option<PeerKey>>,
}

impl Peers {
    fn id(&self, key: PeerKey) -> Option<ParticipantId> {
        self.by_key.get(key.0 as usize).copied().flatten()
    }

    fn key(&self, id: ParticipantId) -> Option<PeerKey> {
        self.by_id.get(id.0 as usize).copied().flatten()
    }

    fn link(&mut self, key: PeerKey, id: ParticipantId) {
        let (k, i) = (key.0 as usize, id.0 as usize);
        if self.by_key.len() <= k {
            self.by_key.resize(k + 1, None);
        }
        if self.by_id.len() <= i {
            self.by_id.resize(i + 1, None);
        }
        self.by_key[k] = Some(id);
        self.by_id[i] = Some(key);
    }

    fn unlink(&mut self, key: PeerKey) -> Option<ParticipantId> {
        let id = self.by_key.get_mut(key.0 as usize)?.take()?;
        if let Some(k) = self.by_id.get_mut(id.0 as usize) {
            *k = None;
        }
        Some(id)
    }
}

fn flush<T: CoordinatorTransport>(core: &mut Coordinator, peers: &Peers, transport: &mut T) {
    let signals = std::iter::from_fn(|| {
        loop {
            let cmd = core.poll_command()?;
            match cmd.to {
                Recipient::All => return Some((None, cmd.signal)),
                // A participant that left needs no signal.
                Recipient::One(id) => {
                    if let Some(key) = peers.key(id) {
                        return Some((Some(key), cmd.signal));
                    }
                }
            }
        }
    });
    let failed = transport.send_all(signals);
    if failed > 0 {
        tracing::debug!(failed, "timing: signals for participants that are gone");
    }
    while let Some(e) = core.poll_event() {
        log_event(core, e);
    }
}

fn handle_inbound(core: &mut Coordinator, peers: &mut Peers, msg: Inbound, now: Timestamp) {
    let result = match msg {
        Inbound::Join { peer, name } if peer.0 < MAX_PEER_KEY => {
            core.register(&name).map(|id| peers.link(peer, id))
        }
        Inbound::Join { peer, name } => {
            tracing::warn!(%name, key = peer.0, "timing: peer key too large, participant ignored");
            Ok(())
        }
        Inbound::Ready { peer, next } => match peers.id(peer) {
            Some(from) => core.handle(Report::Ready { from, next }, now),
            None => {
                tracing::warn!(
                    key = peer.0,
                    "timing: report from an unregistered participant"
                );
                Ok(())
            }
        },
        Inbound::StopRequest(peer) => match peers.id(peer) {
            Some(from) => core.handle(Report::StopRequest { from }, now),
            None => {
                core.stop();
                Ok(())
            }
        },
        Inbound::Leave(peer) => match peers.unlink(peer) {
            Some(id) => core.deregister(id, now),
            None => Ok(()),
        },
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, "timing: bad participant message");
    }
}

async fn drive<T: CoordinatorTransport, C: Clock>(
    mut core: Coordinator,
    mut transport: T,
    clock: C,
    mut ctrl: mpsc::UnboundedReceiver<Control>,
) -> CoordinatorStatus {
    // The armed answer-timeout sleep; re-armed only when the core wants an
    // earlier wake-up (a later one is checked when this one fires).
    let mut armed: Option<(Timestamp, ClockSleep)> = None;
    let mut ctrl_open = true;
    let mut peers = Peers::default();
    loop {
        flush(&mut core, &peers, &mut transport);
        if core.phase() == Phase::Stopped {
            break;
        }
        match core.poll_timeout() {
            None => armed = None,
            Some(t) if armed.as_ref().is_none_or(|(at, _)| t < *at) => {
                armed = Some((t, clock.sleep_until(t)));
            }
            Some(_) => {}
        }
        let timer = async {
            match armed.as_mut() {
                Some((_, sleep)) => sleep.await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            c = ctrl.recv(), if ctrl_open => match c {
                Some(Control::Start) => core.start(clock.now()),
                Some(Control::Stop) => core.stop(),
                Some(Control::Status(tx)) => drop(tx.send(core.status())),
                None => ctrl_open = false,
            },
            m = transport.recv() => match m {
                Some(m) => {
                    // Take whatever else is already queued in the same
                    // pass (one clock read, one select per batch).
                    let now = clock.now();
                    handle_inbound(&mut core, &mut peers, m, now);
                    while let Some(m) = transport.try_recv() {
                        handle_inbound(&mut core, &mut peers, m, now);
                        flush(&mut core, &peers, &mut transport);
                    }
                }
                None => break,
            },
            () = timer => {
                armed = None;
                core.handle_timeout(clock.now());
            }
        }
    }
    core.status()
}
