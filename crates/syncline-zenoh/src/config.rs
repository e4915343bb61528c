//! Zenoh session configuration for syncline: peer to peer on explicit
//! endpoints, no multicast scouting, a short lease so a lost peer is
//! reported quickly.

use std::path::Path;
use std::time::Duration;

use crate::Error;

/// How a syncline process joins the zenoh network.
///
/// The defaults: peer mode, no listening, no multicast or gossip scouting
/// (only the endpoints given are used), a 1 s lease (a peer whose host
/// vanishes is reported within a second; a killed process is reported at
/// once, its TCP connection closes), reconnection every 0.2-1 s.
///
/// ```
/// let config = syncline_zenoh::NetConfig::new()
///     .listen("tcp/127.0.0.1:0")
///     .connect("tcp/127.0.0.1:7447");
/// let zenoh_config = config.to_zenoh().unwrap();
/// # let _ = zenoh_config;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct NetConfig {
    /// Endpoints to listen on (`tcp/127.0.0.1:7447`).
    pub listen: Vec<String>,
    /// Endpoints to connect to (peers or a router); retried until they answer.
    pub connect: Vec<String>,
    /// How long a silent link lives before its peer is declared gone.
    pub lease: Duration,
    /// Connect as a client of a zenoh router instead of as a peer.
    pub client: bool,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            listen: Vec::new(),
            connect: Vec::new(),
            lease: Duration::from_secs(1),
            client: false,
        }
    }
}

impl NetConfig {
    /// The defaults (see the type's documentation).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an endpoint to listen on.
    pub fn listen(mut self, endpoint: impl Into<String>) -> Self {
        self.listen.push(endpoint.into());
        self
    }

    /// Adds an endpoint to connect to.
    pub fn connect(mut self, endpoint: impl Into<String>) -> Self {
        self.connect.push(endpoint.into());
        self
    }

    /// Sets the lease.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The zenoh configuration.
    pub fn to_zenoh(&self) -> Result<zenoh::Config, Error> {
        let mut c = zenoh::Config::default();
        let json = |v: &[String]| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
        let set = |c: &mut zenoh::Config, k: &str, v: &str| {
            c.insert_json5(k, v)
                .map_err(|e| Error::Config(format!("{k}: {e}")))
        };
        set(
            &mut c,
            "mode",
            if self.client {
                "\"client\""
            } else {
                "\"peer\""
            },
        )?;
        set(&mut c, "listen/endpoints", &json(&self.listen))?;
        set(&mut c, "connect/endpoints", &json(&self.connect))?;
        set(&mut c, "scouting/multicast/enabled", "false")?;
        set(&mut c, "scouting/gossip/enabled", "false")?;
        set(
            &mut c,
            "connect/retry",
            "{period_init_ms: 200, period_max_ms: 1000, period_increase_factor: 2}",
        )?;
        let lease = self.lease.as_millis().clamp(100, u32::MAX as u128);
        set(&mut c, "transport/link/tx/lease", &lease.to_string())?;
        Ok(c)
    }

    /// Opens a zenoh session with this configuration.
    pub async fn open(&self) -> Result<zenoh::Session, Error> {
        open(self.to_zenoh()?).await
    }
}

/// Opens a zenoh session from a zenoh configuration file (JSON5), for
/// setups [`NetConfig`] does not cover (routers, TLS, access control).
pub async fn open_file(path: &Path) -> Result<zenoh::Session, Error> {
    let c = zenoh::Config::from_file(path).map_err(|e| Error::Config(e.to_string()))?;
    open(c).await
}

/// Opens a zenoh session (needs a multi-thread tokio runtime).
pub async fn open(config: zenoh::Config) -> Result<zenoh::Session, Error> {
    zenoh::open(config).await.map_err(Error::zenoh)
}
