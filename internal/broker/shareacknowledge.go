package broker

// ShareAcknowledge: v1-2 (Kafka 4.2)
//
// Acknowledges records a member acquired with ShareFetch: ACCEPT (1),
// RELEASE (2), REJECT (3), GAP (0), and RENEW (4, KIP-1222) when v2's
// IsRenewAck is set. Every batch of a partition is checked before any is
// applied (INVALID_REQUEST for malformed batches, INVALID_RECORD_STATE
// for offsets the member does not hold), and the new state is committed
// to the share coordinator before the answer. The share session epoch
// must match (0 is INVALID_SHARE_SESSION_EPOCH: only ShareFetch opens a
// session); -1 closes the session after the acknowledgements, releasing
// what the member still holds on its partitions. A partition this broker
// does not lead answers NOT_LEADER_OR_FOLLOWER with its current leader.
// The handler runs on its own goroutine (it waits for the commit).

import (
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.ShareAcknowledge, 1, 2, handleShareAcknowledge) }

func handleShareAcknowledge(b *Broker, r *request) { b.goShare(r, b.shareAcknowledgeRequest) }

func (b *Broker) shareAcknowledgeRequest(r *request) {
	req := r.kreq.(*kmsg.ShareAcknowledgeRequest)
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	groupID, memberID, lim, code := b.shareRequestStart(r, req.GroupID, req.MemberID)
	resp.AcquisitionLockTimeoutMillis = int32(lim.LockDuration / time.Millisecond)
	fail := func(code int16) {
		resp.ErrorCode = code
		r.respond(resp)
	}
	if code != 0 {
		fail(code)
		return
	}
	if groupID == "" || memberID == "" || len(memberID) > 36 {
		fail(kerr.InvalidRequest.Code)
		return
	}
	renew := req.Version >= 2 && req.IsRenewAck
	key := shareSessionKey{groupID, memberID}
	sessions := b.shares.sessions
	var ss *shareSession
	switch req.ShareSessionEpoch {
	case 0:
		fail(kerr.InvalidShareSessionEpoch.Code)
		return
	case -1:
		if ss = sessions.get(key); ss == nil {
			fail(kerr.ShareSessionNotFound.Code)
			return
		}
	default:
		var code int16
		if ss, code = sessions.check(key, req.ShareSessionEpoch); code != 0 {
			fail(code)
			return
		}
	}
	im := b.meta.Image()
	nodes := map[int32]*metadata.Broker{}
	released := false
	for _, t := range req.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			batches := make([]share.AckBatch, 0, len(p.AcknowledgementBatches))
			for _, ab := range p.AcknowledgementBatches {
				batches = append(batches, share.AckBatch{FirstOffset: ab.FirstOffset, LastOffset: ab.LastOffset, Types: ackTypes(ab.AcknowledgeTypes)})
			}
			tp := shareTP{t.TopicID, p.Partition}
			code, rel, name := b.shareAcknowledge(r, groupID, memberID, tp, batches, renew, lim)
			rp.ErrorCode = code
			released = released || rel
			if code == kerr.NotLeaderForPartition.Code {
				if leader, epoch, br := currentLeader(im, name, tp.p, r.c.ls.name); br != nil {
					rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = leader, epoch
					nodes[leader] = br
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if released {
		b.shares.mgr.Notify()
	}
	for _, n := range nodes {
		ne := kmsg.NewShareAcknowledgeResponseNodeEndpoint()
		ne.NodeID, ne.Host, ne.Port, ne.Rack = n.NodeID, n.Host, n.Port, n.Rack
		resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
	}
	slices.SortFunc(resp.NodeEndpoints, func(x, y kmsg.ShareAcknowledgeResponseNodeEndpoint) int { return int(x.NodeID - y.NodeID) })
	if req.ShareSessionEpoch == -1 {
		b.closeShareSession(key, ss)
	} else {
		sessions.answered(ss, nil)
	}
	r.respond(resp)
}

// shareAcknowledge applies one partition's acknowledgement batches and
// commits the new state. It returns the partition's error code, whether
// records became available to others, and the topic's name.
func (b *Broker) shareAcknowledge(r *request, groupID, memberID string, tp shareTP, batches []share.AckBatch, renew bool, lim share.Limits) (int16, bool, string) {
	name := b.topicNameByID(tp.id)
	if name == "" {
		return kerr.UnknownTopicID.Code, false, ""
	}
	if !b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, name) {
		return kerr.TopicAuthorizationFailed.Code, false, name
	}
	_, p := b.partition(name, tp.p)
	if p == nil || !p.IsLeader() {
		if t := b.meta.Image().Topics[name]; t == nil || tp.p < 0 || int(tp.p) >= len(t.Partitions) {
			return kerr.UnknownTopicOrPartition.Code, false, name
		}
		return kerr.NotLeaderForPartition.Code, false, name
	}
	key := share.Key{Group: groupID, TopicID: tp.id, Partition: tp.p}
	sp, err := b.shares.mgr.Partition(key, p.LeaderEpoch(), b.shareInitialOffset(groupID, p))
	if err != nil {
		b.log.Debug("load share-partition", "share.partition", key.String(), "err", err)
		return shareLoadErrorCode(err), false, name
	}
	released, err := sp.Acknowledge(memberID, batches, renew, lim, time.Now())
	switch {
	case errors.Is(err, share.ErrInvalidAck):
		return kerr.InvalidRequest.Code, false, name
	case errors.Is(err, share.ErrInvalidRecordState):
		return kerr.InvalidRecordState.Code, false, name
	case err != nil:
		return kerr.UnknownServerError.Code, false, name
	}
	if err := b.shares.mgr.Persist(key, sp); err != nil {
		b.log.Debug("persist acknowledgements", "share.partition", key.String(), "err", err)
		// The change is undone (the state reloads from what was
		// committed): the member must not believe it acknowledged.
		return kerr.CoordinatorNotAvailable.Code, false, name
	}
	return 0, released, name
}
