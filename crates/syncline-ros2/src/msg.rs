//! ROS 2 message definitions (`.msg` text), their type descriptions and
//! RIHS01 type hashes (REP-2011), and the `ros2msg` schema text that MCAP
//! recordings carry.
//!
//! The type hash is what rmw_zenoh puts in every data key expression
//! (`0/chatter/std_msgs::msg::dds_::String_/RIHS01_df66…`): a publisher must
//! use the hash its subscribers use, or the keys do not intersect. It is the
//! SHA-256 of the type description (the type and every type it refers to,
//! field names and types only: comments, constants and default values do
//! not count) written as JSON the way `rosidl_generator_type_description`
//! writes it.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::defs::DEFINITIONS;

/// A malformed message definition or type name, or a type the registry
/// does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MsgError {
    /// A line of a `.msg` text could not be read.
    #[error("{type_name}, line {line}: {reason}")]
    Parse {
        /// The type being defined.
        type_name: String,
        /// 1-based line of its text.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A type name is not of the form `package/msg/Name` (or `package/Name`).
    #[error("bad type name {0:?}: expected package/msg/Name")]
    BadTypeName(String),
    /// A type that no definition in the registry gives.
    #[error("unknown message type {0}")]
    UnknownType(String),
    /// Types that refer to each other in a cycle (no valid message has one).
    #[error("message type {0} refers to itself")]
    Recursive(String),
    /// A type hash string is not `RIHS01_` and 64 hex digits.
    #[error("bad type hash {0:?}: expected RIHS01_ and 64 hex digits")]
    BadHash(String),
}

/// A full message type name, `package/msg/Name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TypeName(String);

impl TypeName {
    /// Reads `package/msg/Name`, or `package/Name` (as `.msg` files and
    /// MCAP schemas write it), into `package/msg/Name`.
    pub fn parse(name: &str) -> Result<Self, MsgError> {
        let bad = || MsgError::BadTypeName(name.to_owned());
        let parts: Vec<&str> = name.split('/').collect();
        let (pkg, ty) = match parts.as_slice() {
            [pkg, "msg", ty] | [pkg, ty] => (*pkg, *ty),
            _ => return Err(bad()),
        };
        if !is_identifier(pkg) || !is_identifier(ty) {
            return Err(bad());
        }
        Ok(Self(format!("{pkg}/msg/{ty}")))
    }

    /// Reads the DDS name rmw_zenoh puts in key expressions,
    /// `package::msg::dds_::Name_`.
    pub fn from_dds(dds: &str) -> Result<Self, MsgError> {
        let bad = || MsgError::BadTypeName(dds.to_owned());
        let (pkg, rest) = dds.split_once("::").ok_or_else(bad)?;
        let (kind, rest) = rest.split_once("::dds_::").ok_or_else(bad)?;
        let ty = rest.strip_suffix('_').ok_or_else(bad)?;
        if kind != "msg" || !is_identifier(pkg) || !is_identifier(ty) {
            return Err(bad());
        }
        Ok(Self(format!("{pkg}/msg/{ty}")))
    }

    /// `package/msg/Name`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The package.
    pub fn package(&self) -> &str {
        self.0.split('/').next().unwrap_or_default()
    }

    /// The type's own name, without its package.
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or_default()
    }

    /// The DDS name rmw_zenoh uses in key expressions:
    /// `package::msg::dds_::Name_`.
    pub fn dds(&self) -> String {
        format!("{}::msg::dds_::{}_", self.package(), self.name())
    }

    /// `package/Name`, the form `.msg` texts and `ros2msg` schemas use.
    pub fn short(&self) -> String {
        format!("{}/{}", self.package(), self.name())
    }
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The base type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseType {
    /// A primitive: its type id in `type_description_interfaces/FieldType`
    /// (`bool` 15, `int32` 6, `float64` 11, `string` 17, ...).
    Primitive(u8),
    /// A bounded string, `string<=N` (or `wstring<=N`).
    BoundedString {
        /// `true` for `wstring`.
        wide: bool,
        /// The bound.
        capacity: u64,
    },
    /// Another message type.
    Nested(TypeName),
}

/// How many values a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// One.
    Single,
    /// `T[N]`.
    Array(u64),
    /// `T[<=N]`.
    Bounded(u64),
    /// `T[]`.
    Sequence,
}

/// One field of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// Its base type.
    pub base: BaseType,
    /// Scalar, array or sequence.
    pub arity: Arity,
}

