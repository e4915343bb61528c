//! ROS 2 topics as stamped streams, without ROS: rmw_zenoh's wire format
//! ([`syncline_ros2`]) over a zenoh session.
//!
//! A [`Ros2Node`] joins a ROS 2 graph the way an rmw_zenoh node does: it
//! connects to the `rmw_zenohd` router at `tcp/localhost:7447` (or to peers
//! on explicit endpoints), announces itself with a liveliness token, and
//! then subscribes to topics ([`Ros2Node::subscribe`]: a
//! `Stream<Item = Stamped<Ros2Message>>`, stamped from the message's
//! `std_msgs/Header` where its type starts with one), publishes
//! ([`Ros2Node::publisher`]: messages `ros2 topic echo` receives), and
//! lists the graph ([`Ros2Node::graph`]).
//!
//! ```no_run
//! use futures::StreamExt;
//! use syncline_zenoh::ros2::{Ros2Config, Ros2Node, SubscribeOptions};
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let node = Ros2Node::new(&Ros2Config::default(), "syncline", "").await?;
//! let mut imu = node.subscribe("/imu", SubscribeOptions::default()).await?;
//! while let Some(msg) = imu.next().await {
//!     println!("{} {} ({} bytes)", msg.stamp, msg.value.type_name, msg.value.cdr.len());
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use serde::Serialize;
use syncline_core::{Stamped, Timestamp};
use syncline_ros2::attachment::{Attachment, Gid};
use syncline_ros2::cdr::header_stamp;
use syncline_ros2::msg::{MessageRegistry, TypeName};
use syncline_ros2::names::{
    DataKey, EntityKind, HashChunk, LivelinessToken, Qos, Topic, TopicInfo, liveliness_prefix,
};
use syncline_ros2::seq::{LossTracker, PublisherCounts, SeqVerdict};
use syncline_ros2::types::{self, Message};
use tokio::sync::mpsc;

