package broker

// DeleteTopics: v0-6
//
// Topics are named (v0-5 TopicNames, v6 Topics) or, from v6, given by id.
// As Kafka's controller: with delete.topic.enable=false every topic gets
// TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3, which lacks the
// code) without a message; a name or id repeated in one request gets
// INVALID_REQUEST; a v6 entry with both a name and an id, or neither, is
// INVALID_REQUEST, and so is a name given together with its topic's id
// (one entry for the pair); unknown names get
// UNKNOWN_TOPIC_OR_PARTITION and unknown ids UNKNOWN_TOPIC_ID. A deleted
// topic's logs are removed by the broker when it applies the new metadata.
//
// Deviation: TimeoutMillis is ignored; the topic is gone from metadata
// when the response is sent.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/quota"
)

func init() { register(kmsg.DeleteTopics, 0, 6, handleDeleteTopics) }

// Kafka's default messages for the codes DeleteTopics returns.
const (
	msgUnknownTopicOrPartition = "This server does not host this topic-partition."
	msgUnknownTopicID          = "This server does not host this topic ID."
)

func handleDeleteTopics(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	version := r.hdr.APIVersion

	// Normalise both request forms to name-or-id entries.
	entries := req.Topics
	if version < 6 {
		entries = nil
		for _, name := range req.TopicNames {
			n := name
			entries = append(entries, kmsg.DeleteTopicsRequestTopic{Topic: &n})
		}
	}
	add := func(name *string, id [16]byte, e *apiError) {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic = name
		st.TopicID = id
		st.ErrorCode = e.errorCode()
		if version >= 5 {
			st.ErrorMessage = e.messagePtr()
		}
		resp.Topics = append(resp.Topics, st)
	}
	if !b.cfg.DeleteTopicEnable {
		code := kerr.TopicDeletionDisabled
		if version < 3 {
			code = kerr.InvalidRequest
		}
		for _, e := range entries {
			// Kafka fails the whole request: the code, no message.
			add(e.Topic, e.TopicID, &apiError{code: code.Code})
		}
		r.respond(resp)
		return
	}

	names, ids := map[string]int{}, map[[16]byte]int{}
	for _, e := range entries {
		switch {
		case e.Topic != nil && e.TopicID == [16]byte{}:
			names[*e.Topic]++
		case e.Topic == nil && e.TopicID != [16]byte{}:
			ids[e.TopicID]++
		}
	}
	// A name whose topic's id the request also gives: Kafka answers one
	// INVALID_REQUEST for the pair (when the name may be deleted) and
	// nothing for the id entry.
	clash := map[[16]byte]bool{}
	clashName := map[string][16]byte{}
	for _, e := range entries {
		if e.Topic == nil || e.TopicID != [16]byte{} || names[*e.Topic] > 1 {
			continue
		}
		if t := b.meta.Image().Topics[*e.Topic]; t != nil && ids[t.ID] == 1 &&
			b.authorize(r, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeTopic, t.Name) {
			clash[t.ID] = true
			clashName[t.Name] = t.ID
		}
	}
	reported := map[string]bool{}
	reportedIDs := map[[16]byte]bool{}
	mq := b.mutationQuota(r, quota.StrictSinceDeleteTopics)
	for _, e := range entries {
		switch {
		case e.Topic == nil && e.TopicID == [16]byte{}:
			add(nil, e.TopicID, newAPIError(kerr.InvalidRequest, "Neither topic name nor id were specified."))
		case e.Topic != nil && e.TopicID != [16]byte{}:
			add(e.Topic, e.TopicID, newAPIError(kerr.InvalidRequest, "You may not specify both topic name and topic id."))
		case e.Topic != nil && names[*e.Topic] > 1:
			if !reported[*e.Topic] {
				reported[*e.Topic] = true
				add(e.Topic, [16]byte{}, newAPIError(kerr.InvalidRequest, "Duplicate topic name."))
			}
		case e.Topic == nil && ids[e.TopicID] > 1:
			if !reportedIDs[e.TopicID] {
				reportedIDs[e.TopicID] = true
				add(nil, e.TopicID, newAPIError(kerr.InvalidRequest, "Duplicate topic id."))
			}
		case e.Topic == nil && clash[e.TopicID]:
			// Answered with its name's entry.
		case e.Topic != nil && clashName[*e.Topic] != [16]byte{}:
			add(e.Topic, clashName[*e.Topic],
				newAPIError(kerr.InvalidRequest, "The provided topic name maps to an ID that was already supplied."))
		case e.Topic != nil:
			if !b.authorize(r, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeTopic, *e.Topic) {
				add(e.Topic, [16]byte{}, kafkaError(kerr.TopicAuthorizationFailed))
				continue
			}
			if t := b.meta.Image().Topics[*e.Topic]; t != nil {
				if qe := recordMutations(mq, len(t.Partitions)); qe != nil {
					add(e.Topic, t.ID, qe)
					continue
				}
			}
			id, err := b.deleteTopicByName(*e.Topic)
			add(e.Topic, id, err)
		default:
			if t := b.meta.Image().TopicByID(metadata.TopicID(e.TopicID)); t != nil &&
				!b.authorize(r, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeTopic, t.Name) {
				add(nil, e.TopicID, kafkaError(kerr.TopicAuthorizationFailed))
				continue
			}
			name, err := b.deleteTopicByID(e.TopicID)
			add(name, e.TopicID, err)
		}
	}
	resp.ThrottleMillis = r.mutationThrottle(mq)
	r.respond(resp)
}

// deleteTopicByName deletes a topic and returns its id.
func (b *Broker) deleteTopicByName(name string) ([16]byte, *apiError) {
	t := b.meta.Image().Topics[name]
	if t == nil {
		return [16]byte{}, newAPIError(kerr.UnknownTopicOrPartition, msgUnknownTopicOrPartition)
	}
	if err := b.meta.DeleteTopic(name); err != nil {
		if errors.Is(err, metadata.ErrUnknownTopic) {
			return [16]byte{}, newAPIError(kerr.UnknownTopicOrPartition, msgUnknownTopicOrPartition)
		}
		b.log.Error("delete topic", "topic", name, "err", err)
		return t.ID, toAPIError(err)
	}
	return t.ID, nil
}

// deleteTopicByID deletes a topic by id and returns its name (nil if
// unknown).
func (b *Broker) deleteTopicByID(id [16]byte) (*string, *apiError) {
	t := b.meta.Image().TopicByID(metadata.TopicID(id))
	if t == nil {
		return nil, newAPIError(kerr.UnknownTopicID, msgUnknownTopicID)
	}
	name := t.Name
	if err := b.meta.DeleteTopic(name); err != nil {
		if errors.Is(err, metadata.ErrUnknownTopic) {
			return nil, newAPIError(kerr.UnknownTopicID, msgUnknownTopicID)
		}
		b.log.Error("delete topic", "topic", name, "err", err)
		return &name, toAPIError(err)
	}
	return &name, nil
}
