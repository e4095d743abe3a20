package broker

// ElectLeaders: v0-2
//
// As KRaft's controller: ElectionType 0 (v0 always) moves leadership to
// the preferred replica (the first of the replica list) when it is live
// and in the ISR, else PREFERRED_LEADER_NOT_AVAILABLE; ElectionType 1
// (unclean) gives a partition without a leader the first live replica,
// in the ISR or not, else ELIGIBLE_LEADERS_NOT_AVAILABLE. A partition that
// already has the leader the election would choose gets
// ELECTION_NOT_NEEDED; an unknown topic or partition
// UNKNOWN_TOPIC_OR_PARTITION. A null topic list elects every partition and,
// as Kafka, leaves out of the response the partitions that needed no
// election (each topic is still listed). An unknown election type is
// INVALID_REQUEST for the whole request. Messages are Kafka's (see
// electionMessage).
//
// Any broker answers: the change goes to the active controller through
// the metadata quorum (NOT_CONTROLLER when none answers in time). On a
// single node every partition already has its only replica as leader, so
// every existing partition gets ELECTION_NOT_NEEDED.
//
// Deviation: TimeoutMillis is ignored; the response is sent once the
// controller committed the election, before the replicas applied it.

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.ElectLeaders, 0, 2, handleElectLeaders) }

// Kafka's ElectionType values.
const (
	electionPreferred = 0
	electionUnclean   = 1
)

// clusterOps is what the cluster operation APIs (ElectLeaders,
// AlterPartitionReassignments, automatic leader rebalancing) need from
// the metadata quorum; *metadata.Quorum implements it. The single-node
// Local store does not: localOps answers for it.
type clusterOps interface {
	ElectLeaders(preferred bool, partitions []metadata.TopicPartition) ([]metadata.ElectionResult, error)
	ReassignPartitions(rs []metadata.Reassignment) ([]metadata.ReassignmentResult, error)
	IsActiveController() bool
}

var _ clusterOps = (*metadata.Quorum)(nil)

// ops returns the metadata quorum's cluster operations, or the single-node
// stand-in.
func (b *Broker) ops() clusterOps {
	if b.cluster != nil {
		if o, ok := b.cluster.(clusterOps); ok {
			return o
		}
	}
	return localOps{b.meta}
}

// localOps answers the cluster operations on a single node, where every
// partition has this broker as its only replica and leader. It changes
// nothing.
type localOps struct{ meta metadata.Store }

func (l localOps) ElectLeaders(_ bool, tps []metadata.TopicPartition) ([]metadata.ElectionResult, error) {
	im := l.meta.Image()
	if tps == nil {
		for _, name := range im.SortedTopics() {
			for _, p := range im.Topics[name].Partitions {
				tps = append(tps, metadata.TopicPartition{Topic: name, Partition: p.Partition})
			}
		}
	}
	out := make([]metadata.ElectionResult, 0, len(tps))
	for _, tp := range tps {
		res := metadata.ElectionResult{TopicPartition: tp, Leader: -1}
		if p, err := imagePartition(im, tp.Topic, tp.Partition); err != nil {
			res.Err = err
		} else {
			res.Leader = p.Leader
			res.Err = fmt.Errorf("%w: %s-%d", metadata.ErrElectionNotNeeded, tp.Topic, tp.Partition)
		}
		out = append(out, res)
	}
	return out, nil
}

// ReassignPartitions accepts a reassignment to the current replica set (a
// no-op, as Kafka) and refuses cancellations, there being nothing in
// progress. Other brokers were refused by the handler already.
func (l localOps) ReassignPartitions(rs []metadata.Reassignment) ([]metadata.ReassignmentResult, error) {
	im := l.meta.Image()
	out := make([]metadata.ReassignmentResult, 0, len(rs))
	for _, ra := range rs {
		res := metadata.ReassignmentResult{TopicPartition: metadata.TopicPartition{Topic: ra.Topic, Partition: ra.Partition}}
		p, err := imagePartition(im, ra.Topic, ra.Partition)
		switch {
		case err != nil:
			res.Err = err
		case ra.Replicas == nil:
			res.Err = fmt.Errorf("%w: %s-%d", metadata.ErrNoReassignmentInProgress, ra.Topic, ra.Partition)
		case !sameReplicas(ra.Replicas, p.Replicas):
			res.Err = fmt.Errorf("%w: %s-%d: a single broker cannot host replicas %v",
				metadata.ErrInvalidReplicaAssignment, ra.Topic, ra.Partition, ra.Replicas)
		}
		out = append(out, res)
	}
	return out, nil
}