impl Field {
    /// `(type_id, capacity, string_capacity, nested_type_name)` as the
    /// type description writes them.
    fn description(&self) -> (u32, u64, u64, &str) {
        let (base_id, string_capacity, nested) = match &self.base {
            BaseType::Primitive(id) => (u32::from(*id), 0, ""),
            BaseType::BoundedString { wide, capacity } => {
                (if *wide { 22 } else { 21 }, *capacity, "")
            }
            BaseType::Nested(name) => (1, 0, name.as_str()),
        };
        let (offset, capacity) = match self.arity {
            Arity::Single => (0, 0),
            Arity::Array(n) => (48, n),
            Arity::Bounded(n) => (96, n),
            Arity::Sequence => (144, 0),
        };
        (base_id + offset, capacity, string_capacity, nested)
    }
}

/// A parsed message definition: its name and its fields, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageDefinition {
    name: TypeName,
    fields: Vec<Field>,
}

impl MessageDefinition {
    /// Parses the `.msg` text of type `name` (`package/msg/Name`).
    /// Comments, constants and default values are read over.
    pub fn parse(name: &str, text: &str) -> Result<Self, MsgError> {
        let name = TypeName::parse(name)?;
        let mut fields = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let err = |reason: &str| MsgError::Parse {
                type_name: name.to_string(),
                line: i + 1,
                reason: reason.to_owned(),
            };
            let line = raw.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let mut tokens = line.split_whitespace();
            let ty = tokens.next().ok_or_else(|| err("no type"))?;
            let rest = line[ty.len()..].trim_start();
            if rest.is_empty() {
                return Err(err("a type without a field name"));
            }
            let field_name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let after = rest[field_name.len()..].trim_start();
            if after.starts_with('=') {
                continue; // a constant
            }
            if !is_identifier(&field_name) {
                return Err(err("a field name must be an identifier"));
            }
            let (base, arity) = parse_type(ty, &name).map_err(|r| err(&r))?;
            fields.push(Field {
                name: field_name,
                base,
                arity,
            });
        }
        Ok(Self { name, fields })
    }

    /// The type's name.
    pub fn name(&self) -> &TypeName {
        &self.name
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// Whether the first field is a `std_msgs/Header`, so that the
    /// message's CDR bytes start with its stamp.
    pub fn starts_with_header(&self) -> bool {
        matches!(self.fields.first(), Some(Field { base: BaseType::Nested(n), arity: Arity::Single, .. })
            if n.as_str() == "std_msgs/msg/Header")
    }
}

fn parse_type(ty: &str, owner: &TypeName) -> Result<(BaseType, Arity), String> {
    let (base, arity) = match ty.find('[') {
        None => (ty, Arity::Single),
        Some(at) => {
            let inner = ty[at + 1..]
                .strip_suffix(']')
                .ok_or("an array type must end in ]")?;
            let arity = if inner.is_empty() {
                Arity::Sequence
            } else if let Some(n) = inner.strip_prefix("<=") {
                Arity::Bounded(n.parse().map_err(|_| "a bad array bound")?)
            } else {
                Arity::Array(inner.parse().map_err(|_| "a bad array size")?)
            };
            (&ty[..at], arity)
        }
    };
    let primitive = |id| Ok((BaseType::Primitive(id), arity));
    match base {
        "bool" => primitive(15),
        "byte" => primitive(16),
        "char" | "uint8" => primitive(3),
        "int8" => primitive(2),
        "int16" => primitive(4),
        "uint16" => primitive(5),
        "int32" => primitive(6),
        "uint32" => primitive(7),
        "int64" => primitive(8),
        "uint64" => primitive(9),
        "float32" => primitive(10),
        "float64" => primitive(11),
        "string" => primitive(17),
        "wstring" => primitive(18),
        _ => {
            for (prefix, wide) in [("string<=", false), ("wstring<=", true)] {
                if let Some(n) = base.strip_prefix(prefix) {
                    let capacity = n.parse().map_err(|_| "a bad string bound")?;
                    return Ok((BaseType::BoundedString { wide, capacity }, arity));
                }
            }
            let nested = if base.contains('/') {
                TypeName::parse(base)
            } else {
                TypeName::parse(&format!("{}/{base}", owner.package()))
            };
            Ok((BaseType::Nested(nested.map_err(|e| e.to_string())?), arity))
        }
    }
}

