package broker

// AlterShareGroupOffsets: v0
//
// Sets the share-partition start offset of partitions of an empty share
// group (NON_EMPTY_GROUP while it has members): the share coordinator
// stores the new offset under a new state epoch with no in-flight
// records, so a share-partition leader still holding the old state is
// fenced (FENCED_STATE_EPOCH) and reloads. A group that never had members
// is created, empty, with the altered topics as its own (Kafka's
// getOrMaybeCreateShareGroup), so DescribeShareGroupOffsets of all topics
// and DeleteGroups find it. Runs on the group's coordinator; needs READ on
// the group and on each topic.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.AlterShareGroupOffsets, 0, 0, handleAlterShareGroupOffsets) }

func handleAlterShareGroupOffsets(b *Broker, r *request) { b.goShare(r, b.alterShareGroupOffsets) }

func (b *Broker) alterShareGroupOffsets(r *request) {
	req := r.kreq.(*kmsg.AlterShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	if code := b.shareOffsetsAdminCheck(r, kmsg.ACLOperationRead, req.GroupID); code != 0 {
		resp.ErrorCode = code
		r.respond(resp)
		return
	}
	im := b.meta.Image()
	var altered []string
	for _, at := range req.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = at.Topic
		t := im.Topics[at.Topic]
		if t != nil {
			rt.TopicID = t.ID
		}
		authorized := b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, at.Topic)
		for _, ap := range at.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = ap.Partition
			switch {
			case !authorized:
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case t == nil || ap.Partition < 0 || int(ap.Partition) >= len(t.Partitions):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case ap.StartOffset < 0:
				rp.ErrorCode = kerr.InvalidRequest.Code
			default:
				key := share.Key{Group: req.GroupID, TopicID: t.ID, Partition: ap.Partition}
				rp.ErrorCode = b.resetShareState(key, ap.StartOffset)
				if rp.ErrorCode == 0 && !slices.Contains(altered, at.Topic) {
					altered = append(altered, at.Topic)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	// As Kafka, the group exists from now on, with the altered topics as
	// its own, though no member ever joined it.
	b.shares.coord.AddConsumedTopics(req.GroupID, altered...)
	r.respond(resp)
}

// shareOffsetsAdminCheck is the common check of Alter- and
// DeleteShareGroupOffsets: op on the group (READ to alter, DELETE to
// delete, as for OffsetCommit and OffsetDelete), this broker coordinates
// it, it is not a consumer group, and it has no members.
func (b *Broker) shareOffsetsAdminCheck(r *request, op kmsg.ACLOperation, groupID string) int16 {
	if !b.authorizeGroup(r, op, groupID) {
		return kerr.GroupAuthorizationFailed.Code
	}
	if code := b.shareCoordinatorCheck(groupID); code != 0 {
		return code
	}
	if b.isConsumerGroup(groupID) {
		return kerr.GroupIDNotFound.Code
	}
	if len(b.shares.coord.Describe(groupID).Members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	return 0
}

// resetShareState stores key's state as start offset off (or deletes it
// when off is -1) under the next state epoch, and drops the local copy.
func (b *Broker) resetShareState(key share.Key, off int64) int16 {
	p := sharePersister{b}
	cur, ok, err := p.Read(key)
	if err != nil {
		return shareStateErrorCode(err)
	}
	st := share.State{StateEpoch: 1, StartOffset: off}
	if ok {
		st.StateEpoch, st.LeaderEpoch = cur.StateEpoch+1, cur.LeaderEpoch
	}
	if err := p.Write(key, st); err != nil {
		return shareStateErrorCode(err)
	}
	b.shares.mgr.Drop(key)
	return 0
}
