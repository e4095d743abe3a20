package broker

// InitProducerId: v0-4
//
// A transactional id is answered by the transaction coordinator
// (internal/txn: epoch bump, fencing, abort of an ongoing transaction),
// off the io goroutine since that may write markers.
// Producer ids come from the metadata store in blocks of 1000 and are
// never reused, across restarts included. A v3+ request naming its
// current producer id and epoch (KIP-360) gets the epoch bumped, or a new
// id when the epoch would overflow.

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.InitProducerID, 0, 4, handleInitProducerID) }

const producerIDBlock = 1000

func handleInitProducerID(b *Broker, r *request) {
	req := r.kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil && *req.TransactionalID != "" {
		go r.respond(b.txns.coord.InitProducerID(req))
		return
	}
	if req.ProducerID >= 0 && req.ProducerEpoch >= 0 && req.ProducerEpoch < math.MaxInt16-1 {
		resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch+1
		r.respond(resp)
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
