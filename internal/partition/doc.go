// Package partition is one replica of a partition: its log, its leader
// epoch, its high watermark, and the waiters that long-poll fetches and
// acks=all produces park on until the high watermark moves.
//
// On a single node every partition is a leader whose ISR is itself, so the
// high watermark follows the log end offset at once. The replication layer
// (multi-broker issue) advances it from follower fetch positions instead.
package partition