/// What went wrong talking to a ROS 2 graph.
#[derive(Debug, thiserror::Error)]
pub enum Ros2Error {
    /// zenoh refused (a bad endpoint, no router, a closed session).
    #[error("zenoh: {0}")]
    Zenoh(String),
    /// A bad topic or node name.
    #[error(transparent)]
    Name(#[from] syncline_ros2::names::NameError),
    /// A type without a definition or hash, or a bad type name.
    #[error(transparent)]
    Type(#[from] syncline_ros2::msg::MsgError),
    /// CDR bytes that are not the typed message asked for.
    #[error(transparent)]
    Typed(#[from] syncline_ros2::types::TypedError),
    /// A typed decode or publish of another type than the topic carries.
    #[error("the topic carries {carried}, not {asked}")]
    WrongType {
        /// The type of the message or publisher.
        carried: String,
        /// The type asked for.
        asked: &'static str,
    },
}

/// The system clock's time (the epoch if the clock is before it).
fn now() -> Timestamp {
    Timestamp::from_system_time(std::time::SystemTime::now()).unwrap_or(Timestamp::EPOCH)
}

fn zerr(e: impl std::fmt::Display) -> Ros2Error {
    Ros2Error::Zenoh(e.to_string())
}

/// How a [`Ros2Node`] connects.
#[derive(Debug, Clone)]
pub struct Ros2Config {
    /// `ROS_DOMAIN_ID` (default: the environment's, else 0).
    pub domain: u32,
    /// Endpoints to connect to (default: the router, `tcp/localhost:7447`).
    pub connect: Vec<String>,
    /// Endpoints to listen on (default: `tcp/localhost:0`, as rmw_zenoh's
    /// sessions do, so that peers the router tells about can connect).
    pub listen: Vec<String>,
    /// `true` for a zenoh client (to a router on another host), `false`
    /// for a peer (the default, as rmw_zenoh).
    pub client: bool,
    /// A zenoh configuration file to start from (endpoints above are set
    /// on top of it when not empty).
    pub config_file: Option<PathBuf>,
    /// Publish with Humble's `TypeHashNotSupported` instead of RIHS01
    /// hashes (subscriptions match both always).
    pub humble: bool,
}

impl Default for Ros2Config {
    fn default() -> Self {
        let domain = std::env::var("ROS_DOMAIN_ID")
            .ok()
            .and_then(|d| d.parse().ok())
            .unwrap_or(0);
        Self {
            domain,
            connect: vec!["tcp/localhost:7447".to_owned()],
            listen: vec!["tcp/localhost:0".to_owned()],
            client: false,
            config_file: None,
            humble: false,
        }
    }
}

impl Ros2Config {
    fn zenoh_config(&self) -> Result<zenoh::Config, Ros2Error> {
        let mut config = match &self.config_file {
            Some(path) => zenoh::Config::from_file(path).map_err(zerr)?,
            None => zenoh::Config::default(),
        };
        let json = |v: &[String]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|e| format!("{e:?}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        let mode = if self.client {
            "\"client\""
        } else {
            "\"peer\""
        };
        config.insert_json5("mode", mode).map_err(zerr)?;
        config
            .insert_json5("scouting/multicast/enabled", "false")
            .map_err(zerr)?;
        config
            .insert_json5("timestamping/enabled", "true")
            .map_err(zerr)?;
        if !self.connect.is_empty() {
            config
                .insert_json5("connect/endpoints", &json(&self.connect))
                .map_err(zerr)?;
        }
        if !self.client {
            config
                .insert_json5("listen/endpoints", &json(&self.listen))
                .map_err(zerr)?;
        }
        Ok(config)
    }
}

/// A node in a ROS 2 graph.
pub struct Ros2Node {
    session: zenoh::Session,
    domain: u32,
    humble: bool,
    namespace: String,
    name: String,
    zid: String,
    node_id: u64,
    next_entity: AtomicU64,
    registry: Arc<MessageRegistry>,
    _token: zenoh::liveliness::LivelinessToken,
}

impl std::fmt::Debug for Ros2Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ros2Node")
            .field("domain", &self.domain)
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .field("zid", &self.zid)
            .finish()
    }
}

impl Ros2Node {
    /// Opens a zenoh session and announces node `name` in `namespace`
    /// (`""` for the root). Needs a multi-thread tokio runtime.
    pub async fn new(config: &Ros2Config, name: &str, namespace: &str) -> Result<Self, Ros2Error> {
        Self::with_registry(config, name, namespace, MessageRegistry::shipped()).await
    }

    /// As [`new`](Self::new), with the message definitions of `registry`
    /// (for publishing types syncline does not ship, and for finding which
    /// types start with a header).
    pub async fn with_registry(
        config: &Ros2Config,
        name: &str,
        namespace: &str,
        registry: MessageRegistry,
    ) -> Result<Self, Ros2Error> {
        Topic::parse(name)?;
        if !namespace.is_empty() && namespace != "/" {
            Topic::parse(namespace)?;
        }
        let session = zenoh::open(config.zenoh_config()?).await.map_err(zerr)?;
        let zid = session.zid().to_string();
        let token = LivelinessToken {
            domain: config.domain,
            session: zid.clone(),
            node_id: 0,
            entity_id: 0,
            kind: EntityKind::Node,
            enclave: String::new(),
            namespace: namespace.trim_end_matches('/').to_owned(),
            node: name.to_owned(),
            topic: None,
        };
        let token = session
            .liveliness()
            .declare_token(token.to_string())
            .await
            .map_err(zerr)?;
        Ok(Self {
            session,
            domain: config.domain,
            humble: config.humble,
            namespace: namespace.trim_end_matches('/').to_owned(),
            name: name.to_owned(),
            zid,
            node_id: 0,
            next_entity: AtomicU64::new(1),
            registry: Arc::new(registry),
            _token: token,
        })
    }

    /// The message definitions the node knows.
    pub fn registry(&self) -> &MessageRegistry {
        &self.registry
    }

    fn topic(&self, name: &str) -> Result<Topic, Ros2Error> {
        if name.starts_with('/') || self.namespace.is_empty() {
            Ok(Topic::parse(name)?)
        } else {
            Ok(Topic::parse(&format!("{}/{name}", self.namespace))?)
        }
    }