/// A RIHS01 type hash: SHA-256 of a type description.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeHash(pub [u8; 32]);

impl fmt::Display for TypeHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RIHS01_")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for TypeHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for TypeHash {
    type Err = MsgError;

    fn from_str(s: &str) -> Result<Self, MsgError> {
        let bad = || MsgError::BadHash(s.to_owned());
        let hex = s.strip_prefix("RIHS01_").ok_or_else(bad)?;
        if hex.len() != 64 || !hex.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Self(out))
    }
}

/// Message definitions by type name: the shipped ones, those a user adds,
/// or those read from an MCAP `ros2msg` schema.
#[derive(Debug, Clone, Default)]
pub struct MessageRegistry {
    defs: BTreeMap<TypeName, MessageDefinition>,
}

/// The separator between definitions in a `ros2msg` schema.
const SCHEMA_SEPARATOR: &str =
    "================================================================================";

impl MessageRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The definitions syncline ships: `sensor_msgs` Imu, Image,
    /// CameraInfo, PointCloud2, LaserScan, NavSatFix; the `geometry_msgs`
    /// *Stamped types; `nav_msgs/Odometry`; `std_msgs/String`; and every type
    /// they use.
    pub fn shipped() -> Self {
        let mut registry = Self::new();
        for (name, text) in DEFINITIONS {
            // The shipped texts are parsed by a unit test.
            if let Ok(def) = MessageDefinition::parse(name, text) {
                registry.insert(def);
            }
        }
        registry
    }

    /// Adds (or replaces) a definition.
    pub fn insert(&mut self, def: MessageDefinition) {
        self.defs.insert(def.name.clone(), def);
    }

    /// Parses and adds the `.msg` text of type `name`.
    pub fn add(&mut self, name: &str, text: &str) -> Result<(), MsgError> {
        self.insert(MessageDefinition::parse(name, text)?);
        Ok(())
    }

    /// Reads an MCAP `ros2msg` schema: the text of `name`, then each type it
    /// uses after a line of `=` and a line `MSG: package/Name`.
    pub fn from_ros2msg_schema(name: &str, schema: &str) -> Result<Self, MsgError> {
        let mut registry = Self::new();
        let mut current = name.to_owned();
        let mut text = String::new();
        for line in schema.lines() {
            if line.trim() == SCHEMA_SEPARATOR {
                registry.add(&current, &text)?;
                text.clear();
                current.clear();
            } else if current.is_empty() {
                match line.trim().strip_prefix("MSG:") {
                    Some(n) => current = n.trim().to_owned(),
                    None if line.trim().is_empty() => {}
                    None => return Err(MsgError::BadTypeName(line.to_owned())),
                }
            } else {
                text.push_str(line);
                text.push('\n');
            }
        }
        if !current.is_empty() {
            registry.add(&current, &text)?;
        }
        Ok(registry)
    }

    /// The definition of `name` (`package/msg/Name` or `package/Name`).
    pub fn get(&self, name: &str) -> Option<&MessageDefinition> {
        self.defs.get(&TypeName::parse(name).ok()?)
    }

    /// The type names the registry defines.
    pub fn names(&self) -> impl Iterator<Item = &TypeName> {
        self.defs.keys()
    }

    /// `name` and every type it uses, each once: `name` first, then the
    /// others sorted by name.
    fn closure(&self, name: &TypeName) -> Result<Vec<&MessageDefinition>, MsgError> {
        let root = self
            .defs
            .get(name)
            .ok_or_else(|| MsgError::UnknownType(name.to_string()))?;
        let mut seen: BTreeMap<&TypeName, &MessageDefinition> = BTreeMap::new();
        let mut stack = vec![root];
        while let Some(def) = stack.pop() {
            for field in &def.fields {
                if let BaseType::Nested(n) = &field.base {
                    let nested = self
                        .defs
                        .get(n)
                        .ok_or_else(|| MsgError::UnknownType(n.to_string()))?;
                    if n == name {
                        return Err(MsgError::Recursive(name.to_string()));
                    }
                    if seen.insert(n, nested).is_none() {
                        stack.push(nested);
                    }
                }
            }
        }
        Ok(std::iter::once(root).chain(seen.into_values()).collect())
    }

    /// The RIHS01 type hash of `name` (REP-2011), as ROS 2 computes it.
    pub fn type_hash(&self, name: &str) -> Result<TypeHash, MsgError> {
        let name = TypeName::parse(name)?;
        let defs = self.closure(&name)?;
        let mut json = String::from("{\"type_description\": ");
        write_description(&mut json, defs[0]);
        json.push_str(", \"referenced_type_descriptions\": [");
        for (i, def) in defs[1..].iter().enumerate() {
            if i > 0 {
                json.push_str(", ");
            }
            write_description(&mut json, def);
        }
        json.push_str("]}");
        Ok(TypeHash(Sha256::digest(json.as_bytes()).into()))
    }

    /// The `ros2msg` schema text of `name` for an MCAP recording: its own
    /// definition, then each type it uses (rosbag2's layout).
    pub fn ros2msg_schema(&self, name: &str) -> Result<String, MsgError> {
        let name = TypeName::parse(name)?;
        let defs = self.closure(&name)?;
        let mut out = String::new();
        for (i, def) in defs.iter().enumerate() {
            if i > 0 {
                out.push_str(SCHEMA_SEPARATOR);
                out.push_str("\nMSG: ");
                out.push_str(&def.name.short());
                out.push('\n');
            }
            for field in &def.fields {
                write_field_line(&mut out, field);
            }
        }
        Ok(out)
    }
}

