//! The timing coordinator (after CPM Lab's LCC `TimerTrigger`): participants
//! register, report "ready, next wake-up at t", and the coordinator starts
//! them (real time) or advances simulated time step by step, triggering
//! exactly the participants due at each step.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::time::{TimeDelta, Timestamp};

/// A registered participant, as the coordinator numbers them (dense, from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ParticipantId(pub u32);

impl ParticipantId {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// Whether the coordinator distributes a real-time start or drives
/// simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// Real time: on start, every participant gets the same start instant
    /// `now + start_delay` (latched: late joiners get it too) and runs its
    /// own grid on its own clock.
    RealTime {
        /// How far in the future the start instant lies (CPM uses 1 s).
        start_delay: TimeDelta,
    },
    /// Simulated time: the coordinator advances time to the smallest
    /// reported wake-up and triggers exactly the participants due then.
    Simulated,
}

/// A speed limit for simulated time: at most `sim` nanoseconds of
/// simulated time per `real` nanoseconds of the shell's clock (`sim: 10,
/// real: 1` = ten times faster than real time; `1, 1` = real-time pace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pace {
    /// Simulated nanoseconds...
    pub sim: u32,
    /// ...per this many nanoseconds of the shell's clock.
    pub real: u32,
}

/// Configuration of a [`Coordinator`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoordinatorConfig {
    /// Real time or simulated time.
    pub mode: Mode,
    /// Participants that must be ready before an automatic start. Empty:
    /// start only on [`Coordinator::start`].
    pub expected: Vec<String>,
    /// How long (in the shell's own time, the `now` passed in) a triggered
    /// participant may take to report again before it is declared
    /// unresponsive and no longer waited for. Must be positive.
    pub answer_timeout: TimeDelta,
    /// Real time, after the start: how long (shell time) a started
    /// participant may stay silent (no ready report or heartbeat) before it
    /// is reported ([`Event::Silent`]). Nothing waits for it either way.
    /// Must be positive; participants send a heartbeat every 2 s.
    pub heartbeat_timeout: TimeDelta,
    /// Simulated time: `None` runs as fast as the participants allow; a
    /// [`Pace`] holds each step until the shell's clock catches up.
    pub pace: Option<Pace>,
}

impl CoordinatorConfig {
    /// Simulated time, no expected participants, a 1 s answer timeout (and
    /// a 5 s heartbeat timeout, used only in real time).
    pub fn simulated() -> Self {
        CoordinatorConfig {
            mode: Mode::Simulated,
            expected: Vec::new(),
            answer_timeout: TimeDelta::from_secs(1),
            heartbeat_timeout: TimeDelta::from_secs(5),
            pace: None,
        }
    }

    /// Real time with the given start delay, no expected participants, a
    /// 5 s heartbeat timeout.
    pub fn real_time(start_delay: TimeDelta) -> Self {
        CoordinatorConfig {
            mode: Mode::RealTime { start_delay },
            ..Self::simulated()
        }
    }

    /// Sets the expected participants (automatic start once all are ready).
    pub fn expect<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.expected = names.into_iter().map(Into::into).collect();
        self
    }

    /// Limits the speed of simulated time (see [`Pace`]).
    pub fn pace(mut self, sim: u32, real: u32) -> Self {
        self.pace = Some(Pace { sim, real });
        self
    }

    /// Sets the answer timeout.
    pub fn answer_timeout(mut self, timeout: TimeDelta) -> Self {
        self.answer_timeout = timeout;
        self
    }

    /// Sets the heartbeat timeout (real time).
    pub fn heartbeat_timeout(mut self, timeout: TimeDelta) -> Self {
        self.heartbeat_timeout = timeout;
        self
    }
}

/// Errors of the coordinator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoordinatorError {
    /// A participant with this name is already registered.
    #[error("participant {0:?} is already registered")]
    Duplicate(String),
    /// A report named a participant that was never registered.
    #[error("unknown participant {0:?}")]
    UnknownParticipant(ParticipantId),
    /// A timeout is not positive, the start delay negative, or the pace
    /// zero.
    #[error("invalid coordinator configuration: {0}")]
    Config(&'static str),
    /// More participants than a `u32` can number.
    #[error("too many participants")]
    TooMany,
}

