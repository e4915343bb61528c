//! Two hosts: the coordinator in one Linux network namespace, the three
//! participants in another, joined by a veth pair with addresses inside
//! those namespaces. The link goes down for 2 s mid-run and comes back:
//! simulated time resumes where it was, nothing lost or repeated.
//!
//! Needs root and `ip` (iproute2); skips itself with a message otherwise.
//! The namespaces are named per test run and deleted even on failure.

mod net;

use std::process::Command;
use std::time::Duration;

use net::{Proc, check_grid_prefix, free_port, unique_prefix};

/// Runs `ip ARGS`; true on success.
fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Two namespaces joined by a veth pair; deleted on drop.
struct Hosts {
    a: String,
    b: String,
    veth_b: String,
}

impl Hosts {
    /// `None` (with a message) where namespaces cannot be made.
    fn create() -> Option<Hosts> {
        let tag = format!(
            "{}{}",
            std::process::id() % 100_000,
            unique_prefix().len() % 10
        );
        let hosts = Hosts {
            a: format!("slA{tag}"),
            b: format!("slB{tag}"),
            veth_b: format!("slvb{tag}"),
        };
        let veth_a = format!("slva{tag}");
        if !ip(&["netns", "add", &hosts.a]) {
            eprintln!("SKIPPED: cannot create network namespaces (needs root and iproute2's `ip`)");
            return None;
        }
        let ok = ip(&["netns", "add", &hosts.b])
            && ip(&[
                "link",
                "add",
                &veth_a,
                "type",
                "veth",
                "peer",
                "name",
                &hosts.veth_b,
            ])
            && ip(&["link", "set", &veth_a, "netns", &hosts.a])
            && ip(&["link", "set", &hosts.veth_b, "netns", &hosts.b])
            && ip(&[
                "-n",
                &hosts.a,
                "addr",
                "add",
                "10.77.0.1/24",
                "dev",
                &veth_a,
            ])
            && ip(&[
                "-n",
                &hosts.b,
                "addr",
                "add",
                "10.77.0.2/24",
                "dev",
                &hosts.veth_b,
            ])
            && ip(&["-n", &hosts.a, "link", "set", "lo", "up"])
            && ip(&["-n", &hosts.b, "link", "set", "lo", "up"])
            && ip(&["-n", &hosts.a, "link", "set", &veth_a, "up"])
            && ip(&["-n", &hosts.b, "link", "set", &hosts.veth_b, "up"]);
        assert!(ok, "setting up the namespaces failed");
        Some(hosts)
    }

    fn link(&self, up: bool) {
        let state = if up { "up" } else { "down" };
        assert!(ip(&["-n", &self.b, "link", "set", &self.veth_b, state]));
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        ip(&["netns", "del", &self.a]);
        ip(&["netns", "del", &self.b]);
    }
}

#[test]
fn a_run_across_two_namespaces_survives_a_two_second_link_loss() {
    let Some(hosts) = Hosts::create() else { return };
    let port = free_port();
    let prefix = unique_prefix();
    let ep = format!("tcp/10.77.0.1:{port}");
    let in_a = ["ip", "netns", "exec", hosts.a.as_str()];
    let in_b = ["ip", "netns", "exec", hosts.b.as_str()];
    let steps = 4000;
    let steps_s = steps.to_string();
    let coord = Proc::coordinator_in(
        &in_a,
        &ep,
        &prefix,
        "a,b,c",
        &[
            "--sim",
            "--steps",
            &steps_s,
            "--on-leave",
            "wait",
            "--answer-timeout-ms",
            "10000",
        ],
    );
    let grids = [
        ("a", 1_000_000i64, 0i64),
        ("b", 2_000_000, 1_000_000),
        ("c", 4_000_000, 0),
    ];
    let parts: Vec<_> = grids
        .iter()
        .map(|(n, p, o)| {
            let extra = ["--work-ns", "300000"];
            (
                n.to_string(),
                *p,
                *o,
                Proc::participant_in(&in_b, &ep, &prefix, n, *p, *o, &extra),
            )
        })
        .collect();
    assert!(
        parts[0].3.wait_lines(300, Duration::from_secs(60)),
        "a never ran 300 steps"
    );
    hosts.link(false);
    std::thread::sleep(Duration::from_secs(2));
    let during = parts[0].3.count();
    hosts.link(true);
    let c_out = coord.finish(Duration::from_secs(120));
    assert_eq!(c_out.status, Some(0), "coordinator: {}", c_out.stderr);
    let events = c_out.events();
    eprintln!(
        "events: {:?}",
        events
            .iter()
            .filter(|e| e.get("event").is_some())
            .collect::<Vec<_>>()
    );
    let summary = &events.last().expect("a summary")["summary"];
    assert_eq!(summary["steps"], steps, "the run ended correctly");
    assert_eq!(summary["link"]["gaps"], 0);
    let mut total = 0;
    for (name, p, o, proc) in parts {
        let out = proc.finish(Duration::from_secs(30));
        assert_eq!(out.status, Some(0), "{name}: {}", out.stderr);
        let ts = out.times(&name);
        // Nothing lost, nothing repeated: the whole grid, once, in order.
        check_grid_prefix(&name, &ts, p, o);
        total += ts.len();
    }
    eprintln!("a had run {during} steps when the link came back; {total} callbacks in all");
}
