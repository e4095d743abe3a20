package broker

// CreateTopics: v0-7
//
// Checks follow Kafka's controller (ReplicationControlManager) in its
// order, with its error codes and messages: a name that appears twice in
// one request gets one INVALID_REQUEST entry; illegal names
// INVALID_TOPIC_EXCEPTION; a manual ReplicaAssignment requires
// NumPartitions and ReplicationFactor of -1, partitions numbered 0..n-1,
// the same replica count everywhere, only registered brokers and at least
// one active broker per partition; the replicas are then placed exactly as
// listed, the first being the preferred leader;
// -1 partitions or replication factor take num.partitions and
// default.replication.factor; configs are validated like Kafka's
// LogConfig (INVALID_CONFIG naming the first bad key); an existing topic
// gets TOPIC_ALREADY_EXISTS, a name that differs from an existing one only
// by '.' versus '_' INVALID_TOPIC_EXCEPTION, and __cluster_metadata
// INVALID_REQUEST (before authorization). Configs are checked before the
// partition count and replication factor, and the controller mutation
// quota is charged only for a topic that passed every check, as Kafka's
// ReplicationControlManager. ValidateOnly runs every check and creates
// nothing. From v5 a success carries the partition count, replication
// factor and every effective config with its source, and from v7 the
// topic id (for ValidateOnly a random one that no topic has, as Kafka's
// controller, which draws the id before it knows the request only
// validates).
//
// Deviation: TimeoutMillis is ignored, the topic exists when the response
// is sent (a single node has no propagation to wait for). Topic
// creation policies (create.topic.policy.class.name) are not supported.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/quota"
)

func init() { register(kmsg.CreateTopics, 0, 7, handleCreateTopics) }

// apiError is a Kafka error code with its message, for responses that
// carry both.
type apiError struct {
	code int16
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func newAPIError(err *kerr.Error, format string, args ...any) *apiError {
	return &apiError{code: err.Code, msg: fmt.Sprintf(format, args...)}
}

// kafkaMessages are Apache Kafka's default messages (Errors.java) for the
// codes the admin handlers answer with a default message; franz-go's kerr
// messages differ for some (kerr's TOPIC_AUTHORIZATION_FAILED text is the
// Java client's, not the broker's).
var kafkaMessages = map[int16]string{
	kerr.OffsetOutOfRange.Code:                   "The requested offset is not within the range of offsets maintained by the server.",
	kerr.UnknownTopicOrPartition.Code:            "This server does not host this topic-partition.",
	kerr.CoordinatorNotAvailable.Code:            "The coordinator is not available.",
	kerr.InvalidTopicException.Code:              "The request attempted to perform an operation on an invalid topic.",
	kerr.TopicAuthorizationFailed.Code:           "Topic authorization failed.",
	kerr.GroupAuthorizationFailed.Code:           "Group authorization failed.",
	kerr.ClusterAuthorizationFailed.Code:         "Cluster authorization failed.",
	kerr.InvalidRequest.Code:                     "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.",
	kerr.PolicyViolation.Code:                    "Request parameters do not satisfy the configured policy.",
	kerr.TransactionalIDAuthorizationFailed.Code: "Transactional Id authorization failed.",
	kerr.PreferredLeaderNotAvailable.Code:        "The preferred leader was not available.",
	kerr.EligibleLeadersNotAvailable.Code:        "Eligible topic partition leaders are not available.",
	kerr.ElectionNotNeeded.Code:                  "Leader election not needed for topic partition.",
}

// kafkaError is err with Apache Kafka's default message for it (kerr's
// message for codes kafkaMessages does not list).
func kafkaError(err *kerr.Error) *apiError {
	msg, ok := kafkaMessages[err.Code]
	if !ok {
		msg = err.Message
	}
	return &apiError{code: err.Code, msg: msg}
}

// withKafkaMessage is e with Kafka's default message for its code, for
// errors Kafka answers without a message of its own (authorization
// failures from shared helpers whose messages are kerr's).
func withKafkaMessage(e *apiError) *apiError {
	if e == nil {
		return nil
	}
	if msg, ok := kafkaMessages[e.code]; ok {
		return &apiError{code: e.code, msg: msg}
	}
	return e
}

// messagePtr is the ErrorMessage of a response entry: nil for success.
func (e *apiError) messagePtr() *string {
	if e == nil || e.msg == "" {
		return nil
	}
	m := e.msg
	return &m
}

func (e *apiError) errorCode() int16 {
	if e == nil {
		return 0
	}
	return e.code
}

// toAPIError maps an internal error to a code and message.
func toAPIError(err error) *apiError {
	if err == nil {
		return nil
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return &apiError{code: errorCode(err), msg: err.Error()}
}

func handleCreateTopics(b *Broker, r *request) {
	req := r.kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)

	seen := map[string]int{}
	for _, t := range req.Topics {
		seen[t.Topic]++
	}
	dups := map[string]bool{}
	cfg := b.dynamicConfig(b.meta.Image())
	if b.createTopicsRecords(r, req, seen) > maxRecordsPerUserOp {
		for _, rt := range req.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = errExcessivelyLargeBatch.code
			st.ErrorMessage = errExcessivelyLargeBatch.messagePtr()
			resp.Topics = append(resp.Topics, st)
		}
		r.respond(resp)
		return
	}
	mq := b.mutationQuota(r, quota.StrictSinceCreateTopics)
	for i := range req.Topics {
		rt := &req.Topics[i]
		if seen[rt.Topic] > 1 {
			if !dups[rt.Topic] {
				dups[rt.Topic] = true
				st := kmsg.NewCreateTopicsResponseTopic()
				st.Topic = rt.Topic
				st.ErrorCode = kerr.InvalidRequest.Code
				msg := "Duplicate topic name."
				st.ErrorMessage = &msg
				resp.Topics = append(resp.Topics, st)
			}
			continue
		}
		if rt.Topic == clusterMetadataTopic {
			// Refused before authorization, as Kafka's ControllerApis.
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = kerr.InvalidRequest.Code
			if r.hdr.APIVersion >= 1 {
				msg := "Creation of internal topic " + clusterMetadataTopic + " is prohibited."
				st.ErrorMessage = &msg
			}
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if !b.authorizeCreateTopic(r, rt.Topic) {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = kerr.TopicAuthorizationFailed.Code
			msg := "Authorization failed."
			st.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, st)
			continue
		}
		st := b.createTopicFromRequest(cfg, mq, r.hdr.APIVersion, rt, req.ValidateOnly)
		if st.ErrorCode == 0 && !b.authorize(r, kmsg.ACLOperationDescribeConfigs, kmsg.ACLResourceTypeTopic, rt.Topic) {
			// Kafka leaves out what the principal may not describe.
			st.Configs, st.NumPartitions, st.ReplicationFactor = nil, -1, -1
			st.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
		}
		resp.Topics = append(resp.Topics, st)
	}
	resp.ThrottleMillis = r.mutationThrottle(mq)
	r.respond(resp)
}

