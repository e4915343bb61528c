//! The async stream aligner: several `Stream`s of [`Stamped<T>`] with
//! different `T` in, one globally timestamp-ordered flow out.
//!
//! It drives the sans-IO core [`syncline_core::aligner::Aligner`] (the rules
//! are documented there and in `docs/order.md`): it polls the inputs, pushes
//! every sample into the core, arms **one** timer (through a [`Clock`]) for
//! the core's next deadline, and delivers released samples in order.
//!
//! Two ways out:
//!
//! * [`AlignerBuilder`] → [`Aligned`]: a `Stream` of your own enum over the
//!   inputs' types (each input is registered with the enum variant that
//!   wraps it).
//! * [`SynclineExt::aligned`](crate::SynclineExt::aligned) on a tuple of 1
//!   to 8 inputs, `(imu, lidar, camera).aligned(config, (imu_cfg, lidar_cfg,
//!   camera_cfg))`: the same [`Aligned`] stream, of a library enum
//!   ([`OneOf3`] here, variants `A`, `B`, `C` in tuple order), or on a `Vec`
//!   of inputs of one type ([`OneOfN`]);
//!   [`aligned_live`](crate::SynclineExt::aligned_live) takes a clock. They
//!   cannot fail: every [`StreamConfig`] was checked when it was built.
//! * [`FanOutBuilder`] → [`FanOut`]: a future that delivers each input's
//!   samples into its own bounded, typed tokio `mpsc` channel, to be consumed
//!   by tasks spawned on the runtime. A slow consumer slows the aligner
//!   (bounded memory); a consumer that is gone is reported in the status and
//!   in `tracing`, never a panic.
//!
//! **Replay vs live.** Without a clock only the core's sample-time rule
//! applies (use it on recordings). With [`AlignerBuilder::live`] no sample
//! waits longer than the timeout after its arrival, even if every input
//! goes silent. The arrival is the hand-over time an input's item carries
//! ([`Arrived<Stamped<T>>`](crate::source::Arrived), from a
//! [`crate::source`]: [`AlignerItem`]), else the clock's reading when the
//! aligner takes the sample in.
//!
//! ```
//! use futures::StreamExt;
//! use syncline::aligner::{AlignerBuilder, AlignerConfig, StreamConfig};
//! use syncline::{Stamped, TimeDelta, Timestamp};
//!
//! #[derive(Debug, PartialEq)]
//! enum Sensor {
//!     Imu(Stamped<u32>),
//!     Gps(Stamped<&'static str>),
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() -> Result<(), syncline::aligner::AlignerError> {
//! let t = |ms: i64| Timestamp::from_nanos(ms * 1_000_000);
//! let imu = futures::stream::iter([Stamped::new(t(0), 1), Stamped::new(t(10), 2), Stamped::new(t(20), 3)]);
//! let gps = futures::stream::iter([Stamped::new(t(5), "fix")]);
//!
//! let mut builder = AlignerBuilder::new(AlignerConfig { timeout: TimeDelta::from_millis(100) });
//! builder.stream("imu", imu, StreamConfig::new(TimeDelta::from_millis(10))?, Sensor::Imu);
//! builder.stream("gps", gps, StreamConfig::new(TimeDelta::from_millis(100))?, Sensor::Gps);
//! let out: Vec<Sensor> = builder.aligned().collect().await;
//! assert_eq!(out, [
//!     Sensor::Imu(Stamped::new(t(0), 1)),
//!     Sensor::Gps(Stamped::new(t(5), "fix")),
//!     Sensor::Imu(Stamped::new(t(10), 2)),
//!     Sensor::Imu(Stamped::new(t(20), 3)),
//! ]);
//! # Ok(())
//! # }
//! ```

mod consumer;
mod control;
mod engine;
mod lane;
mod router;
#[cfg(test)]
mod router_tests;
#[cfg(test)]
mod tests;
mod tuple;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use serde::Serialize;
use tokio::sync::{mpsc, watch};

use syncline_core::aligner::Aligner;
pub use syncline_core::aligner::{
    AlignerConfig, AlignerError, AlignerStatus, StreamConfig, StreamId, StreamStatus,
};
use syncline_core::{Stamped, Timestamp};

use crate::clock::Clock;
pub use consumer::{Consumer, ConsumerStatus, DropKind, DropReport, QueuePolicy};
pub use control::{AlignerControl, ControlError};
use engine::Engine;
pub use lane::AlignerItem;
use lane::{Channel, Lane, QueueLane, Wrap};
pub use router::{ConsumerBuilder, InputId, Router, RouterBuilder};
pub use tuple::{
    AlignInputs, OneOf1, OneOf2, OneOf3, OneOf4, OneOf5, OneOf6, OneOf7, OneOf8, OneOfN, aligned,
    aligned_live,
};

/// The status of a running [`Aligned`] or [`FanOut`], published on a
/// `watch` channel (every 1024 events, whenever the driver waits after a
/// change, and at the end) and available on demand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AlignedStatus {
    /// The core's counters (latency, per-stream received / released /
    /// dropped / queued, ...), streams in registration order.
    pub aligner: AlignerStatus,
    /// Per input, in registration order: its name and delivery problems.
    pub lanes: Vec<LaneStatus>,
    /// Per consumer of a [`Router`], in declaration order (empty for
    /// [`Aligned`] and [`FanOut`]).
    pub consumers: Vec<ConsumerStatus>,
    /// Drop reports that found the report channel full (counted, not sent).
    pub reports_lost: u64,
    /// Every input ended and everything was released.
    pub finished: bool,
}

