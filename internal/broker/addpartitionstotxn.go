package broker

// AddPartitionsToTxn: v0-3
//
// Answered by the transaction coordinator (internal/txn). v4+ (KIP-890's
// batched form sent by brokers to verify partitions) is not implemented.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.AddPartitionsToTxn, 0, 3, handleAddPartitionsToTxn) }

func handleAddPartitionsToTxn(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AddPartitionsToTxnRequest)
	// The coordinator may wait for a transaction of the same id that is
	// writing markers: answer off the io goroutine.
	go r.respond(b.txns.coord.AddPartitionsToTxn(req))
}