func (localOps) IsActiveController() bool { return true }

// sameReplicas reports whether a and b hold the same brokers in any order.
func sameReplicas(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for _, r := range a {
		found := false
		for _, s := range b {
			if r == s {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// imagePartition looks a partition up in an image.
func imagePartition(im *metadata.Image, topic string, partition int32) (metadata.Partition, error) {
	t := im.Topics[topic]
	if t == nil {
		return metadata.Partition{}, fmt.Errorf("%w: no such topic as %s", metadata.ErrUnknownTopic, topic)
	}
	if partition < 0 || int(partition) >= len(t.Partitions) {
		return metadata.Partition{}, fmt.Errorf("%w: no such partition as %s-%d", metadata.ErrUnknownPartition, topic, partition)
	}
	return t.Partitions[partition], nil
}

// clusterErrorCode maps an error of the cluster operations to its Kafka
// code (the mapping listed in metadata/errors.go), falling back to
// errorCode for the rest.
func clusterErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, metadata.ErrNotController):
		return kerr.NotController.Code
	case errors.Is(err, metadata.ErrUnknownPartition), errors.Is(err, metadata.ErrUnknownTopic):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, metadata.ErrElectionNotNeeded):
		return kerr.ElectionNotNeeded.Code
	case errors.Is(err, metadata.ErrPreferredLeaderNotAvailable):
		return kerr.PreferredLeaderNotAvailable.Code
	case errors.Is(err, metadata.ErrEligibleLeadersNotAvailable):
		return kerr.EligibleLeadersNotAvailable.Code
	case errors.Is(err, metadata.ErrNoReassignmentInProgress):
		return kerr.NoReassignmentInProgress.Code
	case errors.Is(err, metadata.ErrInvalidReplicaAssignment):
		return kerr.InvalidReplicaAssignment.Code
	case errors.Is(err, metadata.ErrInvalidRequest):
		return kerr.InvalidRequest.Code
	case errors.Is(err, metadata.ErrFencedLeaderEpoch):
		return kerr.FencedLeaderEpoch.Code
	case errors.Is(err, metadata.ErrUnknownLeaderEpoch):
		return kerr.UnknownLeaderEpoch.Code
	case errors.Is(err, metadata.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, metadata.ErrIneligibleReplica):
		return kerr.IneligibleReplica.Code
	case errors.Is(err, metadata.ErrInvalidUpdateVersion):
		return kerr.InvalidUpdateVersion.Code
	case errors.Is(err, metadata.ErrBrokerNotRegistered):
		return kerr.BrokerIDNotRegistered.Code
	}
	return errorCode(err)
}

// errMessage is the ErrorMessage of a response entry for err.
func errMessage(err error) *string {
	if err == nil {
		return nil
	}
	m := err.Error()
	return &m
}

// electionTypeError is an ElectionType Kafka does not know: INVALID_REQUEST
// for the whole request, with the message of ReplicationControlManager.
type electionTypeError struct{ etype int8 }

func (e *electionTypeError) Error() string { return fmt.Sprintf("Unknown election type %d", e.etype) }
func (e *electionTypeError) Unwrap() error { return metadata.ErrInvalidRequest }