/// What a participant tells the coordinator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Report {
    /// "Ready; wake me at `next`." Before the start: "I exist and am
    /// initialised" (in simulated time `next` is its first wake-up). In
    /// simulated time after the start: "step done, next wake-up at `next`".
    Ready {
        /// Who reports.
        from: ParticipantId,
        /// Its next wake-up time (simulated time) or anything (real time).
        next: Timestamp,
    },
    /// "Stop everyone" (CPM's `StopRequest`).
    StopRequest {
        /// Who asks.
        from: ParticipantId,
    },
}

/// A signal from the coordinator to participants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Signal {
    /// Simulated time: run your step for exactly this time.
    Trigger(Timestamp),
    /// Real time: start your grid at the first grid point at or after this
    /// instant.
    Start(Timestamp),
    /// You reported a wake-up before the current simulated time: skip to
    /// your first grid point at or after this time and report it.
    Resync(Timestamp),
    /// Stop (an explicit variant, not a magic time value).
    Stop,
}

/// Who a [`Command`] is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Recipient {
    /// Every participant.
    All,
    /// One participant.
    One(ParticipantId),
}

/// An output of the coordinator: a signal the shell must deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    /// The addressee(s).
    pub to: Recipient,
    /// The signal.
    pub signal: Signal,
}

/// Something the shell should log or show; never needed for correctness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// The run started; `missing` expected participants were not ready.
    Started {
        /// Expected participants that had not reported ready.
        missing: usize,
    },
    /// A participant reported a wake-up before the current simulated time;
    /// it was sent [`Signal::Resync`] and is not waited for until it
    /// reports a time at or after the current one.
    OutOfSync {
        /// The participant.
        participant: ParticipantId,
        /// The time it reported.
        reported: Timestamp,
        /// The current simulated time.
        current: Timestamp,
    },
    /// A report earlier than the participant's previous one, but not in
    /// the past: a duplicate or reordered message, ignored.
    StaleReport {
        /// The participant.
        participant: ParticipantId,
        /// The time it reported.
        reported: Timestamp,
    },
    /// A triggered participant did not report within the answer timeout;
    /// time goes on without it.
    Unresponsive {
        /// The participant.
        participant: ParticipantId,
        /// When it was triggered (shell time).
        triggered_at: Timestamp,
    },
    /// Real time: a started participant sent nothing (no ready report, no
    /// heartbeat) within the heartbeat timeout. It is marked unresponsive;
    /// nothing waits for it.
    Silent {
        /// The participant.
        participant: ParticipantId,
        /// When it was last heard of (shell time).
        last_heard: Timestamp,
    },
    /// A participant that was unresponsive or out of sync reported again.
    Recovered {
        /// The participant.
        participant: ParticipantId,
    },
    /// A participant asked to stop everyone.
    StopRequested {
        /// The participant.
        participant: ParticipantId,
    },
    /// The run stopped.
    Stopped,
}

/// The run's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Waiting for participants (and for the start).
    Registering,
    /// Started.
    Running,
    /// Stopped (late reports are answered with [`Signal::Stop`]).
    Stopped,
}

/// What the coordinator knows about one participant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParticipantState {
    /// Registered, no report yet: not waited for.
    Registered,
    /// Reported ready before the start.
    Ready,
    /// Real time: started.
    RealTime,
    /// Simulated time: waiting for its next wake-up (later than now).
    Waiting,
    /// Simulated time: triggered for the current time, not yet reported.
    Working,
    /// Reported a time in the past; resync sent.
    OutOfSync,
    /// Did not answer within the answer timeout (simulated time) or was
    /// silent longer than the heartbeat timeout (real time).
    Unresponsive,
    /// Deregistered.
    Left,
}

#[derive(Debug, Clone)]
struct Participant {
    name: String,
    state: ParticipantState,
    next: Option<Timestamp>,
    last_heard: Option<Timestamp>,
    triggered_at: Timestamp,
}

/// One participant in [`CoordinatorStatus`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParticipantStatus {
    /// Its name.
    pub name: String,
    /// Its state.
    pub state: ParticipantState,
    /// Its last reported wake-up.
    pub next: Option<Timestamp>,
    /// When it was last heard of (shell time).
    pub last_heard: Option<Timestamp>,
}