    fn entity_token(&self, kind: EntityKind, info: TopicInfo) -> LivelinessToken {
        LivelinessToken {
            domain: self.domain,
            session: self.zid.clone(),
            node_id: self.node_id,
            entity_id: self.next_entity.fetch_add(1, Ordering::Relaxed),
            kind,
            enclave: String::new(),
            namespace: self.namespace.clone(),
            node: self.name.clone(),
            topic: Some(info),
        }
    }

    /// Subscribes to `topic` (relative names are in the node's namespace),
    /// whatever its type and type hash: `<domain>/<topic>/*/*`.
    pub async fn subscribe(
        &self,
        topic: &str,
        options: SubscribeOptions,
    ) -> Result<Ros2Subscription, Ros2Error> {
        let topic = self.topic(topic)?;
        let shared = Arc::new(Shared::default());
        let (tx, rx) = mpsc::channel(options.capacity.max(1));
        let registry = Arc::clone(&self.registry);
        let fallback = options.fallback;
        let cb_shared = Arc::clone(&shared);
        let subscriber = self
            .session
            .declare_subscriber(DataKey::any_type(self.domain, &topic))
            .callback(move |sample| {
                let received = now();
                let msg = decode(&sample, received, &registry, fallback, &cb_shared);
                if let Some(msg) = msg {
                    match tx.try_send(msg) {
                        Ok(()) => {}
                        Err(mpsc::error::TrySendError::Full(_)) => {
                            cb_shared.overflow.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(mpsc::error::TrySendError::Closed(_)) => {}
                    }
                }
            })
            .await
            .map_err(zerr)?;
        let token = match options.type_name {
            Some(ty) => {
                let type_name = TypeName::parse(&ty)?;
                let info = TopicInfo {
                    topic: topic.clone(),
                    hash: self.hash_chunk(&type_name)?,
                    type_name,
                    qos: Qos::keep_last(options.capacity as u32),
                };
                let token = self.entity_token(EntityKind::Subscription, info);
                Some(
                    self.session
                        .liveliness()
                        .declare_token(token.to_string())
                        .await
                        .map_err(zerr)?,
                )
            }
            None => None,
        };
        Ok(Ros2Subscription {
            topic,
            rx,
            shared,
            _subscriber: subscriber,
            _token: token,
        })
    }

    fn hash_chunk(&self, type_name: &TypeName) -> Result<HashChunk, Ros2Error> {
        if self.humble {
            Ok(HashChunk::NotSupported)
        } else {
            Ok(HashChunk::Rihs01(
                self.registry.type_hash(type_name.as_str())?,
            ))
        }
    }

    /// A publisher of `type_name` messages on `topic`. The type's
    /// definition must be known (shipped, or given with
    /// [`with_registry`](Self::with_registry)) for its type hash.
    pub async fn publisher(
        &self,
        topic: &str,
        type_name: &str,
    ) -> Result<Ros2Publisher, Ros2Error> {
        let topic = self.topic(topic)?;
        let type_name = TypeName::parse(type_name)?;
        let hash = self.hash_chunk(&type_name)?;
        let key = DataKey {
            domain: self.domain,
            topic: topic.clone(),
            type_name: type_name.clone(),
            hash,
        };
        let token = self.entity_token(
            EntityKind::Publisher,
            TopicInfo {
                topic,
                type_name,
                hash,
                qos: Qos::keep_last(10),
            },
        );
        let gid = Gid::from_token(&token.to_string());
        let publisher = self
            .session
            .declare_publisher(key.to_string())
            .await
            .map_err(zerr)?;
        let token = self
            .session
            .liveliness()
            .declare_token(token.to_string())
            .await
            .map_err(zerr)?;
        Ok(Ros2Publisher {
            publisher,
            type_name: key.type_name,
            gid,
            sequence: 0,
            _token: token,
        })
    }

    /// The graph: every node, publisher and subscription alive in the
    /// domain, from their liveliness tokens (waiting at most `timeout` for
    /// the answers).
    pub async fn graph(&self, timeout: Duration) -> Result<Graph, Ros2Error> {
        let replies = self
            .session
            .liveliness()
            .get(format!("{}/**", liveliness_prefix(self.domain)))
            .timeout(timeout)
            .await
            .map_err(zerr)?;
        let mut graph = Graph::default();
        while let Ok(reply) = replies.recv_async().await {
            if let Ok(sample) = reply.result() {
                graph.add(sample.key_expr().as_str());
            }
        }
        Ok(graph)
    }

    /// The zenoh session underneath, for what this module does not cover.
    pub fn session(&self) -> &zenoh::Session {
        &self.session
    }
}

/// Where a message's stamp comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StampSource {
    /// The `std_msgs/Header` at the start of the message.
    Header,
    /// The publisher's source timestamp (the attachment).
    #[default]
    SourceTimestamp,
    /// The local receive time.
    ReceiveTime,
}

/// How to subscribe.
#[derive(Debug, Clone)]
pub struct SubscribeOptions {
    /// Messages held for the stream's reader (default 1024); more are
    /// counted as `overflow` and dropped.
    pub capacity: usize,
    /// The stamp of messages whose type has no header (default: the
    /// source timestamp, else the receive time).
    pub fallback: StampSource,
    /// Announce the subscription with this type (`package/msg/Name`), so
    /// that `ros2 topic info` counts it (default: not announced).
    pub type_name: Option<String>,
}

impl Default for SubscribeOptions {
    fn default() -> Self {
        Self {
            capacity: 1024,
            fallback: StampSource::SourceTimestamp,
            type_name: None,
        }
    }
}

/// One received message.
#[derive(Debug, Clone)]
pub struct Ros2Message {
    /// Its type (from the key expression).
    pub type_name: TypeName,
    /// Its CDR bytes, encapsulation header included.
    pub cdr: Vec<u8>,
    /// The attachment: sequence number, source timestamp, publisher GID
    /// (`None` when the publisher sent none).
    pub attachment: Option<Attachment>,
    /// When this process received it (system clock).
    pub received: Timestamp,
    /// Where the stamp of the [`Stamped`] around it comes from.
    pub stamp_source: StampSource,
    /// What its sequence number said.
    pub seq: Option<SeqVerdict>,
}

impl Ros2Message {
    /// The message as a typed value (see [`syncline_ros2::types`]; your
    /// own serde types work too). Fails on another type than the topic
    /// carries, or bytes that do not decode.
    ///
    /// ```no_run
    /// # async fn f(mut imu: syncline_zenoh::ros2::Ros2Subscription) -> Result<(), Box<dyn std::error::Error>> {
    /// use futures::StreamExt;
    /// use syncline_ros2::types::sensor_msgs::Imu;
    /// while let Some(m) = imu.next().await {
    ///     let reading: Imu = m.value.decode()?;
    ///     println!("{} {:?}", m.stamp, reading.angular_velocity);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn decode<T: Message>(&self) -> Result<T, Ros2Error> {
        if self.type_name.as_str() != T::TYPE_NAME {
            return Err(Ros2Error::WrongType {
                carried: self.type_name.to_string(),
                asked: T::TYPE_NAME,
            });
        }
        Ok(types::decode(&self.cdr)?)
    }
}

