package metadata

import (
	"encoding/json"
	"errors"
)

// Errors returned by Quorum; handlers map them to the Kafka error code in
// the comment. ErrTopicExists, ErrUnknownTopic, ErrInvalidPartitions and
// ErrInvalidReplicas (local.go) are returned by Quorum too.
var (
	// ErrNotController: no controller could be reached within
	// QuorumConfig.RequestTimeout (NOT_CONTROLLER).
	ErrNotController = errors.New("no active controller")
	// ErrUnknownPartition: the topic has no such partition
	// (UNKNOWN_TOPIC_OR_PARTITION).
	ErrUnknownPartition = errors.New("unknown partition")
	// ErrFencedLeaderEpoch: a request carried an older leader epoch than
	// the controller's (FENCED_LEADER_EPOCH).
	ErrFencedLeaderEpoch = errors.New("fenced leader epoch")
	// ErrUnknownLeaderEpoch: a request carried a newer leader epoch than
	// the controller knows (UNKNOWN_LEADER_EPOCH; retriable).
	ErrUnknownLeaderEpoch = errors.New("unknown leader epoch")
	// ErrInvalidUpdateVersion: AlterPartition with a partition epoch other
	// than the current one (INVALID_UPDATE_VERSION).
	ErrInvalidUpdateVersion = errors.New("invalid partition epoch")
	// ErrNotLeader: AlterPartition from a broker that does not lead the
	// partition (NOT_LEADER_OR_FOLLOWER).
	ErrNotLeader = errors.New("not the partition leader")
	// ErrIneligibleReplica: a proposed ISR member is not a replica, or is
	// fenced or shutting down (INELIGIBLE_REPLICA).
	ErrIneligibleReplica = errors.New("ineligible replica")
	// ErrInvalidRequest: a malformed change such as an empty ISR or one
	// without the leader (INVALID_REQUEST).
	ErrInvalidRequest = errors.New("invalid request")
	// ErrBrokerNotRegistered: a heartbeat or shutdown for a broker that
	// never registered (BROKER_ID_NOT_REGISTERED).
	ErrBrokerNotRegistered = errors.New("broker not registered")
	// ErrElectionNotNeeded: the partition already has the leader an
	// election would choose (ELECTION_NOT_NEEDED).
	ErrElectionNotNeeded = errors.New("election not needed")
	// ErrPreferredLeaderNotAvailable: the preferred replica is not live or
	// not in the ISR (PREFERRED_LEADER_NOT_AVAILABLE).
	ErrPreferredLeaderNotAvailable = errors.New("preferred leader not available")
	// ErrEligibleLeadersNotAvailable: no live replica can lead
	// (ELIGIBLE_LEADERS_NOT_AVAILABLE).
	ErrEligibleLeadersNotAvailable = errors.New("eligible leaders not available")
	// ErrNoReassignmentInProgress: a cancellation for a partition that is
	// not being reassigned (NO_REASSIGNMENT_IN_PROGRESS).
	ErrNoReassignmentInProgress = errors.New("no reassignment in progress")
	// ErrInvalidReplicaAssignment: a reassignment names unknown brokers or
	// repeats one (INVALID_REPLICA_ASSIGNMENT).
	ErrInvalidReplicaAssignment = errors.New("invalid replica assignment")
	// ErrResourceNotFound: a change names something that does not exist,
	// such as the deletion of a SCRAM credential the user does not have
	// (RESOURCE_NOT_FOUND).
	ErrResourceNotFound = errors.New("resource not found")
)

// wireErrors names the sentinel errors that cross the forwarding RPC, so
// that errors.Is works on the requesting node too.
var wireErrors = map[string]error{
	"topic_exists":         ErrTopicExists,
	"unknown_topic":        ErrUnknownTopic,
	"invalid_partitions":   ErrInvalidPartitions,
	"invalid_replicas":     ErrInvalidReplicas,
	"not_controller":       ErrNotController,
	"unknown_partition":    ErrUnknownPartition,
	"fenced_leader_epoch":  ErrFencedLeaderEpoch,
	"unknown_leader_epoch": ErrUnknownLeaderEpoch,
	"invalid_update":       ErrInvalidUpdateVersion,
	"not_leader":           ErrNotLeader,
	"ineligible_replica":   ErrIneligibleReplica,
	"invalid_request":      ErrInvalidRequest,
	"broker_not_reg":       ErrBrokerNotRegistered,
	"election_not_needed":  ErrElectionNotNeeded,
	"preferred_not_avail":  ErrPreferredLeaderNotAvailable,
	"eligible_not_avail":   ErrEligibleLeadersNotAvailable,
	"no_reassignment":      ErrNoReassignmentInProgress,
	"invalid_assignment":   ErrInvalidReplicaAssignment,
	"resource_not_found":   ErrResourceNotFound,
}

// remoteError is an error decoded from the forwarding RPC: the leader's
// message, unwrapping to the matching sentinel.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

// encodeError returns err's wire code and message.
func encodeError(err error) (code, msg string) {
	if err == nil {
		return "", ""
	}
	for c, s := range wireErrors {
		if errors.Is(err, s) {
			return c, err.Error()
		}
	}
	return "other", err.Error()
}

func decodeError(code, msg string) error {
	if code == "" {
		return nil
	}
	return &remoteError{msg: msg, sentinel: wireErrors[code]}
}

// resultJSON is how per-partition results cross the forwarding RPC.
type resultJSON struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Leader    int32  `json:"leader,omitempty"`
	Code      string `json:"code,omitempty"`
	Msg       string `json:"msg,omitempty"`
}

// MarshalJSON keeps Err's sentinel across the forwarding RPC.
func (r ElectionResult) MarshalJSON() ([]byte, error) {
	w := resultJSON{Topic: r.Topic, Partition: r.Partition, Leader: r.Leader}
	w.Code, w.Msg = encodeError(r.Err)
	return json.Marshal(w)
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *ElectionResult) UnmarshalJSON(b []byte) error {
	var w resultJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ElectionResult{TopicPartition: TopicPartition{Topic: w.Topic, Partition: w.Partition}, Leader: w.Leader, Err: decodeError(w.Code, w.Msg)}
	return nil
}

// MarshalJSON keeps Err's sentinel across the forwarding RPC.
func (r ReassignmentResult) MarshalJSON() ([]byte, error) {
	w := resultJSON{Topic: r.Topic, Partition: r.Partition}
	w.Code, w.Msg = encodeError(r.Err)
	return json.Marshal(w)
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *ReassignmentResult) UnmarshalJSON(b []byte) error {
	var w resultJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ReassignmentResult{TopicPartition: TopicPartition{Topic: w.Topic, Partition: w.Partition}, Err: decodeError(w.Code, w.Msg)}
	return nil
}

// changeErrors is one error per change of a batch (nil: applied), as
// AlterScramCredentials returns it. Its JSON form keeps each error's
// sentinel across the forwarding RPC.
type changeErrors []error

// errorJSON is how one error crosses the forwarding RPC.
type errorJSON struct {
	Code string `json:"code,omitempty"`
	Msg  string `json:"msg,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (e changeErrors) MarshalJSON() ([]byte, error) {
	out := make([]errorJSON, len(e))
	for i, err := range e {
		out[i].Code, out[i].Msg = encodeError(err)
	}
	return json.Marshal(out)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *changeErrors) UnmarshalJSON(b []byte) error {
	var in []errorJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	out := make(changeErrors, len(in))
	for i, w := range in {
		out[i] = decodeError(w.Code, w.Msg)
	}
	*e = out
	return nil
}
