package broker

// InitProducerId: v0-5
//
// v5 is v4 from clients that know transaction version 2 (KIP-890).
//
// A transactional id is answered by the transaction coordinator
// (internal/txn: epoch bump, fencing, abort of an ongoing transaction),
// off the io goroutines (waitingAPIs) since that may write markers.
// Producer ids come from the metadata store in blocks of 1000 and are
// never reused, across restarts included. Without a transactional id every
// request gets a fresh producer id at epoch 0, as Kafka does, even when it
// names its current id and epoch (KIP-360).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.InitProducerID, 0, 5, handleInitProducerID) }

const producerIDBlock = 1000

func handleInitProducerID(b *Broker, r *request) {
	req := r.kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	// Authorization: WRITE on the transactional id; an idempotent producer
	// needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679).
	transactional := req.TransactionalID != nil && *req.TransactionalID != ""
	switch {
	case transactional && !b.authorize(r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		r.respond(resp)
		return
	case !transactional && b.authz.acl != nil && !b.authorizeCluster(r, kmsg.ACLOperationIdempotentWrite) &&
		!b.authz.acl.AuthorizeByResourceType(r.principal, r.c.host, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic):
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		r.respond(resp)
		return
	}
	if transactional {
		r.respond(b.txns.coord.InitProducerID(req))
		return
	}
	id, err := b.nextProducerID()
	if err != nil {
		b.log.Error("allocate producer id", "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		r.respond(resp)
		return
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	r.respond(resp)
}

// nextProducerID hands out producer ids from a block reserved in the
// metadata store.
func (b *Broker) nextProducerID() (int64, error) {
	b.pidMu.Lock()
	defer b.pidMu.Unlock()
	if b.pidNext >= b.pidEnd {
		first, err := b.meta.AllocateProducerIDs(producerIDBlock)
		if err != nil {
			return 0, err
		}
		b.pidNext, b.pidEnd = first, first+producerIDBlock
	}
	id := b.pidNext
	b.pidNext++
	return id, nil
}
