package broker

// AddPartitionsToTxn: v0-3
//
// Answered by the transaction coordinator (internal/txn). v4+ (KIP-890's
// batched form sent by brokers to verify partitions) is not implemented.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.AddPartitionsToTxn, 0, 3, handleAddPartitionsToTxn) }

func handleAddPartitionsToTxn(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AddPartitionsToTxnRequest)
	{
		// WRITE on the transactional id, else every partition is
		// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; WRITE on each topic (and
		// never an internal topic, authorizer or not), else its
		// partitions are TOPIC_AUTHORIZATION_FAILED and the others
		// OPERATION_NOT_ATTEMPTED (nothing is added).
		txnOK := b.authorize(r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID)
		deniedTopics := map[string]bool{}
		for _, t := range req.Topics {
			if isInternalTopic(t.Topic) || !b.authorize(r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic, t.Topic) {
				deniedTopics[t.Topic] = true
			}
		}
		if !txnOK || len(deniedTopics) > 0 {
			resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			for _, t := range req.Topics {
				code := kerr.OperationNotAttempted.Code
				switch {
				case !txnOK:
					code = kerr.TransactionalIDAuthorizationFailed.Code
				case deniedTopics[t.Topic]:
					code = kerr.TopicAuthorizationFailed.Code
				}
				rt := kmsg.NewAddPartitionsToTxnResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
					rp.Partition, rp.ErrorCode = p, code
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			r.respond(resp)
			return
		}
	}
	// The coordinator may wait for a transaction of the same id that is
	// writing markers: answer off the io goroutine.
	go r.respond(b.txns.coord.AddPartitionsToTxn(req))
}
