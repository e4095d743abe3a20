package broker

// AddPartitionsToTxn: v0-5
//
// Answered by the transaction coordinator (internal/txn). v0-3 come from
// producers (one transaction; WRITE on the transactional id and on each
// topic). v4+ come from brokers (KIP-890): a batch of transactions, each
// added or, with verify_only, checked (a partition not in the ongoing
// transaction is TRANSACTION_ABORTABLE); CLUSTER_ACTION on the cluster,
// else the top-level error is CLUSTER_AUTHORIZATION_FAILED. v5 is sent
// for Produce v12+ (transaction version 2).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.AddPartitionsToTxn, 0, 5, handleAddPartitionsToTxn) }

func handleAddPartitionsToTxn(b *Broker, r *request) {
	req := r.kreq.(*kmsg.AddPartitionsToTxnRequest)
	if req.Version >= 4 {
		if !b.authorizeCluster(r, kmsg.ACLOperationClusterAction) {
			resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			r.respond(resp)
			return
		}
		r.respond(b.txns.coord.AddPartitionsToTxn(req))
		return
	}
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
	// writing markers: this handler runs off the io goroutines (waitingAPIs).
	r.respond(b.txns.coord.AddPartitionsToTxn(req))
}