/// Delivery status of one input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LaneStatus {
    /// The name given at registration.
    pub name: String,
    /// Released samples that could not be delivered (consumer gone).
    pub undelivered: u64,
    /// Whether the consumer (channel receiver) was dropped.
    pub consumer_gone: bool,
}

/// The common part of both builders.
struct Parts<O> {
    core: Aligner<()>,
    ids: Vec<StreamId>,
    lanes: Vec<Box<dyn Lane<O>>>,
    names: Vec<String>,
    clock: Option<Arc<dyn Clock>>,
}

impl<O> Parts<O> {
    fn new(config: AlignerConfig) -> Self {
        Parts {
            core: Aligner::new(config),
            ids: Vec::new(),
            lanes: Vec::new(),
            names: Vec::new(),
            clock: None,
        }
    }

    fn add(
        &mut self,
        name: &str,
        config: StreamConfig,
        lane: impl FnOnce(usize) -> Box<dyn Lane<O>>,
    ) -> StreamId {
        let id = self.core.add_stream(config);
        self.ids.push(id);
        self.lanes
            .push(lane(config.capacity_for(self.core.timeout())));
        self.names.push(name.to_string());
        id
    }

    fn engine(self) -> Engine<O> {
        Engine::new(self.core, self.ids, self.lanes, self.names, self.clock)
    }
}

/// Builds an [`Aligned`] stream of `E`, an enum over the inputs' types.
///
/// Register each input with [`stream`](Self::stream), giving the function
/// (typically an enum variant such as `Sensor::Imu`) that wraps its samples
/// into `E`. See the [module docs](self) for an example.
pub struct AlignerBuilder<E> {
    parts: Parts<E>,
}

impl<E: Send + 'static> AlignerBuilder<E> {
    /// A builder with the aligner's timeout; replay mode until
    /// [`live`](Self::live) is called.
    pub fn new(config: AlignerConfig) -> Self {
        AlignerBuilder {
            parts: Parts::new(config),
        }
    }

    /// Live mode: arrivals are read from `clock`, and no sample waits longer
    /// than the timeout after its arrival (one timer on `clock`).
    pub fn live(mut self, clock: impl Clock) -> Self {
        self.parts.clock = Some(Arc::new(clock));
        self
    }

    /// Registers an input stream (in order on its own) with its period,
    /// capacity and priority; `wrap` turns its samples into `E`. Its items
    /// are [`Stamped<T>`], or [`Arrived<Stamped<T>>`](crate::source::Arrived)
    /// whose hand-over time the live latency bound counts from
    /// ([`AlignerItem`]). It cannot fail: every [`StreamConfig`] was
    /// checked when it was built.
    pub fn stream<T, S, F>(
        &mut self,
        name: &str,
        input: S,
        config: StreamConfig,
        wrap: F,
    ) -> StreamId
    where
        T: Send + 'static,
        S: Stream + Send + 'static,
        S::Item: AlignerItem<Value = T>,
        F: Fn(Stamped<T>) -> E + Send + 'static,
    {
        self.parts.add(name, config, |capacity| {
            Box::new(QueueLane::new(input, capacity, Wrap(wrap)))
        })
    }

    /// The aligned stream.
    pub fn aligned(self) -> Aligned<E> {
        Aligned {
            engine: self.parts.engine(),
        }
    }
}

/// The accessors [`Aligned`] and [`FanOut`] share (both wrap an `engine`).
macro_rules! engine_accessors {
    () => {
        /// The current status.
        pub fn status(&self) -> AlignedStatus {
            self.engine.status()
        }

        /// A `watch` receiver of the status, updated while it runs.
        pub fn status_watch(&self) -> watch::Receiver<AlignedStatus> {
            self.engine.watch()
        }

        /// A handle to change the running aligner (timeout, periods, streams).
        pub fn control(&self) -> AlignerControl {
            self.engine.control()
        }

        /// The handles of the inputs, in registration (tuple) order.
        pub fn stream_ids(&self) -> &[StreamId] {
            &self.engine.ids
        }

        /// The handle of the input registered as `name` (the first, if several).
        pub fn stream_id(&self, name: &str) -> Option<StreamId> {
            self.engine.stream_id(name)
        }
    };
}