/// A snapshot of the coordinator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoordinatorStatus {
    /// The phase.
    pub phase: Phase,
    /// The mode.
    pub mode: Mode,
    /// Simulated time: the current time (`None` before the first step).
    pub current: Option<Timestamp>,
    /// Real time: the start instant distributed.
    pub start_at: Option<Timestamp>,
    /// Simulated steps taken.
    pub steps: u64,
    /// Triggers sent.
    pub triggers: u64,
    /// Out-of-sync reports.
    pub out_of_sync: u64,
    /// Stale reports ignored.
    pub stale: u64,
    /// Participants declared unresponsive (cumulative).
    pub unresponsive: u64,
    /// Events dropped because the shell did not drain them.
    pub events_dropped: u64,
    /// Expected participants not (yet) ready.
    pub missing: Vec<String>,
    /// Every registered participant.
    pub participants: Vec<ParticipantStatus>,
}

const EVENT_CAPACITY: usize = 1024;

/// The coordinator state machine (sans-IO).
///
/// Inputs: [`register`](Self::register), [`handle`](Self::handle) (a
/// [`Report`] and the shell's `now`), [`start`](Self::start),
/// [`stop`](Self::stop), [`handle_timeout`](Self::handle_timeout).
/// Outputs: drain [`poll_command`](Self::poll_command) (signals to deliver)
/// and [`poll_event`](Self::poll_event) (things to log) until `None` after
/// every input; arm one timer at [`poll_timeout`](Self::poll_timeout).
///
/// In simulated time the coordinator advances to the smallest wake-up
/// reported by any participant, triggers exactly the participants due then,
/// and advances again once each of them has reported its next wake-up.
///
/// ```
/// use syncline_core::timer::{Command, Coordinator, CoordinatorConfig, Recipient, Report, Signal};
/// use syncline_core::Timestamp;
///
/// let mut c = Coordinator::new(CoordinatorConfig::simulated()).unwrap();
/// let fast = c.register("fast").unwrap();
/// let slow = c.register("slow").unwrap();
/// let now = Timestamp::EPOCH; // the shell's own clock; only used for timeouts
/// c.handle(Report::Ready { from: fast, next: Timestamp::from_nanos(0) }, now).unwrap();
/// c.handle(Report::Ready { from: slow, next: Timestamp::from_nanos(0) }, now).unwrap();
/// c.start(now);
/// let mut out = vec![];
/// while let Some(cmd) = c.poll_command() { out.push(cmd); }
/// assert_eq!(out.len(), 2); // both due at t = 0
/// c.handle(Report::Ready { from: fast, next: Timestamp::from_nanos(10) }, now).unwrap();
/// assert_eq!(c.poll_command(), None); // still waiting for `slow`
/// c.handle(Report::Ready { from: slow, next: Timestamp::from_nanos(20) }, now).unwrap();
/// assert_eq!(
///     c.poll_command(),
///     Some(Command { to: Recipient::One(fast), signal: Signal::Trigger(Timestamp::from_nanos(10)) })
/// );
/// ```
#[derive(Debug, Clone)]
pub struct Coordinator {
    config: CoordinatorConfig,
    phase: Phase,
    participants: Vec<Participant>,
    by_name: HashMap<String, ParticipantId>,
    current: Option<Timestamp>,
    start_at: Option<Timestamp>,
    working: usize,
    /// Pace: (shell time, simulated time) of the first step.
    pace_origin: Option<(Timestamp, Timestamp)>,
    /// Pace: the shell time at which the held next step may be taken.
    held_until: Option<Timestamp>,
    commands: VecDeque<Command>,
    events: VecDeque<Event>,
    steps: u64,
    triggers: u64,
    out_of_sync: u64,
    stale: u64,
    unresponsive: u64,
    events_dropped: u64,
}

impl Coordinator {
    /// A coordinator, or [`CoordinatorError::Config`] for a non-positive
    /// answer timeout or a negative start delay.
    pub fn new(config: CoordinatorConfig) -> Result<Self, CoordinatorError> {
        if !config.answer_timeout.is_positive() {
            return Err(CoordinatorError::Config("answer_timeout must be positive"));
        }
        if !config.heartbeat_timeout.is_positive() {
            return Err(CoordinatorError::Config(
                "heartbeat_timeout must be positive",
            ));
        }
        if let Mode::RealTime { start_delay } = config.mode
            && start_delay.is_negative()
        {
            return Err(CoordinatorError::Config("start_delay must not be negative"));
        }
        if config.pace.is_some_and(|p| p.sim == 0 || p.real == 0) {
            return Err(CoordinatorError::Config("pace must be positive"));
        }
        Ok(Coordinator {
            config,
            phase: Phase::Registering,
            participants: Vec::new(),
            by_name: HashMap::new(),
            current: None,
            start_at: None,
            working: 0,
            pace_origin: None,
            held_until: None,
            commands: VecDeque::with_capacity(64),
            events: VecDeque::with_capacity(16),
            steps: 0,
            triggers: 0,
            out_of_sync: 0,
            stale: 0,
            unresponsive: 0,
            events_dropped: 0,
        })
    }

