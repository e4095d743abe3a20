package broker

// FindCoordinator: v0-6
//
// Key type 0 (group): the coordinator is the leader of the group's
// __consumer_offsets partition, which is created on first need. v4+ asks
// for a batch of keys. Key type 1 (transactions): the leader of the
// transactional id's __transaction_state partition, created on first
// need. Key type 2 (share, v6+; INVALID_REQUEST before): the leader of
// the key's __share_group_state partition (see shareCoordinatorFor in
// shares.go), for brokers only: without CLUSTER_ACTION the whole request
// is CLUSTER_AUTHORIZATION_FAILED. Other types fail the whole request with
// INVALID_REQUEST. An error answers node -1, host "" and port -1, as
// Kafka.
//
// Error messages are Kafka's (KafkaApis.getCoordinator and
// FindCoordinatorResponse): before v4 the message is the error's default
// message, "NONE" on success; from v4 each coordinator's message is the
// empty string, whether it succeeded or not, except when the whole request
// fails (an unknown coordinator type, a share lookup without
// CLUSTER_ACTION), which puts the error and its default message on every
// key.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.FindCoordinator, 0, 6, handleFindCoordinator) }

// Kafka's CoordinatorType values.
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
	coordinatorShare       = 2
)

func handleFindCoordinator(b *Broker, r *request) {
	req := r.kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keyType := req.CoordinatorType
	// Errors of the whole request (Kafka throws them out of the handler).
	var whole *kerr.Error
	switch {
	case keyType < coordinatorGroup || keyType > coordinatorShare:
		whole = kerr.InvalidRequest
	case keyType == coordinatorShare && r.hdr.APIVersion >= 6 && !b.authorizeCluster(r, kmsg.ACLOperationClusterAction):
		whole = kerr.ClusterAuthorizationFailed
	}
	if r.hdr.APIVersion >= 4 {
		for _, key := range req.CoordinatorKeys {
			if whole != nil {
				resp.Coordinators = append(resp.Coordinators, coordinatorError(key, whole))
				continue
			}
			c := b.findCoordinator(r, key, keyType)
			empty := "" // Kafka sets no message on a key it looked up
			c.ErrorMessage = &empty
			resp.Coordinators = append(resp.Coordinators, c)
		}
		r.respond(resp)
		return
	}
	var c kmsg.FindCoordinatorResponseCoordinator
	if whole != nil {
		c = coordinatorError(req.CoordinatorKey, whole)
	} else {
		c = b.findCoordinator(r, req.CoordinatorKey, keyType)
	}
	resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
	if c.ErrorCode == 0 {
		none := "NONE" // Kafka's Errors.NONE.message()
		resp.ErrorMessage = &none
	}
	resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
	r.respond(resp)
}

// coordinatorError answers key with err, its default message and Kafka's
// Node.noNode(): id -1, host "", port -1.
func coordinatorError(key string, err *kerr.Error) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key, c.NodeID, c.Port = key, -1, -1
	e := kafkaError(err)
	c.ErrorCode = e.code
	c.ErrorMessage = &e.msg
	return c
}

// findCoordinator looks one key of a known type up.
func (b *Broker) findCoordinator(r *request, key string, keyType int8) kmsg.FindCoordinatorResponseCoordinator {
	fail := func(err *kerr.Error) kmsg.FindCoordinatorResponseCoordinator {
		return coordinatorError(key, err)
	}
	// DESCRIBE on the group or transactional id (Kafka's rule).
	switch {
	case keyType == coordinatorGroup && !b.authorizeGroup(r, kmsg.ACLOperationDescribe, key):
		return fail(kerr.GroupAuthorizationFailed)
	case keyType == coordinatorTransaction && !b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, key):
		return fail(kerr.TransactionalIDAuthorizationFailed)
	case keyType == coordinatorShare && r.hdr.APIVersion < 6:
		return fail(kerr.InvalidRequest)
	}
	var leader int32
	switch keyType {
	case coordinatorGroup, coordinatorTransaction:
		topic := offsetsTopic
		var p int32
		if keyType == coordinatorGroup {
			if _, err := b.ensureOffsetsTopic(); err != nil {
				b.log.Warn("find coordinator", "err", err)
				return fail(kerr.CoordinatorNotAvailable)
			}
			p = b.groups.PartitionFor(key)
		} else {
			if _, err := b.ensureTxnTopic(); err != nil {
				b.log.Warn("find coordinator", "err", err)
				return fail(kerr.CoordinatorNotAvailable)
			}
			topic, p = transactionStateTopic, b.txns.coord.PartitionFor(key)
		}
		// The coordinator is whichever broker leads the key's partition.
		t := b.meta.Image().Topics[topic]
		if t == nil || int(p) >= len(t.Partitions) || t.Partitions[p].Leader < 0 {
			return fail(kerr.CoordinatorNotAvailable)
		}
		leader = t.Partitions[p].Leader
	default:
		id, code := b.shareCoordinatorFor(key)
		if code != 0 {
			err, ok := kerr.ErrorForCode(code).(*kerr.Error)
			if !ok {
				err = kerr.UnknownServerError
			}
			return fail(err)
		}
		leader = id
	}
	br := onListener(b.meta.Image().BrokerByID(leader), r.c.ls.name)
	if br == nil {
		return fail(kerr.CoordinatorNotAvailable)
	}
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key = key
	c.NodeID, c.Host, c.Port = br.NodeID, br.Host, br.Port
	return c
}
