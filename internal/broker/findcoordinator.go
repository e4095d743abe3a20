package broker

// FindCoordinator: v0-6
//
// Key type 0 (group): the coordinator is the leader of the group's
// __consumer_offsets partition, which is created on first need. v4+ asks
// for a batch of keys. Key type 1 (transactions): the leader of the
// transactional id's __transaction_state partition, created on first
// need. Other types get INVALID_REQUEST. An error answers node -1, host ""
// and port -1, as Kafka.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.FindCoordinator, 0, 6, handleFindCoordinator) }

func handleFindCoordinator(b *Broker, r *request) {
	req := r.kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if r.hdr.APIVersion >= 4 {
		for _, key := range req.CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, b.findCoordinator(r, key, req.CoordinatorType))
		}
		r.respond(resp)
		return
	}
	c := b.findCoordinator(r, req.CoordinatorKey, req.CoordinatorType)
	resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
	resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
	r.respond(resp)
}

func (b *Broker) findCoordinator(r *request, key string, keyType int8) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key = key
	c.NodeID = -1
	fail := func(code int16, msg string) kmsg.FindCoordinatorResponseCoordinator {
		c.Port = -1 // Kafka's Node.noNode(): id -1, host "", port -1
		c.ErrorCode = code
		c.ErrorMessage = &msg
		return c
	}
	// DESCRIBE on the group or transactional id (Kafka's rule).
	switch {
	case keyType == 0 && !b.authorizeGroup(r, kmsg.ACLOperationDescribe, key):
		return fail(kerr.GroupAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Message)
	case keyType == 1 && !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, key):
		return fail(kerr.TransactionalIDAuthorizationFailed.Code, kerr.TransactionalIDAuthorizationFailed.Message)
	}
	topic := offsetsTopic
	var p int32
	switch keyType {
	case 0:
		if _, err := b.ensureOffsetsTopic(); err != nil {
			b.log.Warn("find coordinator", "err", err)
			return fail(kerr.CoordinatorNotAvailable.Code, err.Error())
		}
		p = b.groups.PartitionFor(key)
	case 1:
		if _, err := b.ensureTxnTopic(); err != nil {
			b.log.Warn("find coordinator", "err", err)
			return fail(kerr.CoordinatorNotAvailable.Code, err.Error())
		}
		topic, p = transactionStateTopic, b.txns.coord.PartitionFor(key)
	default:
		return fail(kerr.InvalidRequest.Code, "unknown coordinator type")
	}
	// The coordinator is whichever broker leads the key's partition.
	im := b.meta.Image()
	t := im.Topics[topic]
	if t == nil || int(p) >= len(t.Partitions) || t.Partitions[p].Leader < 0 {
		return fail(kerr.CoordinatorNotAvailable.Code, "")
	}
	leader := onListener(im.BrokerByID(t.Partitions[p].Leader), r.c.ls.name)
	if leader == nil {
		return fail(kerr.CoordinatorNotAvailable.Code, "")
	}
	c.NodeID, c.Host, c.Port = leader.NodeID, leader.Host, leader.Port
	return c
}
