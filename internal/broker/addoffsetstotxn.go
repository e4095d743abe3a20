package broker

// AddOffsetsToTxn: v0-4 (v4, KIP-1050, may answer TRANSACTION_ABORTABLE;
// it changes nothing else)
//
// The group's __consumer_offsets partition joins the transaction
// (internal/txn); the group coordinator learns the outcome from the
// marker written there.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.AddOffsetsToTxn, 0, 4, handleAddOffsetsToTxn) }

func handleAddOffsetsToTxn(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AddOffsetsToTxnRequest)
	// WRITE on the transactional id, READ on the group.
	code := int16(0)
	switch {
	case !b.authorize(r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID):
		code = kerr.TransactionalIDAuthorizationFailed.Code
	case !b.authorizeGroup(r, kmsg.ACLOperationRead, req.Group):
		code = kerr.GroupAuthorizationFailed.Code
	}
	if code != 0 {
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		r.respond(resp)
		return
	}
	if _, err := b.ensureOffsetsTopic(); err != nil {
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = errorCode(err)
		r.respond(resp)
		return
	}
	r.respond(b.txns.coord.AddOffsetsToTxn(req))
}
