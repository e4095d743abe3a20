// Package perf measures Silkworm's data path end to end: it builds
// ./cmd/silkworm, runs it as a child process on a free 127.0.0.1 port with a
// temporary data dir, produces records with one franz-go producer, reads them
// back with one franz-go consumer, and reports throughput and the broker's
// CPU time per record for each case of a small matrix (record size, acks,
// partition count), over PLAINTEXT, SSL or SASL_SSL.
//
// TestConnectionCost opens, authenticates and closes client connections one
// after the other and reports the broker's CPU time per connection.
//
// TestQuotaConvergence runs two producers with different client ids at full
// speed against one broker process, first without quotas, then with a
// producer_byte_rate quota on one of them, and reports each one's byte rate
// per 5 s window.
//
// TestClusterReplication, TestClusterLatency and TestClusterFailover run a
// three-node cluster of server processes (config/cluster/node<N>.properties
// with free ports): RF 1 against RF 3 throughput and the three brokers'
// summed CPU per record; end-to-end and produce-ack latency at a fixed rate
// (RF 3, acks=all, min.insync.replicas=2); and a paused, then killed,
// leader. TestStoredData (SILKWORM_PERF_STORED_GB) fills 1,000 partitions of
// one broker step by step and reports its RSS, open files and CPU per
// record, then the time to start again after a clean shutdown.
// scripts/perf-ab.sh runs any of these alternately against two builds and
// prints the new/old ratios.
//
// These are measurements, not tests: they are skipped unless
// SILKWORM_PERF=1, never assert a duration or a rate, and fail only when the
// harness itself breaks (the broker does not start, a produce fails, records
// are missing on read-back). The results are printed as Markdown tables.
//
// Security (SILKWORM_PERF_SECURITY): the broker always has a PLAINTEXT
// listener, used for setup (topics, SCRAM users, quotas). With ssl or
// sasl_ssl it gets a second listener of that protocol, which the measured
// clients use: its certificate comes from a fresh securitytest CA and is
// written to the test's temp dir as a PEM keystore
// (ssl.keystore.type=PEM, ssl.keystore.location), and the clients trust
// that CA. With sasl_ssl the listener enables SCRAM-SHA-512 only; the user
// perf is created with AlterUserScramCredentials (4096 iterations) over the
// PLAINTEXT listener and the clients authenticate as it. Each client pings
// before a phase's clock starts; only its produce or fetch connection
// (franz-go keeps those apart) is set up inside the phase, one TLS
// handshake and SCRAM exchange of a few ms in phases of seconds.
//
// The broker's CPU time is utime+stime of the child process, read from
// /proc/<pid>/stat before and after each phase; the kernel reports it in
// clock ticks (USER_HZ, 10 ms), which bounds the resolution of the per-record
// figures to 10 ms divided by the records of the phase.
//
// Environment:
//
//	SILKWORM_PERF=1                    run the measurements
//	SILKWORM_PERF_SECURITY=protocol    plaintext (default), ssl or
//	                                   sasl_ssl: the listener the measured
//	                                   clients use
//	SILKWORM_PERF_RECORDS=n            records per 100-byte case (default
//	                                   200000); 1 KiB cases use n/4
//	SILKWORM_PERF_COMPRESSION=codec    producer codec: none (default),
//	                                   snappy, lz4, zstd, gzip
//	SILKWORM_PERF_CASES=substr         run only cases whose name contains
//	                                   substr, e.g. "100B/acks=1/p=1"
//	SILKWORM_PERF_OVERRIDES="k=v ..."  extra broker config overrides,
//	                                   space separated
//	SILKWORM_PERF_BROKER_BIN=path      use this broker binary instead of
//	                                   building ./cmd/silkworm
//	SILKWORM_PERF_BROKER_ENV="K=V ..." extra environment of the cluster
//	                                   tests' broker processes only, e.g.
//	                                   GOMAXPROCS=1
//	SILKWORM_PERF_METRICS_PORT=p       the cluster tests serve node i's
//	                                   /metrics on 127.0.0.1:p+i (request
//	                                   counts while a measurement runs)
//	SILKWORM_PERF_PROFILE_DIR=dir      record each produce and consume phase
//	                                   of the broker with Linux `perf record
//	                                   -g -p` into dir/<case>.perf.data and
//	                                   dir/<case>_consume.perf.data (needs
//	                                   perf on PATH; read with `perf report
//	                                   -i`)
//	SILKWORM_PERF_QUOTA_SECONDS=n      length of each TestQuotaConvergence
//	                                   run (default 30)
//	SILKWORM_PERF_QUOTA_RATE=n         its producer_byte_rate in bytes/s
//	                                   (default 2097152)
//	SILKWORM_PERF_CONNECTIONS=n        connections TestConnectionCost opens
//	                                   (default 1000)
//	SILKWORM_PERF_ROUNDS=n             TestClusterReplication rounds,
//	                                   alternating RF 1 and RF 3
//	SILKWORM_PERF_PARTITIONS=n         partitions of the cluster tests
//	SILKWORM_PERF_RATE=n               TestClusterLatency records/s
//	                                   (default 50000)
//	SILKWORM_PERF_SECONDS=n            its measured seconds (default 10)
//	SILKWORM_PERF_WARMUP_SECONDS=n     its warm-up (default 1)
//	SILKWORM_PERF_LINGER_MS=n          its producer linger (default 0)
//	SILKWORM_PERF_FAULTS=n             TestClusterFailover kills (default 3)
//	SILKWORM_PERF_PAUSE_MS=n           its leader pause (default 1000)
//	SILKWORM_PERF_STORED_GB=x          TestStoredData's total (unset: skip)
//	SILKWORM_PERF_STORED_STEP_MB=n     its reporting step
//	SILKWORM_PERF_STORED_PARTITIONS=n  its partitions (default 1000)
//	SILKWORM_PERF_STORED_RECORD_BYTES=n its record size (default 1024)
//
// There is no non-test code in this package.
package perf
