package broker

// TxnOffsetCommit: v0-3
//
// Offsets are written to the group's __consumer_offsets partition in a
// transactional batch of the producer and stay invisible until the
// transaction's marker reaches that partition (internal/group/txn.go).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.TxnOffsetCommit, 0, 3, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(b *Broker, r *request) {
	req := r.kreq.(*kmsg.TxnOffsetCommitRequest)
	r.respond(b.groups.TxnOffsetCommit(req))
}