#[derive(Debug, Default)]
struct Shared {
    received: AtomicU64,
    overflow: AtomicU64,
    no_attachment: AtomicU64,
    bad_header: AtomicU64,
    loss: Mutex<LossTracker>,
}

fn decode(
    sample: &zenoh::sample::Sample,
    received: Timestamp,
    registry: &MessageRegistry,
    fallback: StampSource,
    shared: &Shared,
) -> Option<Stamped<Ros2Message>> {
    if sample.kind() != zenoh::sample::SampleKind::Put {
        return None;
    }
    shared.received.fetch_add(1, Ordering::Relaxed);
    let key = DataKey::parse(sample.key_expr().as_str()).ok()?;
    let cdr = sample.payload().to_bytes().into_owned();
    let attachment = sample
        .attachment()
        .and_then(|a| Attachment::decode(&a.to_bytes()).ok());
    let seq = match &attachment {
        Some(a) => shared
            .loss
            .lock()
            .ok()
            .map(|mut l| l.observe(a.gid, a.sequence_number)),
        None => {
            shared.no_attachment.fetch_add(1, Ordering::Relaxed);
            None
        }
    };
    let has_header = registry
        .get(key.type_name.as_str())
        .is_some_and(|d| d.starts_with_header());
    let from_header = if has_header {
        match header_stamp(&cdr) {
            Ok(h) => Some(Timestamp::from_nanos(h.as_nanos())),
            Err(_) => {
                shared.bad_header.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    } else {
        None
    };
    let (stamp, stamp_source) = match (from_header, fallback, &attachment) {
        (Some(t), _, _) => (t, StampSource::Header),
        (None, StampSource::ReceiveTime, _) | (None, _, None) => {
            (received, StampSource::ReceiveTime)
        }
        (None, _, Some(a)) => (
            Timestamp::from_nanos(a.source_timestamp),
            StampSource::SourceTimestamp,
        ),
    };
    Some(Stamped::new(
        stamp,
        Ros2Message {
            type_name: key.type_name,
            cdr,
            attachment,
            received,
            stamp_source,
            seq,
        },
    ))
}

/// A subscription: a `Stream` of the topic's messages, stamped.
pub struct Ros2Subscription {
    topic: Topic,
    rx: mpsc::Receiver<Stamped<Ros2Message>>,
    shared: Arc<Shared>,
    _subscriber: zenoh::pubsub::Subscriber<()>,
    _token: Option<zenoh::liveliness::LivelinessToken>,
}

impl std::fmt::Debug for Ros2Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ros2Subscription")
            .field("topic", &self.topic)
            .field("status", &self.status())
            .finish()
    }
}

