#!/usr/bin/python3
"""kafka-python client for the Silkworm interop tests.

Debian's python3-kafka installs kafka-python for /usr/bin/python3, so run
this script with that interpreter.

  produce: reads JSON lines {"key","value","headers":[{"key","value"}]} from
           stdin and produces them, in order, to --topic; exits non-zero if
           any record is not acknowledged. A send waits --max-block-ms for
           the topic's metadata; when it times out, the script prints the
           error the broker gave for the topic, if any.
  consume: reads every partition of --topic from its start to the end
           offsets seen at startup and prints one JSON line per record:
           {"partition","offset","key","value","headers","timestamp",
            "timestamp_type"}.
  group:   joins consumer group --group on --topic (subscribe, the
           default range/roundrobin assignors: kafka-python 2.0.2's sticky
           one fails to encode its metadata on Python 3.11; session
           timeout --session-timeout-ms) and prints one
           JSON line per event, flushed at once:
             {"event":"assigned","partitions":[...]}  after each rebalance
             {"event":"revoked"}                      when one begins
             {"event":"record","partition","offset","key","value"}
             {"event":"error","error":"..."}          then exit status 3
           Offsets are committed synchronously after the records of each
           poll are printed. Where a new group starts is --offset-reset
           (earliest, latest or none: NoOffsetForPartitionError). With
           --max-records N it commits exactly the first N records printed
           and exits; otherwise it runs until SIGTERM, then leaves the group.

Security (every mode): --security-protocol SSL|SASL_PLAINTEXT|SASL_SSL with
--ssl-cafile (the CA of the broker certificate), --ssl-certfile and
--ssl-keyfile (a client certificate), --sasl-mechanism PLAIN|SCRAM-SHA-256|
SCRAM-SHA-512, --sasl-username and --sasl-password. These flags may come
before the mode. --log-level ERROR prints kafka-python's own log (why a
connection failed) to stderr.

Example against a running broker:
  seq 3 | sed 's/.*/{"key":"k-&","value":"v-&","headers":[]}/' |
    /usr/bin/python3 interop_client.py produce --bootstrap 127.0.0.1:9092 --topic t
  /usr/bin/python3 interop_client.py consume --bootstrap 127.0.0.1:9092 --topic t
"""

import argparse
import json
import logging
import signal
import sys
import time

from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
from kafka.client_async import KafkaClient
from kafka.consumer.fetcher import NoOffsetForPartitionError
from kafka.errors import CommitFailedError, KafkaTimeoutError


def client_kwargs(args):
    kw = {"bootstrap_servers": args.bootstrap, "client_id": "silkworm-interop-python"}
    if args.api_version:
        kw["api_version"] = tuple(int(x) for x in args.api_version.split("."))
    kw.update(security_kwargs(args))
    return kw


def security_kwargs(args):
    """kafka-python's security settings from the --security-protocol,
    --ssl-* and --sasl-* flags; none of them for PLAINTEXT (the default)."""
    if args.security_protocol == "PLAINTEXT":
        return {}
    kw = {"security_protocol": args.security_protocol}
    if args.security_protocol in ("SSL", "SASL_SSL"):
        # The broker certificate is checked against --ssl-cafile, host
        # name included (kafka-python's default).
        if args.ssl_cafile:
            kw["ssl_cafile"] = args.ssl_cafile
        if args.ssl_certfile:
            kw["ssl_certfile"] = args.ssl_certfile
            kw["ssl_keyfile"] = args.ssl_keyfile
    if args.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        kw["sasl_mechanism"] = args.sasl_mechanism
        kw["sasl_plain_username"] = args.sasl_username
        kw["sasl_plain_password"] = args.sasl_password
    return kw


def produce(args):
    producer = KafkaProducer(acks="all", linger_ms=5, max_block_ms=args.max_block_ms, **client_kwargs(args))
    futures = []
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        headers = [(h["key"], h["value"].encode()) for h in r["headers"]]
        try:
            futures.append(
                producer.send(args.topic, key=r["key"].encode(), value=r["value"].encode(), headers=headers)
            )
        except KafkaTimeoutError:
            explain_metadata_timeout(args)
            raise
    producer.flush(timeout=args.timeout)
    for f in futures:
        f.get(timeout=args.timeout)  # raises the delivery error, if any
    producer.close(timeout=args.timeout)
    print("produced %d records" % len(futures), file=sys.stderr)