    /// Registers a participant by name. A name already registered is
    /// [`CoordinatorError::Duplicate`], unless that participant has left, in
    /// which case it rejoins under its old id. Registering after the start
    /// is allowed (a late joiner); after a stop, the joiner is told to stop.
    pub fn register(&mut self, name: &str) -> Result<ParticipantId, CoordinatorError> {
        if let Some(&id) = self.by_name.get(name) {
            let p = &mut self.participants[id.index()];
            if p.state != ParticipantState::Left {
                return Err(CoordinatorError::Duplicate(name.to_string()));
            }
            p.state = ParticipantState::Registered;
            p.next = None;
            self.after_register(id);
            return Ok(id);
        }
        let id = ParticipantId(
            u32::try_from(self.participants.len()).map_err(|_| CoordinatorError::TooMany)?,
        );
        self.participants.push(Participant {
            name: name.to_string(),
            state: ParticipantState::Registered,
            next: None,
            last_heard: None,
            triggered_at: Timestamp::EPOCH,
        });
        self.by_name.insert(name.to_string(), id);
        self.after_register(id);
        Ok(id)
    }

    fn after_register(&mut self, id: ParticipantId) {
        if self.phase == Phase::Stopped {
            self.command(Recipient::One(id), Signal::Stop);
        }
    }

    /// Removes a participant (it will not be waited for any more).
    pub fn deregister(
        &mut self,
        id: ParticipantId,
        now: Timestamp,
    ) -> Result<(), CoordinatorError> {
        let p = self.participant_mut(id)?;
        let was_working = p.state == ParticipantState::Working;
        p.state = ParticipantState::Left;
        if was_working {
            self.working = self.working.saturating_sub(1);
        }
        self.maybe_advance(now);
        Ok(())
    }

    /// The id registered under `name`.
    pub fn lookup(&self, name: &str) -> Option<ParticipantId> {
        self.by_name.get(name).copied()
    }

    /// The name of participant `id`.
    pub fn name(&self, id: ParticipantId) -> Option<&str> {
        self.participants.get(id.index()).map(|p| p.name.as_str())
    }

    fn participant_mut(&mut self, id: ParticipantId) -> Result<&mut Participant, CoordinatorError> {
        self.participants
            .get_mut(id.index())
            .ok_or(CoordinatorError::UnknownParticipant(id))
    }

    fn command(&mut self, to: Recipient, signal: Signal) {
        if let Signal::Trigger(_) = signal {
            self.triggers = self.triggers.saturating_add(1);
        }
        self.commands.push_back(Command { to, signal });
    }

    fn event(&mut self, e: Event) {
        if self.events.len() >= EVENT_CAPACITY {
            self.events_dropped = self.events_dropped.saturating_add(1);
        } else {
            self.events.push_back(e);
        }
    }

    /// A participant's report at shell time `now`.
    pub fn handle(&mut self, report: Report, now: Timestamp) -> Result<(), CoordinatorError> {
        let (from, next) = match report {
            Report::StopRequest { from } => {
                self.participant_mut(from)?.last_heard = Some(now);
                self.event(Event::StopRequested { participant: from });
                self.stop();
                return Ok(());
            }
            Report::Ready { from, next } => (from, next),
        };
        let phase = self.phase;
        let mode = self.config.mode;
        let current = self.current;
        let p = self.participant_mut(from)?;
        p.last_heard = Some(now);
        let previous = p.state;
        if matches!(
            previous,
            ParticipantState::Unresponsive | ParticipantState::OutOfSync
        ) {
            self.event(Event::Recovered { participant: from });
        }
        match (phase, mode) {
            (Phase::Stopped, _) => self.command(Recipient::One(from), Signal::Stop),
            (Phase::Registering, _) => {
                let p = &mut self.participants[from.index()];
                p.next = Some(next);
                p.state = ParticipantState::Ready;
                if !self.config.expected.is_empty() && self.missing().next().is_none() {
                    self.start(now);
                }
            }
            (Phase::Running, Mode::RealTime { .. }) => {
                let p = &mut self.participants[from.index()];
                p.next = Some(next);
                if p.state != ParticipantState::RealTime {
                    p.state = ParticipantState::RealTime;
                    if let Some(at) = self.start_at {
                        self.command(Recipient::One(from), Signal::Start(at));
                    }
                }
            }
            (Phase::Running, Mode::Simulated) => self.handle_simulated(from, next, current, now),
        }
        Ok(())
    }

