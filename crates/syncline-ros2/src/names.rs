//! rmw_zenoh's key expressions: where a topic's samples travel
//! (`<domain>/<topic>/<dds type>/<type hash>`) and the liveliness tokens
//! that make nodes and their publishers and subscriptions visible to
//! `ros2 node list` and `ros2 topic list`.

use std::fmt;

use crate::msg::{MsgError, TypeHash, TypeName};

/// What the type-hash chunk of a key says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HashChunk {
    /// `RIHS01_…` (Iron and later).
    Rihs01(TypeHash),
    /// `TypeHashNotSupported` (Humble).
    NotSupported,
}

impl fmt::Display for HashChunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rihs01(hash) => hash.fmt(f),
            Self::NotSupported => f.write_str("TypeHashNotSupported"),
        }
    }
}

impl HashChunk {
    fn parse(s: &str) -> Result<Self, NameError> {
        if s == "TypeHashNotSupported" {
            Ok(Self::NotSupported)
        } else {
            Ok(Self::Rihs01(s.parse()?))
        }
    }
}

/// A name or key that is not rmw_zenoh's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// A topic, namespace or node name that is not a valid ROS name.
    #[error("bad ROS name {0:?}")]
    BadName(String),
    /// A key expression or token of the wrong shape.
    #[error("not an rmw_zenoh key: {0:?}")]
    BadKey(String),
    /// A bad type name or hash inside a key.
    #[error(transparent)]
    Type(#[from] MsgError),
}

/// A fully qualified topic name, `/robot1/imu`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Topic(String);

impl Topic {
    /// A fully qualified name: `/` and segments of letters, digits and
    /// `_`, none starting with a digit. A name without the leading `/` is
    /// taken as relative to the root namespace.
    pub fn parse(name: &str) -> Result<Self, NameError> {
        let bad = || NameError::BadName(name.to_owned());
        let rel = name.strip_prefix('/').unwrap_or(name);
        if rel.is_empty() {
            return Err(bad());
        }
        for segment in rel.split('/') {
            let mut chars = segment.chars();
            let first_ok = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_');
            if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad());
            }
        }
        Ok(Self(format!("/{rel}")))
    }

    /// `/robot1/imu`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name as the data key carries it: `robot1/imu` (several chunks).
    pub fn key_chunks(&self) -> &str {
        &self.0[1..]
    }
}

impl fmt::Display for Topic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `/` becomes `%`; an empty name is `%`.
pub fn mangle(name: &str) -> String {
    if name.is_empty() {
        "%".to_owned()
    } else {
        name.replace('/', "%")
    }
}

/// The inverse of [`mangle`].
pub fn demangle(chunk: &str) -> String {
    chunk.replace('%', "/")
}

/// A data key expression: `<domain>/<topic>/<dds type>/<type hash>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataKey {
    /// `ROS_DOMAIN_ID`.
    pub domain: u32,
    /// The topic.
    pub topic: Topic,
    /// The message type.
    pub type_name: TypeName,
    /// The type hash.
    pub hash: HashChunk,
}

impl DataKey {
    /// Reads a data key (the topic may span several chunks).
    pub fn parse(key: &str) -> Result<Self, NameError> {
        let bad = || NameError::BadKey(key.to_owned());
        let (domain, rest) = key.split_once('/').ok_or_else(bad)?;
        let domain = domain.parse().map_err(|_| bad())?;
        let (rest, hash) = rest.rsplit_once('/').ok_or_else(bad)?;
        let (topic, dds) = rest.rsplit_once('/').ok_or_else(bad)?;
        Ok(Self {
            domain,
            topic: Topic::parse(topic)?,
            type_name: TypeName::from_dds(dds)?,
            hash: HashChunk::parse(hash)?,
        })
    }

    /// The key expression that matches every type on a topic:
    /// `<domain>/<topic>/*/*`.
    pub fn any_type(domain: u32, topic: &Topic) -> String {
        format!("{domain}/{}/*/*", topic.key_chunks())
    }
}

impl fmt::Display for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}",
            self.domain,
            self.topic.key_chunks(),
            self.type_name.dds(),
            self.hash
        )
    }
}

/// What a liveliness token announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    /// `NN`: a node.
    Node,
    /// `MP`: a publisher.
    Publisher,
    /// `MS`: a subscription.
    Subscription,
    /// `SS`: a service server.
    ServiceServer,
    /// `SC`: a service client.
    ServiceClient,
}

impl EntityKind {
    fn code(self) -> &'static str {
        match self {
            Self::Node => "NN",
            Self::Publisher => "MP",
            Self::Subscription => "MS",
            Self::ServiceServer => "SS",
            Self::ServiceClient => "SC",
        }
    }

    fn parse(code: &str) -> Option<Self> {
        Some(match code {
            "NN" => Self::Node,
            "MP" => Self::Publisher,
            "MS" => Self::Subscription,
            "SS" => Self::ServiceServer,
            "SC" => Self::ServiceClient,
            _ => return None,
        })
    }
}

