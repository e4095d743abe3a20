package broker

// DeleteShareGroupOffsets: v0
//
// Deletes the state of every partition of the listed topics for an empty
// share group (NON_EMPTY_GROUP while it has members): the share
// coordinators write tombstones, and the next consumption starts afresh
// from share.auto.offset.reset. Runs on the group's coordinator; needs
// DELETE on the group and READ on each topic.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/share"
)

func init() { register(kmsg.DeleteShareGroupOffsets, 0, 0, handleDeleteShareGroupOffsets) }

func handleDeleteShareGroupOffsets(b *Broker, r *request) { b.goShare(r, b.deleteShareGroupOffsets) }

func (b *Broker) deleteShareGroupOffsets(r *request) {
	req := r.kreq.(*kmsg.DeleteShareGroupOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	if code := b.shareOffsetsAdminCheck(r, kmsg.ACLOperationDelete, req.GroupID); code != 0 {
		resp.ErrorCode = code
		r.respond(resp)
		return
	}
	im := b.meta.Image()
	for _, dt := range req.Topics {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic = dt.Topic
		t := im.Topics[dt.Topic]
		switch {
		case !b.authorize(r, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, dt.Topic):
			rt.ErrorCode = kerr.TopicAuthorizationFailed.Code
		case t == nil:
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		default:
			rt.TopicID = t.ID
			for i := range t.Partitions {
				key := share.Key{Group: req.GroupID, TopicID: t.ID, Partition: int32(i)}
				if code := b.deleteShareState(key); code != 0 && rt.ErrorCode == 0 {
					rt.ErrorCode = code
				}
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	r.respond(resp)
}

// deleteShareState writes a tombstone for key's state and drops the
// local copy.
func (b *Broker) deleteShareState(key share.Key) int16 {
	if err := (sharePersister{b}).Write(key, share.State{StartOffset: -1}); err != nil {
		return shareStateErrorCode(err)
	}
	b.shares.mgr.Drop(key)
	return 0
}