// maxRecordsPerUserOp is the most metadata records one admin request may
// produce in Kafka (QuorumController.MAX_RECORDS_PER_USER_OP): a request
// that would produce more fails as a whole, before anything is created.
const maxRecordsPerUserOp = 10000

// errExcessivelyLargeBatch is Kafka's answer to every topic of a request
// over maxRecordsPerUserOp (EventHandlerExceptionInfo's translation of
// BoundedListTooLongException).
var errExcessivelyLargeBatch = newAPIError(kerr.PolicyViolation, "Unable to perform excessively large batch operation.")

// createTopicsRecords counts the metadata records the request's creations
// would produce, as Kafka's controller adds them to one bounded list: a
// TopicRecord, one ConfigRecord per config and one PartitionRecord per
// partition of each topic that gets that far (seen counts each name's
// occurrences; duplicates and topics refused earlier produce none).
func (b *Broker) createTopicsRecords(r *request, req *kmsg.CreateTopicsRequest, seen map[string]int) int64 {
	im := b.meta.Image()
	var n int64
	for i := range req.Topics {
		rt := &req.Topics[i]
		if seen[rt.Topic] > 1 || rt.Topic == clusterMetadataTopic || topicNameProblem(rt.Topic) != nil {
			continue
		}
		if _, ok := im.Topics[rt.Topic]; ok || !b.authorizeCreateTopic(r, rt.Topic) {
			continue
		}
		parts := int64(rt.NumPartitions)
		switch {
		case len(rt.ReplicaAssignment) > 0:
			parts = int64(len(rt.ReplicaAssignment))
		case parts == -1:
			parts = int64(b.cfg.NumPartitions)
		case parts < 1:
			continue
		}
		n += 1 + int64(len(rt.Configs)) + parts
	}
	return n
}