    fn handle_simulated(
        &mut self,
        from: ParticipantId,
        next: Timestamp,
        current: Option<Timestamp>,
        now: Timestamp,
    ) {
        let p = &mut self.participants[from.index()];
        let was_working = p.state == ParticipantState::Working;
        let Some(current) = current else {
            // Started with nobody ready: the first report sets the pace.
            p.next = Some(next);
            p.state = ParticipantState::Waiting;
            self.maybe_advance(now);
            return;
        };
        let in_line = matches!(
            p.state,
            ParticipantState::Waiting | ParticipantState::Working
        );
        if next < current {
            p.state = ParticipantState::OutOfSync;
            p.next = Some(next);
            if was_working {
                self.working = self.working.saturating_sub(1);
            }
            self.out_of_sync = self.out_of_sync.saturating_add(1);
            self.event(Event::OutOfSync {
                participant: from,
                reported: next,
                current,
            });
            self.command(Recipient::One(from), Signal::Resync(current));
        } else if in_line && !was_working && p.next.is_some_and(|stored| next < stored) {
            self.stale = self.stale.saturating_add(1);
            self.event(Event::StaleReport {
                participant: from,
                reported: next,
            });
            return;
        } else if next == current {
            if !was_working {
                p.state = ParticipantState::Working;
                p.next = Some(next);
                p.triggered_at = now;
                self.working += 1;
                self.command(Recipient::One(from), Signal::Trigger(current));
            }
            return;
        } else {
            p.state = ParticipantState::Waiting;
            p.next = Some(next);
            if was_working {
                self.working = self.working.saturating_sub(1);
            }
        }
        self.maybe_advance(now);
    }

    /// Starts the run now, with whoever is ready (expected participants
    /// that are not ready are counted in [`Event::Started`]). Real time: all
    /// participants get [`Signal::Start`] at `now + start_delay`. Simulated
    /// time: the first step is triggered. Does nothing unless registering.
    pub fn start(&mut self, now: Timestamp) {
        if self.phase != Phase::Registering {
            return;
        }
        self.phase = Phase::Running;
        let missing = self.missing().count();
        self.event(Event::Started { missing });
        match self.config.mode {
            Mode::RealTime { start_delay } => {
                let at = now.saturating_add(start_delay);
                self.start_at = Some(at);
                for p in &mut self.participants {
                    if p.state == ParticipantState::Ready {
                        p.state = ParticipantState::RealTime;
                    }
                }
                self.command(Recipient::All, Signal::Start(at));
            }
            Mode::Simulated => {
                for p in &mut self.participants {
                    if p.state == ParticipantState::Ready {
                        p.state = ParticipantState::Waiting;
                    }
                }
                self.maybe_advance(now);
            }
        }
    }

    /// Stops the run: every participant gets [`Signal::Stop`] (and so does
    /// anyone who reports later). Idempotent.
    pub fn stop(&mut self) {
        if self.phase == Phase::Stopped {
            return;
        }
        self.phase = Phase::Stopped;
        self.working = 0;
        self.held_until = None;
        for p in &mut self.participants {
            if p.state == ParticipantState::Working {
                p.state = ParticipantState::Waiting;
            }
        }
        self.command(Recipient::All, Signal::Stop);
        self.event(Event::Stopped);
    }

