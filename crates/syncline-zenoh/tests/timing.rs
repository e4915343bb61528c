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