/// A topic's QoS as the token's last chunk writes it
/// (`REL:DUR:HIST,DEPTH:DEADLINE:LIFESPAN:LIVELINESS`, a value written only
/// where it differs from rmw_zenoh's default). Read leniently: what syncline
/// does not use is kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Qos {
    /// `true` for best effort (default: reliable).
    pub best_effort: bool,
    /// `true` for transient local (default: volatile).
    pub transient_local: bool,
    /// `None` for keep all; else keep last with this depth (default 42
    /// where the token writes none).
    pub depth: Option<u32>,
    /// The deadline, lifespan and liveliness parts, as written.
    pub rest: String,
}

impl Default for Qos {
    fn default() -> Self {
        Self {
            best_effort: false,
            transient_local: false,
            depth: Some(42),
            rest: ":,:,:,,".to_owned(),
        }
    }
}

impl Qos {
    /// Keep last `depth`, reliable, volatile.
    pub fn keep_last(depth: u32) -> Self {
        Self {
            depth: Some(depth),
            ..Self::default()
        }
    }

    fn parse(chunk: &str) -> Option<Self> {
        let mut parts = chunk.splitn(4, ':');
        let rel = parts.next()?;
        let dur = parts.next()?;
        let hist = parts.next()?;
        let rest = parts.next()?;
        if rest.split(':').count() != 3 {
            return None;
        }
        let (kind, depth) = hist.split_once(',')?;
        let depth = if depth.is_empty() {
            42
        } else {
            depth.parse().ok()?
        };
        Some(Self {
            best_effort: rel == "2",
            transient_local: dur == "1",
            depth: if kind == "2" { None } else { Some(depth) },
            rest: rest.to_owned(),
        })
    }
}

impl fmt::Display for Qos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rel = if self.best_effort { "2" } else { "" };
        let dur = if self.transient_local { "1" } else { "" };
        match self.depth {
            None => write!(f, "{rel}:{dur}:2,:{}", self.rest),
            Some(42) => write!(f, "{rel}:{dur}:,:{}", self.rest),
            Some(depth) => write!(f, "{rel}:{dur}:,{depth}:{}", self.rest),
        }
    }
}

/// The topic part of a publisher's or subscription's token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TopicInfo {
    /// The topic.
    pub topic: Topic,
    /// Its message type.
    pub type_name: TypeName,
    /// Its type hash.
    pub hash: HashChunk,
    /// Its QoS.
    pub qos: Qos,
}

/// A liveliness token: `@ros2_lv/<domain>/<session>/<node id>/<entity
/// id>/<kind>/<enclave>/<namespace>/<node>[/<topic>/<type>/<hash>/<qos>]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LivelinessToken {
    /// `ROS_DOMAIN_ID`.
    pub domain: u32,
    /// The zenoh session id, in hex.
    pub session: String,
    /// The node's id within its session.
    pub node_id: u64,
    /// The entity's id within its session (the node's own for a node).
    pub entity_id: u64,
    /// What the token announces.
    pub kind: EntityKind,
    /// The security enclave (`""` for none).
    pub enclave: String,
    /// The node's namespace (`""` or `/` for the root).
    pub namespace: String,
    /// The node's name.
    pub node: String,
    /// For publishers, subscriptions, servers and clients: the topic.
    pub topic: Option<TopicInfo>,
}

/// The first chunk of every token; `liveliness_prefix(domain)` + `/**`
/// subscribes to a domain's whole graph.
pub fn liveliness_prefix(domain: u32) -> String {
    format!("@ros2_lv/{domain}")
}

impl LivelinessToken {
    /// Reads a token.
    pub fn parse(key: &str) -> Result<Self, NameError> {
        let bad = || NameError::BadKey(key.to_owned());
        let chunks: Vec<&str> = key.split('/').collect();
        if chunks.first() != Some(&"@ros2_lv") || (chunks.len() != 9 && chunks.len() != 13) {
            return Err(bad());
        }
        let kind = EntityKind::parse(chunks[5]).ok_or_else(bad)?;
        if (kind == EntityKind::Node) != (chunks.len() == 9) {
            return Err(bad());
        }
        let topic = if chunks.len() == 13 {
            Some(TopicInfo {
                topic: Topic::parse(&demangle(chunks[9]))?,
                type_name: TypeName::from_dds(chunks[10])?,
                hash: HashChunk::parse(chunks[11])?,
                qos: Qos::parse(chunks[12]).ok_or_else(bad)?,
            })
        } else {
            None
        };
        let root = |s: &str| if s == "%" { String::new() } else { demangle(s) };
        Ok(Self {
            domain: chunks[1].parse().map_err(|_| bad())?,
            session: chunks[2].to_owned(),
            node_id: chunks[3].parse().map_err(|_| bad())?,
            entity_id: chunks[4].parse().map_err(|_| bad())?,
            kind,
            enclave: root(chunks[6]),
            namespace: root(chunks[7]),
            node: chunks[8].to_owned(),
            topic,
        })
    }
}

