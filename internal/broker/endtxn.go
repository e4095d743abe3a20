package broker

// EndTxn: v0-5
//
// v5 (KIP-890 part 2, transaction version 2) bumps the producer epoch on
// every transaction end: the markers carry the bumped epoch and the
// response names the producer id and epoch to continue with.
//
// Deviation: answered once the COMMIT/ABORT markers are written to every
// partition of the transaction and the transaction is complete (Kafka
// answers after PrepareCommit/PrepareAbort and writes markers in the
// background), unless a marker cannot be written: then, as Kafka, the
// answer is success and the markers are retried.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.EndTxn, 0, 5, handleEndTxn) }

func handleEndTxn(b *Broker, r *request) {
	req := r.kreq.(*kmsg.EndTxnRequest)
	if !b.authorize(r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	r.respond(b.txns.coord.EndTxn(req))
}