// createTopicFromRequest validates one topic of a CreateTopics request and,
// unless validateOnly, creates it. The checks run in the order of Kafka's
// ReplicationControlManager.createTopics: name, existence, configs, then
// partitions and replicas; only a topic that passed them all is charged to
// the controller mutation quota mq (validateOnly too, as Kafka).
func (b *Broker) createTopicFromRequest(cfg *config.Broker, mq *quota.MutationQuota, version int16, rt *kmsg.CreateTopicsRequestTopic, validateOnly bool) kmsg.CreateTopicsResponseTopic {
	st := kmsg.NewCreateTopicsResponseTopic()
	st.Topic = rt.Topic
	fail := func(e *apiError) kmsg.CreateTopicsResponseTopic {
		st.ErrorCode = e.code
		if version >= 1 {
			st.ErrorMessage = e.messagePtr()
		}
		return st
	}
	if err := topicNameProblem(rt.Topic); err != nil {
		return fail(newAPIError(kerr.InvalidTopicException, "%s", err))
	}
	if rt.Topic == clusterMetadataTopic {
		return fail(newAPIError(kerr.InvalidRequest, "Creation of internal topic %s is prohibited.", rt.Topic))
	}
	im := b.meta.Image()
	if _, ok := im.Topics[rt.Topic]; ok {
		return fail(newAPIError(kerr.TopicAlreadyExists, "Topic '%s' already exists.", rt.Topic))
	}
	if other := collidingTopic(im, rt.Topic); other != "" {
		return fail(newAPIError(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", rt.Topic, other))
	}
	overrides, e := topicConfigsFromRequest(cfg, rt.Configs)
	if e != nil {
		return fail(e)
	}
	partitions, rf, assignment, e := b.checkTopicLayout(im, rt)
	if e != nil {
		return fail(e)
	}
	if e := recordMutations(mq, int(partitions)); e != nil {
		return fail(e)
	}
	// ReplicationControlManager.createTopic draws the id before it
	// knows whether the request only validates: a ValidateOnly success
	// carries a fresh random id too.
	st.TopicID = metadata.NewTopicID()
	if !validateOnly {
		var t *metadata.Topic
		var err error
		if assignment != nil {
			t, err = b.meta.CreateTopicWithAssignment(rt.Topic, assignment, overrides)
		} else {
			t, err = b.meta.CreateTopic(rt.Topic, partitions, rf, overrides)
		}
		if err != nil {
			switch {
			case errors.Is(err, metadata.ErrTopicExists):
				return fail(newAPIError(kerr.TopicAlreadyExists, "Topic '%s' already exists.", rt.Topic))
			case errors.Is(err, metadata.ErrInvalidReplicaAssignment):
				// The controller's check raced a fencing: its message is Kafka's.
				msg := strings.TrimPrefix(err.Error(), metadata.ErrInvalidReplicaAssignment.Error()+": ")
				return fail(newAPIError(kerr.InvalidReplicaAssignment, "%s", msg))
			}
			return fail(toAPIError(err))
		}
		st.TopicID = t.ID
	}
	st.NumPartitions = partitions
	st.ReplicationFactor = rf
	for _, e := range config.DescribeTopic(cfg, overrides) {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name = e.Name
		if !e.Sensitive {
			c.Value = e.Value
		}
		c.ReadOnly = e.ReadOnly
		c.Source = int8(e.Source)
		c.IsSensitive = e.Sensitive
		st.Configs = append(st.Configs, c)
	}
	return st
}

// clusterMetadataTopic is KRaft's metadata log, which clients may not create.
const clusterMetadataTopic = "__cluster_metadata"

// collidingTopic returns an existing topic whose name differs from name
// only by '.' versus '_' (the two collide in metric names), or "".
func collidingTopic(im *metadata.Image, name string) string {
	if !strings.ContainsAny(name, "._") {
		return ""
	}
	norm := strings.ReplaceAll(name, ".", "_")
	for other := range im.Topics {
		if other != name && strings.ReplaceAll(other, ".", "_") == norm {
			return other
		}
	}
	return ""
}

// checkTopicLayout checks the partition count, replication factor and
// manual assignment of a topic to create, and returns the partition count
// and replication factor to use and, for a manual assignment, the replica
// list of each partition in partition order (nil otherwise).
func (b *Broker) checkTopicLayout(im *metadata.Image, rt *kmsg.CreateTopicsRequestTopic) (int32, int16, [][]int32, *apiError) {
	if len(rt.ReplicaAssignment) > 0 {
		if rt.ReplicationFactor != -1 {
			return 0, 0, nil, newAPIError(kerr.InvalidRequest,
				"A manual partition assignment was specified, but replication factor was not set to -1.")
		}
		if rt.NumPartitions != -1 {
			return 0, 0, nil, newAPIError(kerr.InvalidRequest,
				"A manual partition assignment was specified, but numPartitions was not set to -1.")
		}
		parts := map[int32][]int32{}
		rf := -1
		for _, a := range rt.ReplicaAssignment {
			if _, ok := parts[a.Partition]; ok {
				return 0, 0, nil, newAPIError(kerr.InvalidReplicaAssignment,
					"Found multiple manual partition assignments for partition %d", a.Partition)
			}
			parts[a.Partition] = a.Replicas
			if e := checkManualAssignment(im, a.Replicas, rf); e != nil {
				return 0, 0, nil, e
			}
			rf = len(a.Replicas)
			if !slices.ContainsFunc(a.Replicas, func(id int32) bool { return brokerActive(im, id) }) {
				return 0, 0, nil, newAPIError(kerr.InvalidReplicaAssignment,
					"All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.",
					a.Partition)
			}
		}
		assignment := make([][]int32, len(parts))
		for i := range assignment {
			replicas, ok := parts[int32(i)]
			if !ok {
				return 0, 0, nil, newAPIError(kerr.InvalidReplicaAssignment,
					"partitions should be a consecutive 0-based integer sequence")
			}
			assignment[i] = slices.Clone(replicas)
		}
		return int32(len(parts)), int16(rf), assignment, nil
	}
	if rt.ReplicationFactor < -1 || rt.ReplicationFactor == 0 {
		return 0, 0, nil, newAPIError(kerr.InvalidReplicationFactor,
			"Replication factor must be larger than 0, or -1 to use the default value.")
	}
	if rt.NumPartitions < -1 || rt.NumPartitions == 0 {
		return 0, 0, nil, newAPIError(kerr.InvalidPartitions,
			"Number of partitions was set to an invalid non-positive value.")
	}
	partitions, rf := rt.NumPartitions, rt.ReplicationFactor
	if partitions == -1 {
		partitions = int32(b.cfg.NumPartitions)
	}
	if rf == -1 {
		rf = int16(b.cfg.DefaultReplicationFactor)
	}
	if int(rf) > len(im.Brokers) {
		return 0, 0, nil, newAPIError(kerr.InvalidReplicationFactor,
			"Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered.",
			rf, rf, len(im.Brokers))
	}
	return partitions, rf, nil, nil
}

// brokerActive reports whether broker id is registered, unfenced and not
// in controlled shutdown (Kafka's ClusterControlManager.isActive).
func brokerActive(im *metadata.Image, id int32) bool {
	br := im.BrokerByID(id)
	return br != nil && !br.Fenced && !br.InControlledShutdown
}

// checkManualAssignment applies Kafka's rules to one partition's replica
// list; wantRF is the replica count of the partitions before it, or -1.
func checkManualAssignment(im *metadata.Image, replicas []int32, wantRF int) *apiError {
	if len(replicas) == 0 {
		return newAPIError(kerr.InvalidReplicaAssignment,
			"The manual partition assignment includes an empty replica list.")
	}
	sorted := slices.Clone(replicas)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return newAPIError(kerr.InvalidReplicaAssignment,
				"The manual partition assignment includes the broker %d more than once.", sorted[i])
		}
	}
	for _, id := range replicas {
		if !slices.ContainsFunc(im.Brokers, func(br metadata.Broker) bool { return br.NodeID == id }) {
			return newAPIError(kerr.InvalidReplicaAssignment,
				"The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
	}
	if wantRF >= 0 && len(replicas) != wantRF {
		return newAPIError(kerr.InvalidReplicaAssignment,
			"The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).",
			len(replicas), wantRF)
	}
	return nil
}

// topicConfigsFromRequest turns request configs into topic overrides and
// validates them: null values are INVALID_CONFIG naming them all ("Null
// value not supported for topic configs: a,b"), an unknown key or an
// invalid value INVALID_CONFIG naming the first problem, in request order.
func topicConfigsFromRequest(cfg *config.Broker, configs []kmsg.CreateTopicsRequestTopicConfig) (map[string]string, *apiError) {
	if len(configs) == 0 {
		return nil, nil
	}
	var nulls []string
	for _, c := range configs {
		if c.Value == nil {
			nulls = append(nulls, c.Name)
		}
	}
	if len(nulls) > 0 {
		return nil, newAPIError(kerr.InvalidConfig, "Null value not supported for topic configs: %s", strings.Join(nulls, ","))
	}
	overrides := make(map[string]string, len(configs))
	for _, c := range configs {
		if err := config.ValidateTopicConfig(c.Name, *c.Value); err != nil {
			return nil, newAPIError(kerr.InvalidConfig, "%s", err)
		}
		overrides[c.Name] = *c.Value
	}
	if _, err := config.ResolveTopic(cfg, overrides); err != nil {
		return nil, newAPIError(kerr.InvalidConfig, "%s", err)
	}
	return overrides, nil
}
