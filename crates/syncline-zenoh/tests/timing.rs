//! The library's coordinator and participant shells, unchanged, over the
//! zenoh transport: separate zenoh sessions on loopback in one process
//! (the CLI's tests run them as separate processes).

use std::time::Duration;

use syncline::clock::SystemClock;
use syncline::core::timer::{CoordinatorConfig, Grid, Phase, SimParticipant};
use syncline::timer::{Ended, SimClock, StopSignal, TimingCoordinator, run_simulated};
use syncline::{TimeDelta, Timestamp};
use syncline_zenoh::{NetConfig, TimingConfig, ZenohCoordinator, ZenohParticipant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timing_coordinator_and_run_simulated_work_over_zenoh() {
    let ep = format!("tcp/127.0.0.1:{}", free_port());
    let timing = TimingConfig::default().prefix(format!("test/{}", std::process::id()));
    let coord_session = NetConfig::new().listen(&ep).open().await.unwrap();
    let transport = ZenohCoordinator::new(&coord_session, &timing)
        .await
        .unwrap();
    let config = CoordinatorConfig::simulated().expect(["fast", "slow"]);
    let coordinator = TimingCoordinator::spawn(config, transport, SystemClock).unwrap();

    let mut runs = vec![];
    for (name, period_ms) in [("fast", 1), ("slow", 3)] {
        let session = NetConfig::new().connect(&ep).open().await.unwrap();
        let mut link = ZenohParticipant::new(&session, name, &timing)
            .await
            .unwrap();
        runs.push(tokio::spawn(async move {
            let grid = Grid::new(TimeDelta::from_millis(period_ms), TimeDelta::ZERO).unwrap();
            let mut core = SimParticipant::new(grid, Timestamp::EPOCH).unwrap();
            let (clock, stop) = (SimClock::default(), StopSignal::new());
            let mut seen = vec![];
            let ended = run_simulated(
                &mut link,
                &mut core,
                &clock,
                &stop,
                |t| {
                    seen.push(t.as_nanos());
                    // Both stop locally at simulated time 90 ms.
                    if t >= Timestamp::from_nanos(90_000_000) {
                        stop.stop();
                    }
                },
                None,
            )
            .await;
            drop(link);
            session.close().await.unwrap();
            (ended, seen, period_ms)
        }));
    }
    for run in runs {
        let (ended, seen, period_ms) = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the run ends")
            .unwrap();
        assert_eq!(ended, Ended::Stopped);
        let want: Vec<i64> = (0..=90 / period_ms)
            .map(|k| k * period_ms * 1_000_000)
            .collect();
        assert_eq!(seen, want, "every trigger once, in order");
    }
    coordinator.stop();
    let status = coordinator.join().await.unwrap();
    assert_eq!(status.phase, Phase::Stopped);
    coord_session.close().await.unwrap();
}

/// Under `ONE_THREAD_RUNTIME`, frames sent one after another with no wait
/// in between (as the last participant to join does: a repeated ready
/// report, the report entering the simulated loop, the report after its
/// first step) must not stop zenoh's only thread. Each frame takes one of
/// the link's two batches until zenoh's sending task, on that same thread,
/// writes it; a third put used to wait for a batch there, so the process's
/// keep-alives stopped too and its peer dropped it after the lease.
///
/// Zenoh reads `ZENOH_RUNTIME` once, at its first use: the test runs itself
/// again in a child process with the variable set.
#[test]
fn frames_sent_without_a_wait_do_not_stop_the_one_zenoh_thread() {
    const CHILD: &str = "SYNCLINE_TEST_ONE_ZENOH_THREAD";
    const NAME: &str = "frames_sent_without_a_wait_do_not_stop_the_one_zenoh_thread";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
            .args(["--exact", NAME, "--nocapture", "--test-threads", "1"])
            .env(CHILD, "1")
            .env("ZENOH_RUNTIME", syncline_zenoh::ONE_THREAD_RUNTIME)
            .output()
            .expect("run the test again");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let rt = syncline_zenoh::zenoh_runtime();
    rt.block_on(rt.spawn(frames_in_a_row())).unwrap();
}

async fn frames_in_a_row() {
    use syncline::core::timer::Signal;
    use syncline::timer::{CoordinatorTransport, Inbound, Outbound, ParticipantTransport, PeerKey};
    const N: usize = 20;
    let ep = format!("tcp/127.0.0.1:{}", free_port());
    let timing = TimingConfig::default().prefix(format!("test/{}/row", std::process::id()));
    let c_session = NetConfig::new().listen(&ep).open().await.unwrap();
    let mut coord = ZenohCoordinator::new(&c_session, &timing).await.unwrap();
    let p_session = NetConfig::new().connect(&ep).open().await.unwrap();
    let mut part = ZenohParticipant::new(&p_session, "p", &timing)
        .await
        .unwrap();
    // Both ends know each other (the participant has adopted the coordinator).
    let mut peer: Option<PeerKey> = None;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while peer.is_none() || !part.coordinator_alive() {
        assert!(tokio::time::Instant::now() < deadline, "no link");
        if let Ok(Some(Inbound::Join { peer: k, .. })) =
            tokio::time::timeout(Duration::from_millis(20), coord.recv()).await
        {
            peer = Some(k);
        }
        let _ = tokio::time::timeout(Duration::from_millis(20), part.recv()).await;
    }
    let peer = peer.unwrap();

    // Up: N reports in a row, then down: N triggers in a row.
    let sent = std::time::Instant::now();
    for k in 0..N {
        part.send(Outbound::Ready(Timestamp::from_nanos(k as i64)))
            .expect("sent");
    }
    for k in 0..N {
        coord
            .send(Some(peer), Signal::Trigger(Timestamp::from_nanos(k as i64)))
            .expect("sent");
    }
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "the sends waited {:?}",
        sent.elapsed()
    );
    let mut up = vec![];
    while up.len() < N {
        match tokio::time::timeout(Duration::from_secs(5), coord.recv()).await {
            Ok(Some(Inbound::Ready { next, .. })) => up.push(next.as_nanos()),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => panic!("reports lost after {up:?}"),
        }
    }
    let mut down = vec![];
    while down.len() < N {
        match tokio::time::timeout(Duration::from_secs(5), part.recv()).await {
            Ok(Some(Signal::Trigger(t))) => down.push(t.as_nanos()),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => panic!("triggers lost after {down:?}"),
        }
    }
    let want: Vec<i64> = (0..N as i64).collect();
    assert_eq!((up, down), (want.clone(), want));
    assert_eq!(coord.stats().gaps + part.stats().gaps, 0);
    drop((coord, part));
    p_session.close().await.unwrap();
    c_session.close().await.unwrap();
}
