//! Run-time control of a running aligner: change the timeout, periods and
//! priorities, disable / enable / end / remove streams.

use syncline_core::TimeDelta;
use syncline_core::aligner::{AlignerError, StreamId};
use tokio::sync::mpsc;

/// A command to the running driver.
#[derive(Debug, Clone, Copy)]
pub(super) enum Command {
    Timeout(TimeDelta),
    Period(StreamId, TimeDelta),
    Priority(StreamId, i64),
    Disable(StreamId),
    Enable(StreamId),
    End(StreamId),
    Remove(StreamId),
}

/// Why a control command was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The aligner (its `Aligned` stream or `FanOut` driver) was dropped.
    #[error("the aligner is gone")]
    Gone,
    /// The value is invalid (a negative period).
    #[error(transparent)]
    Invalid(#[from] AlignerError),
}

/// A cloneable handle that changes a running [`Aligned`](super::Aligned) or
/// [`FanOut`](super::FanOut) (from their `control()`). Commands apply, in
/// order, the next time the driver looks at its inputs; a command for a
/// stream that was removed is ignored (and logged). Stream handles come from
/// [`AlignerBuilder::stream`](super::AlignerBuilder::stream) or `stream_id`.
#[derive(Debug, Clone)]
pub struct AlignerControl {
    pub(super) tx: mpsc::UnboundedSender<Command>,
}

impl AlignerControl {
    fn send(&self, c: Command) -> Result<(), ControlError> {
        self.tx.send(c).map_err(|_| ControlError::Gone)
    }

    /// Changes the timeout (negative values are taken as zero).
    ///
    /// # Errors
    /// [`ControlError::Gone`].
    pub fn set_timeout(&self, timeout: TimeDelta) -> Result<(), ControlError> {
        self.send(Command::Timeout(timeout))
    }

    /// Changes a stream's period (lookahead).
    ///
    /// # Errors
    /// [`ControlError::Invalid`] for a negative period, [`ControlError::Gone`].
    pub fn set_period(&self, id: StreamId, period: TimeDelta) -> Result<(), ControlError> {
        if period.is_negative() {
            return Err(AlignerError::NegativePeriod(period).into());
        }
        self.send(Command::Period(id, period))
    }

    /// Changes a stream's priority.
    ///
    /// # Errors
    /// [`ControlError::Gone`].
    pub fn set_priority(&self, id: StreamId, priority: i64) -> Result<(), ControlError> {
        self.send(Command::Priority(id, priority))
    }

    /// Stops waiting for a stream (its next sample re-enables it).
    ///
    /// # Errors
    /// [`ControlError::Gone`].
    pub fn disable(&self, id: StreamId) -> Result<(), ControlError> {
        self.send(Command::Disable(id))
    }

    /// Waits for a stream again.
    ///
    /// # Errors
    /// [`ControlError::Gone`].
    pub fn enable(&self, id: StreamId) -> Result<(), ControlError> {
        self.send(Command::Enable(id))
    }

    /// Never waits for a stream again (its samples are still aligned).
    ///
    /// # Errors
    /// [`ControlError::Gone`].
    pub fn end(&self, id: StreamId) -> Result<(), ControlError> {
        self.send(Command::End(id))
    }

    /// Removes a stream: its input is no longer polled and its queued
    /// samples are dropped, counted in `dropped_removed`.
    ///
    /// # Errors
    /// [`ControlError::Gone`].
    pub fn remove(&self, id: StreamId) -> Result<(), ControlError> {
        self.send(Command::Remove(id))
    }
}
