package broker

// Metadata: v0-13
//
// Topics may be named or (v10+) given by id. A null topic list (v1+; an
// empty one in v0) means all topics. Unknown topics are created when
// auto.create.topics.enable is set and the request allows it (v4+; always
// in v0-3), with num.partitions and default.replication.factor; as Kafka,
// the request that creates a topic answers it LEADER_NOT_AVAILABLE with no
// partitions (a creation error keeps its own code), and the topic appears
// from the next request on. Internal topics are flagged.
//
// As Kafka: a topic named (or id given) twice is answered once; an
// unknown id gets UNKNOWN_TOPIC_ID with the id echoed and a null name;
// authorized operations (v8+) are INT32_MIN unless requested, and then,
// with no authorizer, every operation the TOPIC (or, v8-10, CLUSTER)
// resource supports. The v13 top-level ErrorCode (KIP-1102, for
// REBOOTSTRAP_REQUIRED) is 0: as Kafka 4.x's broker, we never set it.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.Metadata, 0, 13, handleMetadata) }

func handleMetadata(b *Broker, r *request) {
	req := r.kreq.(*kmsg.MetadataRequest)
	resp := kmsg.NewPtrMetadataResponse()
	im := b.meta.Image()

	for i := range im.Brokers {
		br := onListener(&im.Brokers[i], r.c.ls.name)
		if br == nil || br.Fenced {
			continue
		}
		resp.Brokers = append(resp.Brokers, kmsg.MetadataResponseBroker{
			NodeID: br.NodeID, Host: br.Host, Port: br.Port, Rack: br.Rack,
		})
	}
	cid := im.ClusterID
	resp.ClusterID = &cid
	resp.ControllerID = im.ControllerID
	if r.hdr.APIVersion >= 8 && r.hdr.APIVersion <= 10 {
		resp.AuthorizedOperations = b.authorizedOperations(r, req.IncludeClusterAuthorizedOperations,
			kmsg.ACLResourceTypeCluster, clusterResourceName)
	}
	defer func() {
		if r.hdr.APIVersion >= 8 {
			for i := range resp.Topics {
				if t := &resp.Topics[i]; t.ErrorCode != kerr.TopicAuthorizationFailed.Code && t.Topic != nil {
					t.AuthorizedOperations = b.authorizedOperations(r, req.IncludeTopicAuthorizedOperations,
						kmsg.ACLResourceTypeTopic, *t.Topic)
				}
			}
		}
		r.respond(resp)
	}()
	describable := func(name string) bool {
		return b.authorize(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name)
	}

	all := req.Topics == nil || (r.hdr.APIVersion == 0 && len(req.Topics) == 0)
	if all {
		// Topics the principal may not describe are left out.
		for _, name := range im.SortedTopics() {
			if describable(name) {
				resp.Topics = append(resp.Topics, metadataTopic(im, im.Topics[name]))
			}
		}
		return
	}
	autoCreate := b.cfg.AutoCreateTopicsEnable && (r.hdr.APIVersion < 4 || req.AllowAutoTopicCreation)
	seenNames, seenIDs := map[string]bool{}, map[[16]byte]bool{}
	for _, rt := range req.Topics {
		var t *metadata.Topic
		switch {
		case rt.Topic != nil:
			if seenNames[*rt.Topic] {
				continue
			}
			seenNames[*rt.Topic] = true
			t = im.Topics[*rt.Topic]
		case rt.TopicID != [16]byte{}:
			if seenIDs[rt.TopicID] {
				continue
			}
			seenIDs[rt.TopicID] = true
			t = im.TopicByID(rt.TopicID)
			if t != nil && !describable(t.Name) {
				// Topic ids are not secret: Kafka answers with the id
				// and no name.
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID = rt.TopicID
				mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			if t == nil {
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID = rt.TopicID
				mt.ErrorCode = kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			}
		}
		if rt.Topic != nil && !describable(*rt.Topic) {
			// Whether the topic exists is not told to whom may not
			// describe it.
			name := *rt.Topic
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = &name
			mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		if t == nil {
			name := ""
			if rt.Topic != nil {
				name = *rt.Topic
			}
			code := kerr.UnknownTopicOrPartition.Code
			if err := validateTopicName(name); err != nil {
				code = kerr.InvalidTopicException.Code
			} else if autoCreate && !b.authorizeCreateTopic(r, name) {
				code = kerr.TopicAuthorizationFailed.Code
			} else if autoCreate {
				// As Kafka's AutoTopicCreationManager: the request that
				// creates the topic (or finds it being created) is
				// answered LEADER_NOT_AVAILABLE with no partitions;
				// the next Metadata request sees the topic.
				// An internal topic is made as its coordinator makes it.
				code = kerr.LeaderNotAvailable.Code
				var err error
				if _, _, _, internal := b.internalTopicSpec(name); internal {
					err = b.createInternalTopic(name)
				} else {
					_, err = b.createTopic(name, -1, -1, nil)
				}
				if err != nil && !errors.Is(err, metadata.ErrTopicExists) {
					b.log.Warn("auto-create topic", "topic", name, "err", err)
					code = errorCode(err)
				}
			}
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = &name
			mt.ErrorCode = code
			mt.IsInternal = isInternalTopic(name)
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		resp.Topics = append(resp.Topics, metadataTopic(im, t))
	}
}

// ACL operation codes of the operations the TOPIC resource supports
// (Kafka's AclOperation: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7,
// DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11).
var topicOperations = []int32{3, 4, 5, 6, 7, 8, 10, 11}

// operationsField is Kafka's bit field of authorized operations.
func operationsField(ops []int32) int32 {
	var f int32
	for _, op := range ops {
		f |= 1 << op
	}
	return f
}

func metadataTopic(im *metadata.Image, t *metadata.Topic) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic = &name
	mt.TopicID = t.ID
	mt.IsInternal = isInternalTopic(t.Name)
	for _, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Partition
		mp.Leader = p.Leader
		mp.LeaderEpoch = p.LeaderEpoch
		mp.Replicas = p.Replicas
		mp.ISR = p.ISR
		mp.OfflineReplicas = []int32{}
		for _, r := range p.Replicas {
			if br := im.BrokerByID(r); br == nil || br.Fenced {
				mp.OfflineReplicas = append(mp.OfflineReplicas, r)
			}
		}
		if p.Leader < 0 {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}
