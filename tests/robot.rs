//! The robot example (`examples/robot.rs`) on tokio's paused clock: every
//! consumer in order, stamps independent of a slow or stuck consumer, the
//! fast consumers within the latency bound while vision is stuck,
//! conservation and bounded queues, the same output on every run.

#[allow(dead_code)]
#[path = "../examples/robot.rs"]
mod robot;

use robot::{Options, Summary, TIMEOUT_MS, Vision};

fn sim(vision: Vision) -> Summary {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("runtime");
    let opts = Options {
        sim: true,
        seconds: 10.0,
        vision,
        json: false,
    };
    runtime.block_on(robot::run(&opts))
}

fn check(s: &Summary, vision: Vision) {
    assert_eq!(s.order_violations, 0);
    for (name, c) in &s.consumers {
        assert_eq!(c.order_violations, 0, "{name}");
        let dropped: u64 = c.dropped.values().sum();
        assert_eq!(
            c.routed,
            c.received + c.queued as u64 + dropped,
            "{name}: every routed sample is received, queued or counted as dropped"
        );
        assert!(c.max_queued <= c.capacity, "{name}: queue within its bound");
        if name != "vision" {
            assert_eq!(dropped, 0, "{name}");
            assert_eq!(c.received, c.routed, "{name}");
            assert!(
                c.latency_max_ns <= (TIMEOUT_MS + 1) * 1_000_000,
                "{name}: latency {} ns with vision {vision:?}",
                c.latency_max_ns
            );
        }
    }
    for (name, x) in &s.sensors {
        assert_eq!(x.source_overflow, 0, "{name}");
        assert!(x.samples > 0, "{name}");
    }
    let vision_c = &s.consumers["vision"];
    match vision {
        // Frames are released in bursts (when a slower stream's lookahead
        // or the timeout lets them go): a 2-deep queue drops some even for
        // a consumer without work.
        Vision::Fast | Vision::Slow => assert!(vision_c.received > 0),
        Vision::Stuck => {
            assert_eq!(vision_c.received, 0);
            assert_eq!(vision_c.queued, 2);
            assert_eq!(vision_c.dropped["overflow"], vision_c.routed - 2);
        }
    }
    assert!(s.sets > 0 && s.interpolated > 0);
    assert!(s.controller_ticks > 0);
}

#[test]
fn slow_or_stuck_vision_changes_neither_stamps_nor_the_others() {
    let fast = sim(Vision::Fast);
    let slow = sim(Vision::Slow);
    let stuck = sim(Vision::Stuck);
    check(&fast, Vision::Fast);
    check(&slow, Vision::Slow);
    check(&stuck, Vision::Stuck);
    assert!(slow.consumers["vision"].received < fast.consumers["vision"].received);
    let imu = |s: &Summary| s.sensors["imu"].stamp_rms_ns;
    for other in [&slow, &stuck] {
        assert!(
            (imu(other) - imu(&fast)).abs() <= 0.1 * imu(&fast),
            "IMU stamp error {} ns vs {} ns without a slow consumer",
            imu(other),
            imu(&fast)
        );
    }
}

#[test]
fn the_same_output_on_every_run() {
    let a = serde_json::to_string(&sim(Vision::Slow)).expect("json");
    let b = serde_json::to_string(&sim(Vision::Slow)).expect("json");
    assert_eq!(a, b);
}
