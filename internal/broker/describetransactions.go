package broker

// DescribeTransactions: v0
//
// Answered by the transaction coordinator of each transactional id
// (internal/txn): state, producer id and epoch, timeout, start time and
// the partitions of the ongoing transaction. DESCRIBE on the
// transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; topics the
// principal may not DESCRIBE are left out of the partitions, as Kafka
// does. An id this broker does not coordinate is NOT_COORDINATOR, an
// unknown one TRANSACTIONAL_ID_NOT_FOUND.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DescribeTransactions, 0, 0, handleDescribeTransactions) }

func handleDescribeTransactions(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeTransactionsRequest)
	// Loading a __transaction_state partition may read its log: off the io
	// goroutine.
	go func() {
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range req.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID = id
			st.ProducerID, st.ProducerEpoch, st.StartTimestamp = -1, -1, -1
			if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, id) {
				st.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
				resp.TransactionStates = append(resp.TransactionStates, st)
				continue
			}
			d, code := b.txns.coord.DescribeTransaction(id)
			st.ErrorCode = code
			if code == 0 {
				st.State = d.State.String()
				st.TimeoutMillis, st.StartTimestamp = d.TimeoutMillis, d.StartMillis
				st.ProducerID, st.ProducerEpoch = d.ProducerID, d.ProducerEpoch
				for _, topic := range slices.Sorted(maps.Keys(d.Partitions)) {
					if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, topic) {
						continue
					}
					tt := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					tt.Topic, tt.Partitions = topic, d.Partitions[topic]
					st.Topics = append(st.Topics, tt)
				}
			}
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		r.respond(resp)
	}()
}