def explain_metadata_timeout(args):
    """Prints why the topic's metadata never came, if the broker said.

    kafka-python 2.0.2 drops the error of a metadata response that names a
    single topic (ClusterMetadata.update_metadata fails the update without
    recording it), so a producer denied the topic (TOPIC_AUTHORIZATION_FAILED)
    only times out. Asking once more with a bare KafkaClient shows the error
    the broker sent."""
    client = KafkaClient(**client_kwargs(args))
    try:
        future = client.add_topic(args.topic)
        client.poll(future=future, timeout_ms=args.timeout * 1000)
        if future.failed():
            print(
                "metadata for topic %s: %s: %s" % (args.topic, type(future.exception).__name__, future.exception),
                file=sys.stderr,
            )
    finally:
        client.close()


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


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


class PrintRebalance(ConsumerRebalanceListener):
    def on_partitions_revoked(self, revoked):
        emit({"event": "revoked"})

    def on_partitions_assigned(self, assigned):
        emit({"event": "assigned", "partitions": sorted(tp.partition for tp in assigned)})


def group(args):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    consumer = KafkaConsumer(
        group_id=args.group,
        enable_auto_commit=False,
        auto_offset_reset=args.offset_reset,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=max(args.session_timeout_ms // 6, 100),
        max_poll_interval_ms=30000,
        **client_kwargs(args)
    )
    consumer.subscribe([args.topic], listener=PrintRebalance())
    printed = 0
    last = {}  # TopicPartition -> last printed offset
    while not stop:
        try:
            polled = consumer.poll(timeout_ms=200)
        except NoOffsetForPartitionError as e:
            emit({"event": "error", "error": "NoOffsetForPartitionError: %s" % e})
            consumer.close(autocommit=False)
            sys.exit(3)
        for tp, msgs in polled.items():
            for m in msgs:
                if args.max_records and printed >= args.max_records:
                    break
                emit(
                    {
                        "event": "record",
                        "partition": m.partition,
                        "offset": m.offset,
                        "key": None if m.key is None else m.key.decode(),
                        "value": None if m.value is None else m.value.decode(),
                    }
                )
                printed += 1
                last[tp] = m.offset
        if args.max_records and printed >= args.max_records:
            consumer.commit({tp: OffsetAndMetadata(o + 1, "") for tp, o in last.items()})
            break
        if polled:
            try:
                consumer.commit()
            except CommitFailedError as e:
                # A rebalance took the partitions; their new owner reads the
                # uncommitted records again.
                print("commit failed: %s" % e, file=sys.stderr)
    consumer.close(autocommit=False)
    print("printed %d records" % printed, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["produce", "consume", "group"])
    ap.add_argument("--bootstrap", required=True, help="host:port")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--timeout", type=float, default=120, help="seconds before giving up")
    ap.add_argument("--api-version", default="", help="e.g. 2.5.0; default: ask the broker")
    ap.add_argument("--group", default="", help="group mode: the group id")
    ap.add_argument("--offset-reset", default="earliest", choices=["earliest", "latest", "none"])
    ap.add_argument("--session-timeout-ms", type=int, default=6000)
    ap.add_argument("--max-records", type=int, default=0, help="group mode: commit this many records and exit")
    ap.add_argument(
        "--security-protocol", default="PLAINTEXT", choices=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
    )
    ap.add_argument("--ssl-cafile", default="", help="PEM file of the CA that signed the broker certificate")
    ap.add_argument("--ssl-certfile", default="", help="PEM client certificate (mutual TLS)")
    ap.add_argument("--ssl-keyfile", default="", help="PEM private key of --ssl-certfile")
    ap.add_argument("--sasl-mechanism", default="PLAIN", choices=["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    ap.add_argument("--sasl-username", default="")
    ap.add_argument("--sasl-password", default="")
    ap.add_argument(
        "--max-block-ms", type=int, default=60000, help="produce mode: how long a send waits for the topic's metadata"
    )
    ap.add_argument(
        "--log-level", default="", help="print kafka-python's log records of this level and above (ERROR...) to stderr"
    )
    args = ap.parse_args()
    if args.log_level:
        logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    if args.mode == "produce":
        produce(args)
    elif args.mode == "group":
        if not args.group:
            ap.error("group mode needs --group")
        group(args)
    else:
        consume(args)


if __name__ == "__main__":
    main()