// electionMessage is the ErrorMessage Kafka's ReplicationControlManager
// gives one partition's election: the default message of the code for
// ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE and
// ELIGIBLE_LEADERS_NOT_AVAILABLE, "No such topic as t" or "No such
// partition as t-9" for UNKNOWN_TOPIC_OR_PARTITION, and none on success.
func electionMessage(res metadata.ElectionResult, code int16) *string {
	var msg string
	switch code {
	case 0:
		return nil
	case kerr.ElectionNotNeeded.Code, kerr.PreferredLeaderNotAvailable.Code, kerr.EligibleLeadersNotAvailable.Code:
		msg = kafkaMessages[code]
	case kerr.UnknownTopicOrPartition.Code:
		if errors.Is(res.Err, metadata.ErrUnknownTopic) {
			msg = "No such topic as " + res.Topic
		} else {
			msg = fmt.Sprintf("No such partition as %s-%d", res.Topic, res.Partition)
		}
	default:
		return errMessage(res.Err)
	}
	return &msg
}

func handleElectLeaders(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	etype := int8(electionPreferred)
	if r.hdr.APIVersion >= 1 {
		etype = req.ElectionType
	}

	var tps []metadata.TopicPartition // nil: every partition
	if req.Topics != nil {
		tps = []metadata.TopicPartition{}
		for _, rt := range req.Topics {
			for _, p := range rt.Partitions {
				tps = append(tps, metadata.TopicPartition{Topic: rt.Topic, Partition: p})
			}
		}
	}

	var results []metadata.ElectionResult
	var err error
	if !b.authorizeCluster(r, kmsg.ACLOperationAlter) {
		err = errClusterAuthorization
	} else if etype != electionPreferred && etype != electionUnclean {
		err = &electionTypeError{etype}
	} else if tps == nil || len(tps) > 0 {
		// An empty list names no partition (null names all): nothing
		// to elect, and the controller must not read it as null.
		results, err = b.ops().ElectLeaders(etype == electionPreferred, tps)
		if err == nil && tps != nil && len(results) != len(tps) {
			err = fmt.Errorf("controller answered %d results for %d partitions", len(results), len(tps))
		}
	}
	if err != nil {
		// The whole request failed: every partition named gets the error.
		b.log.Warn("elect leaders", "err", err)
		resp.ErrorCode = clusterErrorCode(err)
		for _, rt := range req.Topics {
			st := kmsg.NewElectLeadersResponseTopic()
			st.Topic = rt.Topic
			for _, p := range rt.Partitions {
				sp := kmsg.NewElectLeadersResponseTopicPartition()
				sp.Partition = p
				sp.ErrorCode = resp.ErrorCode
				sp.ErrorMessage = errMessage(err)
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		if r.hdr.APIVersion < 1 {
			resp.ErrorCode = 0 // v0 has no top-level error code
		}
		r.respond(resp)
		return
	}

	partitionResult := func(res metadata.ElectionResult) kmsg.ElectLeadersResponseTopicPartition {
		sp := kmsg.NewElectLeadersResponseTopicPartition()
		sp.Partition = res.Partition
		sp.ErrorCode = clusterErrorCode(res.Err)
		sp.ErrorMessage = electionMessage(res, sp.ErrorCode)
		return sp
	}
	if req.Topics == nil {
		// Every topic is listed; partitions that needed no election are not.
		idx := map[string]int{}
		for _, res := range results {
			i, ok := idx[res.Topic]
			if !ok {
				i = len(resp.Topics)
				idx[res.Topic] = i
				st := kmsg.NewElectLeadersResponseTopic()
				st.Topic = res.Topic
				st.Partitions = []kmsg.ElectLeadersResponseTopicPartition{}
				resp.Topics = append(resp.Topics, st)
			}
			if errors.Is(res.Err, metadata.ErrElectionNotNeeded) {
				continue
			}
			resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, partitionResult(res))
		}
		r.respond(resp)
		return
	}
	// Results come in request order, one per partition named.
	next := 0
	for _, rt := range req.Topics {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = []kmsg.ElectLeadersResponseTopicPartition{}
		for range rt.Partitions {
			st.Partitions = append(st.Partitions, partitionResult(results[next]))
			next++
		}
		resp.Topics = append(resp.Topics, st)
	}
	r.respond(resp)
}