impl fmt::Display for LivelinessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = if self.namespace == "/" {
            ""
        } else {
            &self.namespace
        };
        write!(
            f,
            "@ros2_lv/{}/{}/{}/{}/{}/{}/{}/{}",
            self.domain,
            self.session,
            self.node_id,
            self.entity_id,
            self.kind.code(),
            mangle(&self.enclave),
            mangle(ns),
            self.node
        )?;
        if let Some(t) = &self.topic {
            write!(
                f,
                "/{}/{}/{}/{}",
                mangle(t.topic.as_str()),
                t.type_name.dds(),
                t.hash,
                t.qos
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRING_HASH: &str =
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

    /// The examples of rmw_zenoh's design document.
    #[test]
    fn design_document_examples_round_trip() {
        for key in [
            format!("0/chatter/std_msgs::msg::dds_::String_/{STRING_HASH}"),
            format!("0/robot1/chatter/std_msgs::msg::dds_::String_/{STRING_HASH}"),
            "0/chatter/std_msgs::msg::dds_::Int32_/TypeHashNotSupported".to_owned(),
        ] {
            let parsed = DataKey::parse(&key).unwrap();
            assert_eq!(parsed.to_string(), key);
        }
        let k = DataKey::parse(&format!(
            "0/robot1/chatter/std_msgs::msg::dds_::String_/{STRING_HASH}"
        ))
        .unwrap();
        assert_eq!(k.topic.as_str(), "/robot1/chatter");
        assert_eq!(k.type_name.as_str(), "std_msgs/msg/String");
        assert_eq!(DataKey::any_type(0, &k.topic), "0/robot1/chatter/*/*");

        for token in [
            "@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/0/NN/%/%/listener".to_owned(),
            format!(
                "@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/10/MS/%/%/listener/%chatter/std_msgs::msg::dds_::String_/{STRING_HASH}/::,10:,:,:,,"
            ),
            format!(
                "@ros2_lv/0/aac3178e146ba6f1fc6e6a4085e77f21/0/11/MP/%/%ns/talker/%ns%chatter/std_msgs::msg::dds_::String_/{STRING_HASH}/::,7:,:,:,,"
            ),
        ] {
            let parsed = LivelinessToken::parse(&token).unwrap();
            assert_eq!(parsed.to_string(), token);
        }
        let t = LivelinessToken::parse(&format!(
            "@ros2_lv/2/aac3178e146ba6f1fc6e6a4085e77f21/0/10/MS/%/%/listener/%chatter/std_msgs::msg::dds_::String_/{STRING_HASH}/::,10:,:,:,,"
        ))
        .unwrap();
        assert_eq!(t.kind, EntityKind::Subscription);
        let info = t.topic.unwrap();
        assert_eq!(info.topic.as_str(), "/chatter");
        assert_eq!(info.qos.depth, Some(10));
        assert!(!info.qos.best_effort);
    }

    #[test]
    fn older_explicit_qos_is_read() {
        let qos = Qos::parse("1:2:1,10:,:,:,,").unwrap();
        assert_eq!(qos.depth, Some(10));
        assert!(!qos.best_effort && !qos.transient_local);
        assert_eq!(Qos::parse("2:1:2,:,:,:,,").unwrap().depth, None);
        assert!(Qos::parse("::,10").is_none());
    }

    #[test]
    fn bad_names_and_keys_are_errors() {
        for name in ["", "/", "//a", "/a//b", "/1a", "/a-b", "/a/"] {
            assert!(Topic::parse(name).is_err(), "{name}");
        }
        for key in [
            "",
            "x/chatter/a::msg::dds_::B_/TypeHashNotSupported",
            "0/a::msg::dds_::B_/x",
            "0/t/bad/TypeHashNotSupported",
            "0/t/a::msg::dds_::B_/RIHS01_00",
        ] {
            assert!(DataKey::parse(key).is_err(), "{key}");
        }
        for token in [
            "@ros2_lv/0/z/0/0/XX/%/%/n",
            "@ros2_lv/0/z/0/0/MP/%/%/n",
            "ros2_lv/0/z/0/0/NN/%/%/n",
            "@ros2_lv/0/z/a/0/NN/%/%/n",
        ] {
            assert!(LivelinessToken::parse(token).is_err(), "{token}");
        }
    }
}