/// What a subscription has seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubscriptionStatus {
    /// The topic.
    pub topic: String,
    /// Messages received from zenoh.
    pub received: u64,
    /// Messages dropped because the stream's reader was behind.
    pub overflow: u64,
    /// Messages without rmw_zenoh's attachment.
    pub no_attachment: u64,
    /// Messages whose type has a header the bytes were too short for.
    pub bad_header: u64,
    /// Messages the publishers' sequence numbers say never arrived.
    pub lost_seq: u64,
    /// Per publisher (its GID in hex): received, lost, late, duplicates.
    pub publishers: BTreeMap<String, PublisherCounts>,
}

impl Ros2Subscription {
    /// The topic.
    pub fn topic(&self) -> &Topic {
        &self.topic
    }

    /// What the subscription has seen so far.
    pub fn status(&self) -> SubscriptionStatus {
        self.status_handle().status()
    }

    /// A handle that reads the status while the stream is consumed
    /// elsewhere.
    pub fn status_handle(&self) -> StatusHandle {
        StatusHandle {
            topic: self.topic.clone(),
            shared: Arc::clone(&self.shared),
        }
    }
}

/// Reads a subscription's status from anywhere (see
/// [`Ros2Subscription::status_handle`]).
#[derive(Debug, Clone)]
pub struct StatusHandle {
    topic: Topic,
    shared: Arc<Shared>,
}

impl StatusHandle {
    /// What the subscription has seen so far.
    pub fn status(&self) -> SubscriptionStatus {
        let (lost_seq, publishers) = match self.shared.loss.lock() {
            Ok(loss) => (
                loss.lost(),
                loss.publishers()
                    .map(|(g, c)| (g.0.iter().map(|b| format!("{b:02x}")).collect(), *c))
                    .collect(),
            ),
            Err(_) => (0, BTreeMap::new()),
        };
        SubscriptionStatus {
            topic: self.topic.to_string(),
            received: self.shared.received.load(Ordering::Relaxed),
            overflow: self.shared.overflow.load(Ordering::Relaxed),
            no_attachment: self.shared.no_attachment.load(Ordering::Relaxed),
            bad_header: self.shared.bad_header.load(Ordering::Relaxed),
            lost_seq,
            publishers,
        }
    }
}

