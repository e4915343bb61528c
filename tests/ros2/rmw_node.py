#!/usr/bin/env python3
"""A stand-in ROS 2 node that speaks rmw_zenoh's wire format, written
without any of syncline's code: the oracle of syncline's ROS 2 interop tests.

It follows rmw_zenoh's design document (../shared/reference/ros2-zenoh.md,
section 1) on its own: key expressions, liveliness tokens, the 33-byte
attachment and CDR payloads are built here with `struct`, and the type
hash of sensor_msgs/msg/Imu is the one ROS 2 installations publish.

  rmw_node.py pub --endpoint E [--listen] --topic /ns/imu --count N
                  [--period-ms P] [--skip 3,4] [--stamp-start-ns S]
                  [--humble] [--node talker] [--namespace /ns] [--wait-s W]
      publishes N sensor_msgs/Imu messages (sequence numbers 1..N, those
      in --skip left out), one JSON line per message sent on stdout.
  rmw_node.py sub --endpoint E [--listen] --key KEY --duration-s S
                  [--stop-file F]
      prints one JSON line per sample ({"key", "attachment", "payload"} in
      hex) and per liveliness token seen ({"token", "alive"}), for S
      seconds or until the file F exists.

Needs the PyPI package eclipse-zenoh.
"""
import argparse
import json
import os
import struct
import sys
import threading
import time

import zenoh

IMU_DDS = "sensor_msgs::msg::dds_::Imu_"
IMU_HASH = "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b"


def session(endpoint, listen):
    conf = zenoh.Config()
    conf.insert_json5("mode", '"peer"')
    conf.insert_json5("scouting/multicast/enabled", "false")
    conf.insert_json5("listen/endpoints" if listen else "connect/endpoints", json.dumps([endpoint]))
    if not listen:
        conf.insert_json5("listen/endpoints", "[]")
    return zenoh.open(conf)


class Cdr:
    """Little-endian CDR: a 4-byte header, each field aligned to its size."""

    def __init__(self):
        self.buf = bytearray(b"\x00\x01\x00\x00")

    def _align(self, n):
        while (len(self.buf) - 4) % n:
            self.buf.append(0)

    def put(self, fmt, *values):
        self._align(struct.calcsize("<" + fmt.lstrip("0123456789")[0]))
        self.buf += struct.pack("<" + fmt, *values)

    def string(self, s):
        raw = s.encode() + b"\x00"
        self.put("I", len(raw))
        self.buf += raw


def imu_cdr(stamp_ns, frame_id, k):
    c = Cdr()
    c.put("i", stamp_ns // 1_000_000_000)
    c.put("I", stamp_ns % 1_000_000_000)
    c.string(frame_id)
    c.put("dddd", 0.0, 0.0, 0.0, 1.0)  # orientation
    c.put("9d", *([0.0] * 9))
    c.put("ddd", 0.01 * k, 0.0, 0.0)  # angular velocity
    c.put("9d", *([0.0] * 9))
    c.put("ddd", 0.0, 0.0, 9.81)  # linear acceleration
    c.put("9d", *([0.0] * 9))
    return bytes(c.buf)


def mangle(name):
    return name.replace("/", "%") if name else "%"


def publish(a):
    s = session(a.endpoint, a.listen)
    zid = str(s.info.zid())
    ns = a.namespace.rstrip("/")
    h = "TypeHashNotSupported" if a.humble else IMU_HASH
    data_key = f"{a.domain}/{a.topic.strip('/')}/{IMU_DDS}/{h}"
    node_tok = f"@ros2_lv/{a.domain}/{zid}/0/0/NN/%/{mangle(ns)}/{a.node}"
    pub_tok = (f"@ros2_lv/{a.domain}/{zid}/0/1/MP/%/{mangle(ns)}/{a.node}/"
               f"{mangle(a.topic)}/{IMU_DDS}/{h}/::,10:,:,:,,")
    tokens = [s.liveliness().declare_token(node_tok), s.liveliness().declare_token(pub_tok)]
    pub = s.declare_publisher(data_key)
    gid = bytes(range(16))
    skip = {int(x) for x in a.skip.split(",") if x}
    time.sleep(a.wait_s)
    for k in range(1, a.count + 1):
        stamp = time.time_ns() if a.stamp_now else a.stamp_start_ns + (k - 1) * a.period_ms * 1_000_000
        if k not in skip:
            att = struct.pack("<qqB16s", k, time.time_ns(), 16, gid)
            pub.put(imu_cdr(stamp, "imu_link", k), attachment=att)
            print(json.dumps({"seq": k, "stamp_ns": stamp, "key": data_key}), flush=True)
        time.sleep(a.period_ms / 1000.0)
    time.sleep(a.linger_s)
    for t in tokens:
        t.undeclare()
    s.close()


_out = threading.Lock()


def emit(record):
    """One JSON line on stdout, whole: zenoh runs callbacks on several
    threads, and two unguarded prints can interleave within a line."""
    line = json.dumps(record) + "\n"
    with _out:
        sys.stdout.write(line)
        sys.stdout.flush()


def subscribe(a):
    s = session(a.endpoint, a.listen)

    def on_sample(sample):
        att = sample.attachment
        emit({
            "key": str(sample.key_expr),
            "attachment": att.to_bytes().hex() if att is not None else None,
            "payload": sample.payload.to_bytes().hex(),
        })

    def on_token(sample):
        emit({"token": str(sample.key_expr),
              "alive": sample.kind == zenoh.SampleKind.PUT})

    subs = [s.declare_subscriber(a.key, on_sample),
            s.liveliness().declare_subscriber("@ros2_lv/**", on_token, history=True)]
    deadline = time.monotonic() + a.duration_s
    while time.monotonic() < deadline and not (a.stop_file and os.path.exists(a.stop_file)):
        time.sleep(0.05)
    for sub in subs:
        sub.undeclare()
    s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="cmd", required=True)
    for name in ("pub", "sub"):
        p = sp.add_parser(name)
        p.add_argument("--endpoint", required=True)
        p.add_argument("--listen", action="store_true", help="listen on the endpoint instead of connecting")
    p = sp.choices["pub"]
    p.add_argument("--topic", default="/imu")
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--period-ms", type=int, default=5)
    p.add_argument("--skip", default="")
    p.add_argument("--stamp-start-ns", type=int, default=1_700_000_000_000_000_000)
    p.add_argument("--stamp-now", action="store_true", help="stamp each message with the system clock when sent")
    p.add_argument("--humble", action="store_true")
    p.add_argument("--node", default="imu_driver")
    p.add_argument("--namespace", default="")
    p.add_argument("--domain", type=int, default=0)
    p.add_argument("--wait-s", type=float, default=1.0)
    p.add_argument("--linger-s", type=float, default=0.5)
    p = sp.choices["sub"]
    p.add_argument("--key", default="**")
    p.add_argument("--duration-s", type=float, default=3.0, help="the longest it records")
    p.add_argument("--stop-file", default="", help="stop early once this file exists")
    a = ap.parse_args()
    publish(a) if a.cmd == "pub" else subscribe(a)


if __name__ == "__main__":
    sys.exit(main())
