package broker

// ListTransactions: v0-2
//
// The transactional ids of the __transaction_state partitions this broker
// leads (each broker lists its own; admin clients ask every broker),
// filtered by state (unknown state names come back in
// unknown_state_filters), producer id, v1's duration (transactions that
// began more than duration_filter ms ago) and v2's transactional id
// pattern (KIP-1152: a regular expression matched against the whole id,
// Go's RE2 syntax standing in for RE2/J; an invalid one is
// INVALID_REGULAR_EXPRESSION). Ids the principal may not DESCRIBE are left
// out. Dead ids are never listed.

import (
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/txn"
)

func init() { register(kmsg.ListTransactions, 0, 2, handleListTransactions) }

func handleListTransactions(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	f := txn.ListFilter{ProducerIDs: req.ProducerIDFilters, MinDurationMillis: -1}
	if req.Version >= 1 {
		f.MinDurationMillis = req.DurationFilterMillis
	}
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile("^(?:" + *req.TransactionalIDPattern + ")$")
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			r.respond(resp)
			return
		}
		f.Match = re.MatchString
	}
	unknown := false
	for _, name := range req.StateFilters {
		s, ok := txn.ParseState(name)
		if !ok {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
			unknown = true
			continue
		}
		f.States = append(f.States, s)
	}
	if unknown && len(f.States) == 0 {
		// Only unknown states were asked for: none can match (Kafka's
		// filter is non-empty and matches nothing).
		r.respond(resp)
		return
	}
	go func() {
		for _, l := range b.txns.coord.List(f) {
			if !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, l.TransactionalID) {
				continue
			}
			st := kmsg.NewListTransactionsResponseTransactionState()
			st.TransactionalID, st.ProducerID, st.TransactionState = l.TransactionalID, l.ProducerID, l.State.String()
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		r.respond(resp)
	}()
}