impl Stream for Ros2Subscription {
    type Item = Stamped<Ros2Message>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// Publishes messages of one type on one topic.
pub struct Ros2Publisher {
    publisher: zenoh::pubsub::Publisher<'static>,
    type_name: TypeName,
    gid: Gid,
    sequence: i64,
    _token: zenoh::liveliness::LivelinessToken,
}

impl std::fmt::Debug for Ros2Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ros2Publisher")
            .field("key", &self.publisher.key_expr().as_str())
            .field("sequence", &self.sequence)
            .finish()
    }
}

impl Ros2Publisher {
    /// Publishes one message: `cdr` is its CDR bytes, encapsulation header
    /// included (see [`syncline_ros2::cdr::CdrWriter`]). The attachment
    /// gets the next sequence number and the system clock's time.
    pub async fn publish(&mut self, cdr: Vec<u8>) -> Result<(), Ros2Error> {
        self.sequence += 1;
        let attachment = Attachment {
            sequence_number: self.sequence,
            source_timestamp: now().as_nanos(),
            gid: self.gid,
        };
        self.publisher
            .put(cdr)
            .attachment(attachment.encode().to_vec())
            .await
            .map_err(zerr)
    }

    /// Publishes a typed message (see [`syncline_ros2::types`]): encoded
    /// as little-endian CDR, then as [`publish`](Self::publish). The type
    /// must be the publisher's.
    pub async fn publish_msg<T: Message>(&mut self, message: &T) -> Result<(), Ros2Error> {
        if self.type_name.as_str() != T::TYPE_NAME {
            return Err(Ros2Error::WrongType {
                carried: self.type_name.to_string(),
                asked: T::TYPE_NAME,
            });
        }
        self.publish(types::encode(message)?).await
    }

    /// The publisher's GID, as its attachments carry it.
    pub fn gid(&self) -> Gid {
        self.gid
    }

    /// The key expression it publishes on.
    pub fn key(&self) -> &str {
        self.publisher.key_expr().as_str()
    }
}

/// One topic of a [`Graph`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GraphTopic {
    /// Its types (`package/msg/Name`), usually one.
    pub types: BTreeSet<String>,
    /// Publishers announced.
    pub publishers: usize,
    /// Subscriptions announced.
    pub subscribers: usize,
}

/// A ROS 2 graph, from liveliness tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Graph {
    /// Nodes, as `namespace/name`.
    pub nodes: BTreeSet<String>,
    /// Topics by name.
    pub topics: BTreeMap<String, GraphTopic>,
}

impl Graph {
    /// Adds one token; anything that is not an rmw_zenoh token is skipped.
    pub fn add(&mut self, key: &str) {
        let Ok(token) = LivelinessToken::parse(key) else {
            return;
        };
        let node = format!("{}/{}", token.namespace, token.node);
        match (token.kind, token.topic) {
            (EntityKind::Node, _) => {
                self.nodes.insert(node);
            }
            (kind @ (EntityKind::Publisher | EntityKind::Subscription), Some(info)) => {
                let entry = self.topics.entry(info.topic.to_string()).or_default();
                entry.types.insert(info.type_name.to_string());
                if kind == EntityKind::Publisher {
                    entry.publishers += 1;
                } else {
                    entry.subscribers += 1;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_counts_tokens() {
        let hash = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
        let mut g = Graph::default();
        g.add("@ros2_lv/0/aa/0/0/NN/%/%/talker");
        g.add(&format!("@ros2_lv/0/aa/0/1/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/{hash}/::,7:,:,:,,"));
        g.add(&format!("@ros2_lv/0/bb/0/1/MS/%/%/listener/%chatter/std_msgs::msg::dds_::String_/{hash}/::,10:,:,:,,"));
        g.add(&format!("@ros2_lv/0/cc/0/1/MS/%/%/listener2/%chatter/std_msgs::msg::dds_::String_/{hash}/::,10:,:,:,,"));
        g.add("not a token");
        assert_eq!(g.nodes.len(), 1);
        let t = &g.topics["/chatter"];
        assert_eq!((t.publishers, t.subscribers), (1, 2));
        assert!(t.types.contains("std_msgs/msg/String"));
    }
}
