//! Integration tests of `syncline sync`: runs the binary on small inputs.

mod common;

/// Runs `syncline sync ARGS -` with `input` on standard input; returns
/// (exit status, stdout, stderr).
fn sync(args: &[&str], input: &str) -> (i32, String, String) {
    let mut all = args.to_vec();
    all.push("-");
    let out = common::syncline("sync", &all, input);
    let stderr = common::stderr(&out);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("UTF-8 output"),
        stderr,
    )
}

const IMPERFECT: &str = "topic,stamp_ns\na,0\nb,1\na,2\na,3\nb,5\na,6\nb,7\n";

#[test]
fn approximate_sets_triggers_and_drop_reports() {
    let (code, out, _) = sync(&["--policy", "approximate", "--topics", "a,b"], IMPERFECT);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\"trigger\": 2, \"ids\": [0, 1], \"stamps_ns\": [0, 1]}\n\
         {\"trigger\": 5, \"ids\": [5, 4], \"stamps_ns\": [6, 5]}\n"
    );
    let (code, out, _) = sync(
        &[
            "--policy",
            "approximate",
            "--topics",
            "b,a",
            "--report-drops",
        ],
        IMPERFECT,
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\"trigger\": 2, \"ids\": [1, 0], \"stamps_ns\": [1, 0]}\n\
         {\"dropped\": 2, \"reason\": \"skipped\", \"topic\": \"a\"}\n\
         {\"dropped\": 3, \"reason\": \"skipped\", \"topic\": \"a\"}\n\
         {\"trigger\": 5, \"ids\": [4, 5], \"stamps_ns\": [5, 6]}\n\
         {\"dropped\": 6, \"reason\": \"end\", \"topic\": \"b\"}\n"
    );
}

#[test]
fn approximate_options_change_the_output() {
    let input = "topic,stamp_ns\na,0\nb,1\na,3\nb,4\na,6\nb,7\n";
    let (_, plain, _) = sync(&["--policy", "approximate", "--topics", "a,b"], input);
    let (_, bound, _) = sync(
        &[
            "--policy",
            "approximate",
            "--topics",
            "a,b",
            "--lower-bound-ns",
            "a=2",
        ],
        input,
    );
    assert_eq!(plain.lines().count(), 2);
    assert_eq!(bound.lines().count(), 3);
    assert!(bound.starts_with("{\"trigger\": 1,"));
    let (_, tight, _) = sync(
        &[
            "--policy",
            "approximate",
            "--topics",
            "a,b",
            "--max-interval-ns",
            "0",
            "--report-drops",
        ],
        input,
    );
    assert!(tight.contains("\"reason\": \"interval\""), "{tight}");
    assert!(!tight.contains("trigger"), "{tight}");
}

#[test]
fn stall_timeout_partial_sets_print_null() {
    let input = "topic,stamp_ns\na,0\na,10\na,20\na,30\na,40\n";
    let (code, out, _) = sync(
        &[
            "--policy",
            "approximate",
            "--topics",
            "a,b",
            "--stall-timeout-ns",
            "15",
            "--stall-action",
            "partial",
        ],
        input,
    );
    assert_eq!(code, 0);
    assert!(
        out.starts_with("{\"trigger\": 2, \"ids\": [0, null], \"stamps_ns\": [0, null]}\n"),
        "{out}"
    );
    let (_, out, _) = sync(
        &[
            "--policy",
            "approximate",
            "--topics",
            "a,b",
            "--stall-timeout-ns",
            "15",
            "--report-drops",
        ],
        input,
    );
    assert!(
        out.starts_with("{\"dropped\": 0, \"reason\": \"stalled\", \"topic\": \"a\"}\n"),
        "{out}"
    );
}

/// Regression: with queue size 1 the first message overflows; the lone
/// live topic then used to lose every later message as `skipped`.
#[test]
fn stall_partial_after_an_overflow_still_forms_sets() {
    let input = "topic,stamp_ns\na,0\na,10\na,200\na,210\na,220\n";
    let (code, out, _) = sync(
        &[
            "--policy",
            "approximate",
            "--topics",
            "a,b",
            "--queue-size",
            "1",
            "--stall-timeout-ns",
            "100",
            "--stall-action",
            "partial",
            "--report-drops",
        ],
        input,
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\"dropped\": 0, \"reason\": \"overflow\", \"topic\": \"a\"}\n\
         {\"trigger\": 2, \"ids\": [1, null], \"stamps_ns\": [10, null]}\n\
         {\"trigger\": 2, \"ids\": [2, null], \"stamps_ns\": [200, null]}\n\
         {\"trigger\": 3, \"ids\": [3, null], \"stamps_ns\": [210, null]}\n\
         {\"trigger\": 4, \"ids\": [4, null], \"stamps_ns\": [220, null]}\n"
    );
}

#[test]
fn status_line_counts_everything() {
    let (code, out, _) = sync(
        &["--policy", "approximate", "--topics", "a,b", "--status"],
        IMPERFECT,
    );
    assert_eq!(code, 0);
    let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let st = &last["status"];
    assert_eq!(st["pushed"], 7);
    assert_eq!(st["sets"], 2);
    assert_eq!(st["dropped"]["skipped"], 2);
    assert_eq!(st["dropped"]["end"], 1);
    assert_eq!(st["topics"], serde_json::json!(["a", "b"]));
}