/// The samples of every input in global timestamp order, as a `Stream` of
/// `E`; it ends when every input ended and everything was released.
#[must_use = "streams do nothing unless polled"]
pub struct Aligned<E> {
    engine: Engine<E>,
}

impl<E> Aligned<E> {
    engine_accessors!();
}

impl<E> std::fmt::Debug for Aligned<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aligned")
            .field("status", &self.status())
            .finish()
    }
}

impl<E> Stream for Aligned<E> {
    type Item = E;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<E>> {
        let engine = &mut self.get_mut().engine;
        engine.begin_poll();
        loop {
            match engine.poll_release(cx) {
                Poll::Ready(Some((lane, stamp))) => {
                    if let Some(item) = engine.lanes.get_mut(lane).and_then(|l| l.take(stamp)) {
                        return Poll::Ready(Some(item));
                    }
                }
                Poll::Ready(None) => {
                    engine.publish();
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Queued samples will all come out (released at the latest at the
        // end); the inputs may add any number.
        (self.engine.core.queued(), None)
    }
}

/// Builds a [`FanOut`]: each input gets its own bounded, typed channel.
pub struct FanOutBuilder {
    parts: Parts<()>,
}

impl FanOutBuilder {
    /// A builder with the aligner's timeout; replay mode until
    /// [`live`](Self::live) is called.
    pub fn new(config: AlignerConfig) -> Self {
        FanOutBuilder {
            parts: Parts::new(config),
        }
    }

    /// Live mode, as [`AlignerBuilder::live`].
    pub fn live(mut self, clock: impl Clock) -> Self {
        self.parts.clock = Some(Arc::new(clock));
        self
    }

    /// Registers an input stream and returns the receiving end of its
    /// channel (`channel_capacity >= 1`, else it is taken as 1). Samples of
    /// all channels are sent in global timestamp order. It cannot fail:
    /// every [`StreamConfig`] was checked when it was built.
    pub fn channel<T, S>(
        &mut self,
        name: &str,
        input: S,
        config: StreamConfig,
        channel_capacity: usize,
    ) -> mpsc::Receiver<Stamped<T>>
    where
        T: Send + 'static,
        S: Stream + Send + 'static,
        S::Item: AlignerItem<Value = T>,
    {
        let (tx, rx) = mpsc::channel(channel_capacity.max(1));
        self.parts.add(name, config, |capacity| {
            Box::new(QueueLane::new(input, capacity, Channel::new(tx)))
        });
        rx
    }

    /// The driver; spawn it (or await it).
    pub fn build(self) -> FanOut {
        FanOut {
            engine: self.parts.engine(),
            in_flight: None,
        }
    }
}

/// Why a [`FanOut`] stopped early.
#[derive(Debug, thiserror::Error)]
pub enum FanOutError {
    /// Every consumer dropped its receiver; the status says what was
    /// delivered and what was not.
    #[error("every consumer of the aligner is gone")]
    AllConsumersGone(Box<AlignedStatus>),
}

/// The fan-out driver: a future that aligns the inputs and sends each
/// release into its input's channel, waiting for room (backpressure). It
/// completes with the final status when every input ended, or with
/// [`FanOutError::AllConsumersGone`].
#[must_use = "futures do nothing unless polled or spawned"]
pub struct FanOut {
    engine: Engine<()>,
    in_flight: Option<(usize, Timestamp)>,
}

impl FanOut {
    engine_accessors!();
}

impl std::fmt::Debug for FanOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FanOut")
            .field("status", &self.status())
            .finish()
    }
}

impl Future for FanOut {
    type Output = Result<AlignedStatus, FanOutError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let engine = &mut this.engine;
        engine.begin_poll();
        loop {
            if let Some((lane, stamp)) = this.in_flight {
                if engine.poll_deliver(cx, lane, stamp).is_pending() {
                    return Poll::Pending;
                }
                this.in_flight = None;
                if engine.all_gone() {
                    engine.publish();
                    return Poll::Ready(Err(FanOutError::AllConsumersGone(Box::new(
                        engine.status(),
                    ))));
                }
            }
            match engine.poll_release(cx) {
                Poll::Ready(Some(next)) => this.in_flight = Some(next),
                Poll::Ready(None) => {
                    std::task::ready!(engine.poll_flush(cx));
                    engine.publish();
                    return Poll::Ready(Ok(engine.status()));
                }
                Poll::Pending => {
                    // Waiting for inputs or the timer: send what was taken.
                    let _ = engine.poll_flush(cx);
                    return Poll::Pending;
                }
            }
        }
    }
}
