#!/usr/bin/python3
"""kafka-python client for the Silkworm interop tests.

Debian's python3-kafka installs kafka-python for /usr/bin/python3, so run
this script with that interpreter.

  produce: reads JSON lines {"key","value","headers":[{"key","value"}]} from
           stdin and produces them, in order, to --topic; exits non-zero if
           any record is not acknowledged.
  consume: reads every partition of --topic from its start to the end
           offsets seen at startup and prints one JSON line per record:
           {"partition","offset","key","value","headers","timestamp",
            "timestamp_type"}.

Example against a running broker:
  seq 3 | sed 's/.*/{"key":"k-&","value":"v-&","headers":[]}/' |
    /usr/bin/python3 interop_client.py produce --bootstrap 127.0.0.1:9092 --topic t
  /usr/bin/python3 interop_client.py consume --bootstrap 127.0.0.1:9092 --topic t
"""

import argparse
import json
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def client_kwargs(args):
    kw = {"bootstrap_servers": args.bootstrap, "client_id": "silkworm-interop-python"}
    if args.api_version:
        kw["api_version"] = tuple(int(x) for x in args.api_version.split("."))
    return kw


def produce(args):
    producer = KafkaProducer(acks="all", linger_ms=5, **client_kwargs(args))
    futures = []
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        headers = [(h["key"], h["value"].encode()) for h in r["headers"]]
        futures.append(
            producer.send(args.topic, key=r["key"].encode(), value=r["value"].encode(), headers=headers)
        )
    producer.flush(timeout=args.timeout)
    for f in futures:
        f.get(timeout=args.timeout)  # raises the delivery error, if any
    producer.close(timeout=args.timeout)
    print("produced %d records" % len(futures), file=sys.stderr)


def consume(args):
    deadline = time.monotonic() + args.timeout
    consumer = KafkaConsumer(enable_auto_commit=False, group_id=None, **client_kwargs(args))
    parts = consumer.partitions_for_topic(args.topic)
    while not parts:
        if time.monotonic() > deadline:
            sys.exit("topic %s not found" % args.topic)
        time.sleep(0.1)
        parts = consumer.partitions_for_topic(args.topic)
    tps = [TopicPartition(args.topic, p) for p in sorted(parts)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    ends = consumer.end_offsets(tps)
    pending = set(tps)
    count = 0
    out = sys.stdout
    while True:
        for tp in list(pending):
            if consumer.position(tp) >= ends[tp]:
                pending.discard(tp)
        if not pending:
            break
        if time.monotonic() > deadline:
            sys.exit(
                "timed out after %d records; positions %s, ends %s"
                % (count, {tp.partition: consumer.position(tp) for tp in tps}, {tp.partition: o for tp, o in ends.items()})
            )
        for tp, msgs in consumer.poll(timeout_ms=500).items():
            for m in msgs:
                out.write(
                    json.dumps(
                        {
                            "partition": m.partition,
                            "offset": m.offset,
                            "key": None if m.key is None else m.key.decode(),
                            "value": None if m.value is None else m.value.decode(),
                            "headers": [{"key": k, "value": v.decode()} for k, v in (m.headers or [])],
                            "timestamp": m.timestamp,
                            "timestamp_type": m.timestamp_type,
                        }
                    )
                    + "\n"
                )
                count += 1
    out.flush()
    consumer.close()
    print("consumed %d records" % count, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["produce", "consume"])
    ap.add_argument("--bootstrap", required=True, help="host:port")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--timeout", type=float, default=120, help="seconds before giving up")
    ap.add_argument("--api-version", default="", help="e.g. 2.5.0; default: ask the broker")
    args = ap.parse_args()
    if args.mode == "produce":
        produce(args)
    else:
        consume(args)


if __name__ == "__main__":
    main()
