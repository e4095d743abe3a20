// Package interop holds end-to-end interoperability tests: unmodified Kafka
// clients (franz-go in-process, kcat/librdkafka, kafka-python and kafkajs
// through the scripts under python/ and js/) talk to a real Silkworm broker.
//
// The broker under test is a child process: the tests build ./cmd/silkworm
// once per run, start it on a free 127.0.0.1 port with a fresh data dir, wait
// for it by polling the port, and kill it with SIGKILL and restart it on the
// same data dir and port to check that everything acknowledged survives.
//
// Each scenario, per client: create a topic with three partitions (kadm),
// let the client produce 10,000 keyed records with headers, let it consume
// them back, check keys, values, headers, timestamps, per-partition order and
// that nothing is missing or doubled; then kill -9 the broker, restart it and
// check that a second full read returns exactly the same records.
//
// Consumer groups (groups_test.go, members_test.go), per client: kcat -G
// (range and cooperative-sticky), kafka-python and kafkajs members run as
// child processes that report their assignment and records as lines. Three
// members of a 6-partition topic get two partitions each, six get one, a
// seventh leaves one member idle (the newcomer under a sticky assignor) and
// it consumes nothing; a SIGKILLed member's partition moves to the others
// and the union of what was consumed covers every record produced. New
// groups start at the log start (earliest), at the end (latest) or fail
// (none; kafkajs has no none). Offsets committed by a member survive a
// kill -9 of the broker and a new member resumes exactly after them.
// franz-go groups are covered in-process by internal/broker/group_test.go.
//
// Compaction (compaction_test.go): each client produces rounds of values
// for the same keys to a cleanup.policy=compact topic with small segments;
// once the cleaner has run, a full read holds only the last value per key.
//
// franz-go's own integration suite (kgosuite_test.go): the tests of
// github.com/twmb/franz-go/pkg/kgo that its author runs against Apache
// Kafka, run by `go test` from the module cache against one node and
// against a three-node cluster (KGO_SEEDS, KGO_TEST_RF).
//
// Environment:
//
//	SILKWORM_TEST_BOOTSTRAP=host:port  use an already running broker; the
//	                                   kill/restart phase is skipped
//	SILKWORM_TEST_BROKER=kfake         run against franz-go's in-process fake
//	                                   cluster (a harness self-check); its
//	                                   "kill" is a close and reopen of its
//	                                   data dir
//	SILKWORM_TEST_BROKER_BIN=path      run this broker binary instead of
//	                                   building ./cmd/silkworm; it must
//	                                   accept silkworm's server flags
//	SILKWORM_TEST_BROKER_RACE=1        build the broker with -race
//	SILKWORM_TEST_PYTHON=path          interpreter that has kafka-python
//	                                   (default /usr/bin/python3, where
//	                                   Debian's python3-kafka installs it)
//	CI=true                            a missing client fails the test
//	                                   instead of skipping it
//
// There is no non-test code in this package.
package interop
