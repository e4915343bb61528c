//! The in-process timing bus: tokio channels between one coordinator and
//! any number of participants in the same process (unbounded, so reports
//! and triggers are kept in order and never overwritten).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::transport::{
    CoordinatorTransport, Inbound, Outbound, ParticipantTransport, TransportClosed,
};
use syncline_core::timer::Signal;

/// Numbers connections, so that a rejected duplicate's messages (and its
/// leaving) are not mistaken for those of the participant it duplicates.
static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

enum BusMsg {
    Join(Arc<str>, u64, UnboundedSender<Signal>),
    Msg(u64, Inbound),
}

/// Creates an in-process timing bus: the coordinator's end and a connector
/// that participants use to join.
///
/// ```
/// use syncline::timer::{CoordinatorTransport, Inbound, Outbound, ParticipantTransport, in_process_bus};
/// use syncline::core::timer::Signal;
/// use syncline::Timestamp;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (mut coord, connector) = in_process_bus();
/// let mut p = connector.connect("planner").unwrap();
/// p.send(Outbound::Ready(Timestamp::EPOCH)).unwrap();
/// assert_eq!(coord.recv().await, Some(Inbound::Join("planner".into())));
/// assert!(matches!(coord.recv().await, Some(Inbound::Ready { .. })));
/// coord.send(Some("planner"), Signal::Trigger(Timestamp::EPOCH)).unwrap();
/// assert_eq!(p.recv().await, Some(Signal::Trigger(Timestamp::EPOCH)));
/// # }
/// ```
pub fn in_process_bus() -> (BusCoordinator, BusConnector) {
    let (tx, rx) = unbounded_channel();
    (
        BusCoordinator {
            inbox: rx,
            peers: HashMap::new(),
        },
        BusConnector { tx },
    )
}

/// The coordinator's end of the in-process bus.
pub struct BusCoordinator {
    inbox: UnboundedReceiver<BusMsg>,
    peers: HashMap<Arc<str>, (u64, UnboundedSender<Signal>)>,
}

impl std::fmt::Debug for BusCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusCoordinator")
            .field("peers", &self.peers.len())
            .finish()
    }
}

/// Joins participants to an in-process bus (cheap to clone). The bus stays
/// open while a connector or a participant exists.
#[derive(Debug, Clone)]
pub struct BusConnector {
    tx: UnboundedSender<BusMsg>,
}

impl BusConnector {
    /// Joins the bus as `name`. The coordinator registers the name; if it is
    /// already taken by a live participant, the newcomer's channel is closed
    /// at once (its `recv` returns `None`) and the coordinator logs the
    /// duplicate.
    pub fn connect(&self, name: &str) -> Result<BusParticipant, TransportClosed> {
        let name: Arc<str> = name.into();
        let conn = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = unbounded_channel();
        self.tx
            .send(BusMsg::Join(name.clone(), conn, tx))
            .map_err(|_| TransportClosed)?;
        Ok(BusParticipant {
            name,
            conn,
            tx: self.tx.clone(),
            rx,
        })
    }
}

/// A participant's end of the in-process bus. Dropping it tells the
/// coordinator that the participant left.
#[derive(Debug)]
pub struct BusParticipant {
    name: Arc<str>,
    conn: u64,
    tx: UnboundedSender<BusMsg>,
    rx: UnboundedReceiver<Signal>,
}

impl Drop for BusParticipant {
    fn drop(&mut self) {
        let _ = self
            .tx
            .send(BusMsg::Msg(self.conn, Inbound::Leave(self.name.clone())));
    }
}

impl CoordinatorTransport for BusCoordinator {
    async fn recv(&mut self) -> Option<Inbound> {
        {
            loop {
                match self.inbox.recv().await? {
                    BusMsg::Join(name, conn, tx) => {
                        let taken = self
                            .peers
                            .get(&name)
                            .is_some_and(|(_, old)| !old.is_closed());
                        if !taken {
                            self.peers.insert(name.clone(), (conn, tx));
                        }
                        return Some(Inbound::Join(name));
                    }
                    BusMsg::Msg(conn, m) => {
                        let name = match &m {
                            Inbound::Join(n)
                            | Inbound::Ready { name: n, .. }
                            | Inbound::StopRequest(n)
                            | Inbound::Leave(n) => n,
                        };
                        // Messages of a rejected duplicate are not forwarded.
                        if self.peers.get(name).is_some_and(|(c, _)| *c == conn) {
                            return Some(m);
                        }
                    }
                }
            }
        }
    }

    fn send(&mut self, to: Option<&str>, signal: Signal) -> Result<(), TransportClosed> {
        match to {
            Some(name) => match self.peers.get(name) {
                Some((_, tx)) => tx.send(signal).map_err(|_| TransportClosed),
                None => Err(TransportClosed),
            },
            None => {
                for (_, tx) in self.peers.values() {
                    let _ = tx.send(signal); // a participant that left needs no signal
                }
                Ok(())
            }
        }
    }
}

impl ParticipantTransport for BusParticipant {
    fn name(&self) -> &str {
        &self.name
    }

    fn send(&mut self, msg: Outbound) -> Result<(), TransportClosed> {
        let name = self.name.clone();
        let m = match msg {
            Outbound::Ready(next) => Inbound::Ready { name, next },
            Outbound::StopRequest => Inbound::StopRequest(name),
        };
        self.tx
            .send(BusMsg::Msg(self.conn, m))
            .map_err(|_| TransportClosed)
    }

    fn recv(&mut self) -> impl Future<Output = Option<Signal>> + Send {
        self.rx.recv()
    }
}