    fn maybe_advance(&mut self, now: Timestamp) {
        if self.phase != Phase::Running || self.config.mode != Mode::Simulated || self.working > 0 {
            return;
        }
        let min = self
            .participants
            .iter()
            .filter(|p| p.state == ParticipantState::Waiting)
            .filter_map(|p| p.next)
            .min();
        let Some(min) = min else { return };
        if let Some(pace) = self.config.pace {
            let (wall0, sim0) = *self.pace_origin.get_or_insert((now, min));
            let sim_elapsed = min.nanos_since_wide(sim0);
            let wall =
                wall0.as_nanos() as i128 + sim_elapsed * pace.real as i128 / pace.sim as i128;
            let due = Timestamp::from_nanos(wall.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
            if now < due {
                self.held_until = Some(due);
                return;
            }
        }
        self.held_until = None;
        self.current = Some(min);
        self.steps = self.steps.saturating_add(1);
        for i in 0..self.participants.len() {
            let p = &mut self.participants[i];
            if p.state == ParticipantState::Waiting && p.next == Some(min) {
                p.state = ParticipantState::Working;
                p.triggered_at = now;
                self.working += 1;
                self.triggers = self.triggers.saturating_add(1);
                self.commands.push_back(Command {
                    to: Recipient::One(ParticipantId(i as u32)),
                    signal: Signal::Trigger(min),
                });
            }
        }
    }

    /// The next signal to deliver; call until `None` after every input.
    pub fn poll_command(&mut self) -> Option<Command> {
        self.commands.pop_front()
    }

    /// The next event to log; call until `None` after every input (at most
    /// 1024 are kept; more are counted in `events_dropped`).
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When the shell must call [`handle_timeout`](Self::handle_timeout):
    /// the earliest answer deadline of a triggered participant, or (with a
    /// [`Pace`]) the instant the next step is due; in real time after the
    /// start, the instant the first started participant's heartbeat
    /// timeout ends.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        if let (Phase::Running, Mode::RealTime { .. }) = (self.phase, self.config.mode) {
            return self
                .participants
                .iter()
                .filter(|p| p.state == ParticipantState::RealTime)
                .filter_map(|p| p.last_heard)
                .min()
                .map(|t| t.saturating_add(self.config.heartbeat_timeout));
        }
        if self.working == 0 {
            return self.held_until.filter(|_| self.phase == Phase::Running);
        }
        self.participants
            .iter()
            .filter(|p| p.state == ParticipantState::Working)
            .map(|p| p.triggered_at.saturating_add(self.config.answer_timeout))
            .min()
    }

    /// The shell's timer fired at `now`: participants that have not
    /// answered within the answer timeout are declared unresponsive (an
    /// [`Event::Unresponsive`]) and time goes on without them. In real
    /// time, started participants silent for the heartbeat timeout are
    /// marked unresponsive ([`Event::Silent`]).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if let (Phase::Running, Mode::RealTime { .. }) = (self.phase, self.config.mode) {
            self.detect_silent(now);
            return;
        }
        if self.working == 0 {
            self.maybe_advance(now);
            return;
        }
        let timeout = self.config.answer_timeout;
        for i in 0..self.participants.len() {
            let p = &mut self.participants[i];
            if p.state == ParticipantState::Working && p.triggered_at.saturating_add(timeout) <= now
            {
                p.state = ParticipantState::Unresponsive;
                let triggered_at = p.triggered_at;
                self.working = self.working.saturating_sub(1);
                self.unresponsive = self.unresponsive.saturating_add(1);
                self.event(Event::Unresponsive {
                    participant: ParticipantId(i as u32),
                    triggered_at,
                });
            }
        }
        self.maybe_advance(now);
    }

    fn detect_silent(&mut self, now: Timestamp) {
        let timeout = self.config.heartbeat_timeout;
        for i in 0..self.participants.len() {
            let p = &mut self.participants[i];
            let Some(last_heard) = p.last_heard else {
                continue;
            };
            if p.state == ParticipantState::RealTime && last_heard.saturating_add(timeout) <= now {
                p.state = ParticipantState::Unresponsive;
                self.unresponsive = self.unresponsive.saturating_add(1);
                self.event(Event::Silent {
                    participant: ParticipantId(i as u32),
                    last_heard,
                });
            }
        }
    }

    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Simulated time: the current time (`None` before the first step).
    pub fn current(&self) -> Option<Timestamp> {
        self.current
    }

    fn missing(&self) -> impl Iterator<Item = &String> {
        self.config.expected.iter().filter(|name| {
            self.lookup(name).is_none_or(|id| {
                matches!(
                    self.participants[id.index()].state,
                    ParticipantState::Registered | ParticipantState::Left
                )
            })
        })
    }

    /// A snapshot (allocates; meant for status displays, not per step).
    pub fn status(&self) -> CoordinatorStatus {
        CoordinatorStatus {
            phase: self.phase,
            mode: self.config.mode,
            current: self.current,
            start_at: self.start_at,
            steps: self.steps,
            triggers: self.triggers,
            out_of_sync: self.out_of_sync,
            stale: self.stale,
            unresponsive: self.unresponsive,
            events_dropped: self.events_dropped,
            missing: self.missing().cloned().collect(),
            participants: self
                .participants
                .iter()
                .map(|p| ParticipantStatus {
                    name: p.name.clone(),
                    state: p.state,
                    next: p.next,
                    last_heard: p.last_heard,
                })
                .collect(),
        }
    }
}
