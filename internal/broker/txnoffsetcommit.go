package broker

// TxnOffsetCommit: v0-3
//
// Offsets are written to the group's __consumer_offsets partition in a
// transactional batch of the producer and stay invisible until the
// transaction's marker reaches that partition (internal/group/txn.go).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.TxnOffsetCommit, 0, 3, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(b *Broker, r *request) {
	req := r.kreq.(*kmsg.TxnOffsetCommitRequest)
	if b.authz.acl == nil {
		r.respond(b.groups.TxnOffsetCommit(req))
		return
	}
	// WRITE on the transactional id and READ on the group, else every
	// partition fails; READ on each topic, else its partitions are
	// TOPIC_AUTHORIZATION_FAILED and the others are still committed.
	all := int16(0)
	switch {
	case !b.authorize(r, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID):
		all = kerr.TransactionalIDAuthorizationFailed.Code
	case !b.authorizeGroup(r, kmsg.ACLOperationRead, req.Group):
		all = kerr.GroupAuthorizationFailed.Code
	}
	sub := *req
	sub.Topics = nil
	var denied []kmsg.TxnOffsetCommitResponseTopic
	for _, t := range req.Topics {
		code := all
		if code == 0 && !b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, t.Topic) {
			code = kerr.TopicAuthorizationFailed.Code
		}
		if code == 0 {
			sub.Topics = append(sub.Topics, t)
			continue
		}
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	if len(sub.Topics) > 0 || len(denied) == 0 {
		resp = b.groups.TxnOffsetCommit(&sub)
	}
	resp.Topics = append(denied, resp.Topics...)
	r.respond(resp)
}
