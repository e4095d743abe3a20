package broker

// TxnOffsetCommit: v0-5
//
// Offsets are written to the group's __consumer_offsets partition in a
// transactional batch of the producer and stay invisible until the
// transaction's marker reaches that partition (internal/group/txn.go).
//
// KIP-890: when the producer has no transaction open on that partition
// yet, the transaction coordinator is asked first whether the partition
// is in its ongoing transaction (with
// transaction.partition.verification.enable), or adds it (v5 when the
// cluster's transaction.version is 2: the client sends no
// AddOffsetsToTxn). A partition not in the
// transaction is INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v5); a
// coordinator that cannot answer is COORDINATOR_NOT_AVAILABLE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.TxnOffsetCommit, 0, 5, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(b *Broker, r *request) {
	req := r.kreq.(*kmsg.TxnOffsetCommitRequest)
	if req.Version >= 5 || b.txnVerificationEnabled() {
		// Verification may ask a remote transaction coordinator.
		go b.txnOffsetCommit(r, req)
		return
	}
	b.txnOffsetCommit(r, req)
}

// groupsTxnOffsetCommit verifies the transaction (KIP-890) and hands the
// commit to the group coordinator.
func (b *Broker) groupsTxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	code := b.verifyTxnOffsetCommit(req)
	if code == 0 {
		return b.groups.TxnOffsetCommit(req)
	}
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// verifyTxnOffsetCommit checks (or, from v5, adds) the group's
// __consumer_offsets partition in the producer's transaction when the
// producer has none open there. It returns 0 when there is nothing to
// check, e.g. when this broker does not lead the partition (the group
// coordinator then answers NOT_COORDINATOR).
func (b *Broker) verifyTxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) int16 {
	add := req.Version >= 5 && b.txnVersion2()
	if (!add && !b.txnVerificationEnabled()) || req.TransactionalID == "" || req.ProducerID < 0 {
		return 0
	}
	if _, err := b.ensureOffsetsTopic(); err != nil {
		return 0 // the group coordinator answers the commit with the reason
	}
	index := b.groups.PartitionFor(req.Group)
	_, p := b.partition(offsetsTopic, index)
	if p == nil || !p.IsLeader() {
		return 0
	}
	if _, open := p.Log.OngoingTxnStart(req.ProducerID); open {
		return 0
	}
	codes := b.verifyTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, map[string][]int32{offsetsTopic: {index}}, add)
	code, _ := verificationError(codes[offsetsTopic][index], req.Version >= 5)
	if code == kerr.NotEnoughReplicas.Code {
		code = kerr.CoordinatorNotAvailable.Code
	}
	return code
}

func (b *Broker) txnOffsetCommit(r *request, req *kmsg.TxnOffsetCommitRequest) {
	if b.authz.acl == nil {
		r.respond(b.groupsTxnOffsetCommit(req))
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
		resp = b.groupsTxnOffsetCommit(&sub)
	}
	resp.Topics = append(denied, resp.Topics...)
	r.respond(resp)
}
