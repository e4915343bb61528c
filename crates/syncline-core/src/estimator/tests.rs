use super::*;

const T0: i64 = 1_700_000_000_000_000_000;
const P: i64 = 10_000_000;

fn est(period: Option<i64>) -> Estimator {
    let mut c = EstimatorConfig::new(TimeDelta::from_secs(5));
    c.period = period.map(TimeDelta::from_nanos);
    Estimator::new(c).unwrap()
}

fn ts(ns: i64) -> Timestamp {
    Timestamp::from_nanos(ns)
}

#[test]
fn perfect_stream_is_returned_unchanged() {
    let mut e = est(None);
    for k in 0..10_000 {
        let q = T0 + k * P;
        assert_eq!(e.update(ts(q)).unwrap().stamp, ts(q));
    }
    assert_eq!(e.period(), Some(TimeDelta::from_nanos(P)));
}