fn write_field_line(out: &mut String, field: &Field) {
    match &field.base {
        BaseType::Primitive(id) => out.push_str(primitive_name(*id)),
        BaseType::BoundedString { wide, capacity } => {
            out.push_str(if *wide { "wstring<=" } else { "string<=" });
            out.push_str(&capacity.to_string());
        }
        BaseType::Nested(n) => out.push_str(&n.short()),
    }
    match field.arity {
        Arity::Single => {}
        Arity::Array(n) => out.push_str(&format!("[{n}]")),
        Arity::Bounded(n) => out.push_str(&format!("[<={n}]")),
        Arity::Sequence => out.push_str("[]"),
    }
    out.push(' ');
    out.push_str(&field.name);
    out.push('\n');
}

fn primitive_name(id: u8) -> &'static str {
    match id {
        2 => "int8",
        3 => "uint8",
        4 => "int16",
        5 => "uint16",
        6 => "int32",
        7 => "uint32",
        8 => "int64",
        9 => "uint64",
        10 => "float32",
        11 => "float64",
        15 => "bool",
        16 => "byte",
        18 => "wstring",
        _ => "string",
    }
}

/// Writes one type description as Python's `json.dumps` with separators
/// `", "` and `": "` writes it (the form the hash is taken over).
fn write_description(json: &mut String, def: &MessageDefinition) {
    json.push_str("{\"type_name\": ");
    write_json_string(json, def.name.as_str());
    json.push_str(", \"fields\": [");
    for (i, field) in def.fields.iter().enumerate() {
        if i > 0 {
            json.push_str(", ");
        }
        let (type_id, capacity, string_capacity, nested) = field.description();
        json.push_str("{\"name\": ");
        write_json_string(json, &field.name);
        json.push_str(&format!(
            ", \"type\": {{\"type_id\": {type_id}, \"capacity\": {capacity}, \
             \"string_capacity\": {string_capacity}, \"nested_type_name\": "
        ));
        write_json_string(json, nested);
        json.push_str("}}");
    }
    json.push_str("]}");
}