#[test]
fn exact_policy_with_drops() {
    let input = "topic,stamp_ns\nx,5\ny,4\nx,4\nx,4\ny,5\nz,9\n";
    let (code, out, _) = sync(
        &["--policy", "exact", "--topics", "x,y", "--report-drops"],
        "topic,stamp_ns\nx,5\ny,4\nx,5\ny,5\n",
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\"dropped\": 0, \"reason\": \"replaced\", \"topic\": \"x\"}\n\
         {\"trigger\": 3, \"ids\": [2, 3], \"stamps_ns\": [5, 5]}\n\
         {\"dropped\": 1, \"reason\": \"skipped\", \"topic\": \"y\"}\n"
    );
    let (code, _, err) = sync(&["--policy", "exact", "--topics", "x,y"], input);
    assert_eq!(code, 2);
    assert!(
        err.contains("-:7:") && err.contains("unknown topic `z`"),
        "{err}"
    );
}

#[test]
fn latest_policy_uses_arrival_ns() {
    let mut input = String::from("topic,stamp_ns,arrival_ns\n");
    for k in 0..20 {
        if k % 4 == 0 {
            input += &format!("slow,{},{}\n", 1000 - k, k * 10);
        }
        input += &format!("fast,{},{}\n", 1000 - k, k * 10);
    }
    let (code, out, _) = sync(&["--policy", "latest", "--topics", "fast,slow"], &input);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 10, "{out}");
    for l in &lines {
        assert_eq!(l["ids"].as_array().unwrap().len(), 2);
    }
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--policy", "approx", "--topics", "a,b"], "--policy"),
        (&["--policy", "approximate", "--topics", "a"], "--topics"),
        (&["--policy", "approximate", "--topics", "a,a"], "--topics"),
        (
            &[
                "--policy",
                "approximate",
                "--topics",
                "a,b",
                "--queue-size",
                "0",
            ],
            "--queue-size",
        ),
        (
            &[
                "--policy",
                "approximate",
                "--topics",
                "a,b",
                "--queue-size",
                "x",
            ],
            "--queue-size",
        ),
        (
            &[
                "--policy",
                "approximate",
                "--topics",
                "a,b",
                "--age-penalty",
                "-1",
            ],
            "--age-penalty",
        ),
        (
            &[
                "--policy",
                "approximate",
                "--topics",
                "a,b",
                "--age-penalty",
                "nan",
            ],
            "--age-penalty",
        ),
        (
            &[
                "--policy",
                "approximate",
                "--topics",
                "a,b",
                "--max-interval-ns",
                "-5",
            ],
            "--max-interval-ns",
        ),
        (
            &[
                "--policy",
                "approximate",
                "--topics",
                "a,b",
                "--lower-bound-ns",
                "c=5",
            ],
            "--lower-bound-ns",
        ),
        (
            &[
                "--policy",
                "approximate",
                "--topics",
                "a,b",
                "--lower-bound-ns",
                "a=5",
                "--lower-bound-ns",
                "a=6",
            ],
            "--lower-bound-ns",
        ),
        (
            &[
                "--policy",
                "exact",
                "--topics",
                "a,b",
                "--age-penalty",
                "0.1",
            ],
            "--age-penalty",
        ),
        (
            &["--policy", "exact", "--topics", "a,b", "--queue-size", "-1"],
            "--queue-size",
        ),
        (
            &["--policy", "latest", "--topics", "a,b", "--queue-size", "3"],
            "--queue-size",
        ),
        (
            &["--policy", "approximate", "--topics", "a,b", "--bogus"],
            "--bogus",
        ),
    ];
    for (args, flag) in cases {
        let (code, out, err) = sync(args, IMPERFECT);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(!err.contains("panicked"));
    }
}

#[test]
fn bad_input_exits_2_after_streaming_earlier_output() {
    let args = ["--policy", "approximate", "--topics", "a,b"];
    let (code, out, err) = sync(&args, "topic,stamp_ns\na,0\nb,0\na,zz\n");
    assert_eq!(code, 2);
    assert_eq!(out.lines().count(), 1);
    assert!(err.contains("-:4:"), "{err}");
    for (input, named) in [
        ("topic,stamp_ns\n,0\n", "topic"),
        ("topic,stamp_ns\na,\n", "stamp_ns"),
        ("topic,arrival_ns\na,0\n", "stamp_ns"),
        ("topic,stamp_ns,arrival_ns\na,0,x\n", "arrival_ns"),
    ] {
        let (code, _, err) = sync(&args, input);
        assert_eq!(code, 2, "{input}");
        assert!(err.contains(named), "{err}");
    }
    // extreme stamps: exact arithmetic, no overflow
    let (code, out, _) = sync(
        &args,
        "topic,stamp_ns\na,-9223372036854775808\nb,9223372036854775807\na,9223372036854775807\nb,-9223372036854775808\n",
    );
    assert_eq!(code, 0);
    assert!(!out.is_empty());
}
