// Package perf measures Silkworm's data path end to end: it builds
// ./cmd/silkworm, runs it as a child process on a free 127.0.0.1 port with a
// temporary data dir, produces records with one franz-go producer, reads them
// back with one franz-go consumer, and reports throughput and the broker's
// CPU time per record for each case of a small matrix (record size, acks,
// partition count).
//
// It is a measurement, not a test: TestDataPath is skipped unless
// SILKWORM_PERF=1, it never asserts a duration, and it fails only when the
// harness itself breaks (the broker does not start, a produce fails, records
// are missing on read-back). The results are printed as a Markdown table.
//
// The broker's CPU time is utime+stime of the child process, read from
// /proc/<pid>/stat before and after each phase; the kernel reports it in
// clock ticks (USER_HZ, 10 ms), which bounds the resolution of the per-record
// figures to 10 ms divided by the records of the phase.
//
// Environment:
//
//	SILKWORM_PERF=1                    run the measurement
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
//	SILKWORM_PERF_PROFILE_DIR=dir      record each produce phase of the
//	                                   broker with Linux `perf record -g -p`
//	                                   into dir/<case>.perf.data (needs perf
//	                                   on PATH; read with `perf report -i`)
//
// There is no non-test code in this package.
package perf