fn write_json_string(json: &mut String, s: &str) {
    json.push('"');
    for c in s.chars() {
        match c {
            '"' => json.push_str("\\\""),
            '\\' => json.push_str("\\\\"),
            c if c.is_ascii() && !c.is_ascii_control() => json.push(c),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    json.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    json.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hashes published by ROS 2 installations (rmw_zenoh key expressions).
    const GOLDEN: &[(&str, &str)] = &[
        (
            "std_msgs/msg/String",
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
        ),
        (
            "sensor_msgs/msg/Imu",
            "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b",
        ),
        (
            "nav_msgs/msg/Odometry",
            "RIHS01_3cc97dc7fb7502f8714462c526d369e35b603cfc34d946e3f2eda2766dfec6e0",
        ),
        (
            "sensor_msgs/msg/PointCloud2",
            "RIHS01_9198cabf7da3796ae6fe19c4cb3bdd3525492988c70522628af5daa124bae2b5",
        ),
    ];

    #[test]
    fn every_shipped_definition_parses_and_resolves() {
        let registry = MessageRegistry::shipped();
        assert_eq!(registry.names().count(), DEFINITIONS.len());
        for (name, _) in DEFINITIONS {
            registry.type_hash(name).unwrap();
            registry.ros2msg_schema(name).unwrap();
        }
    }

    #[test]
    fn type_hashes_match_those_of_ros_2() {
        let registry = MessageRegistry::shipped();
        for (name, hash) in GOLDEN {
            assert_eq!(
                registry.type_hash(name).unwrap().to_string(),
                *hash,
                "{name}"
            );
            assert_eq!(hash.parse::<TypeHash>().unwrap().to_string(), *hash);
        }
    }

    #[test]
    fn a_schema_round_trips_to_the_same_hash() {
        let registry = MessageRegistry::shipped();
        for (name, _) in DEFINITIONS {
            let schema = registry.ros2msg_schema(name).unwrap();
            let read = MessageRegistry::from_ros2msg_schema(name, &schema).unwrap();
            assert_eq!(read.type_hash(name), registry.type_hash(name), "{name}");
        }
    }

    #[test]
    fn comments_constants_and_defaults_do_not_change_the_hash() {
        let mut registry = MessageRegistry::shipped();
        registry
            .add(
                "std_msgs/msg/String",
                "# a comment\nint32 SOME_CONSTANT = 3\nstring FOO=\"#x\"\nstring data \"hello\" # default\n",
            )
            .unwrap();
        assert_eq!(
            registry
                .type_hash("std_msgs/msg/String")
                .unwrap()
                .to_string(),
            GOLDEN[0].1
        );
    }

    #[test]
    fn headers_are_found_first() {
        let registry = MessageRegistry::shipped();
        assert!(
            registry
                .get("sensor_msgs/msg/Imu")
                .unwrap()
                .starts_with_header()
        );
        assert!(
            registry
                .get("sensor_msgs/Imu")
                .unwrap()
                .starts_with_header()
        );
        assert!(
            !registry
                .get("std_msgs/msg/String")
                .unwrap()
                .starts_with_header()
        );
        assert!(
            !registry
                .get("geometry_msgs/msg/Pose")
                .unwrap()
                .starts_with_header()
        );
    }

    #[test]
    fn type_names_convert_between_forms() {
        let name = TypeName::parse("sensor_msgs/Imu").unwrap();
        assert_eq!(name.as_str(), "sensor_msgs/msg/Imu");
        assert_eq!(name.dds(), "sensor_msgs::msg::dds_::Imu_");
        assert_eq!(
            TypeName::from_dds("sensor_msgs::msg::dds_::Imu_").unwrap(),
            name
        );
        for bad in ["", "a", "a/b/c/d", "a/srv/B", "1a/B", "a/msg/", "a::msg::B"] {
            assert!(TypeName::parse(bad).is_err() || TypeName::from_dds(bad).is_err());
        }
        assert!(TypeName::from_dds("a::srv::dds_::B_").is_err());
    }

    #[test]
    fn bad_definitions_are_errors() {
        for text in [
            "int32",
            "int32[ x",
            "int32[a] x",
            "string<=q x",
            "int32 9x",
            "Foo/Bar/Baz x",
        ] {
            assert!(MessageDefinition::parse("a/msg/B", text).is_err(), "{text}");
        }
        let mut registry = MessageRegistry::new();
        registry.add("a/msg/B", "C c\n").unwrap();
        assert_eq!(
            registry.type_hash("a/msg/B"),
            Err(MsgError::UnknownType("a/msg/C".into()))
        );
        registry.add("a/msg/C", "B b\n").unwrap();
        assert!(matches!(
            registry.type_hash("a/msg/B"),
            Err(MsgError::Recursive(_))
        ));
    }

    #[test]
    fn arrays_bounds_and_strings_have_their_type_ids() {
        let def = MessageDefinition::parse(
            "a/msg/B",
            "int32[3] a\nint32[<=4] b\nint32[] c\nstring<=5 d\nstring<=5[2] e\nbyte f\nchar g\n",
        )
        .unwrap();
        let ids: Vec<_> = def.fields().iter().map(|f| f.description()).collect();
        assert_eq!(ids[0], (54, 3, 0, ""));
        assert_eq!(ids[1], (102, 4, 0, ""));
        assert_eq!(ids[2], (150, 0, 0, ""));
        assert_eq!(ids[3], (21, 0, 5, ""));
        assert_eq!(ids[4], (69, 2, 5, ""));
        assert_eq!(ids[5], (16, 0, 0, ""));
        assert_eq!(ids[6], (3, 0, 0, ""));
    }
}
