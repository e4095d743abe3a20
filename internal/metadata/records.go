package metadata

import (
	"encoding/json"
	"fmt"

	"github.com/silkworm/silkworm/internal/security/acl"
)

// recordVersion is the version of the record encoding. A node refuses to
// apply a record of a newer version than it knows (it must be upgraded
// first); older versions stay readable.
const recordVersion = 1

// recordType says which change a record carries.
type recordType string

const (
	recSetController      recordType = "set_controller"
	recRegisterBroker     recordType = "register_broker"
	recFenceBroker        recordType = "fence_broker"
	recUnfenceBroker      recordType = "unfence_broker"
	recControlledShutdown recordType = "controlled_shutdown"
	recUnregisterBroker   recordType = "unregister_broker"
	recCreateTopic        recordType = "create_topic"
	recDeleteTopic        recordType = "delete_topic"
	recCreatePartitions   recordType = "create_partitions"
	recSetTopicConfigs    recordType = "set_topic_configs"
	recSetBrokerConfigs   recordType = "set_broker_configs"
	recAllocateProducers  recordType = "allocate_producer_ids"
	recAlterPartition     recordType = "alter_partition"
	recElectLeaders       recordType = "elect_leaders"
	recReassign           recordType = "reassign_partitions"
	recAlterScram         recordType = "alter_scram_credentials"
	recCreateACLs         recordType = "create_acls"
	recDeleteACLs         recordType = "delete_acls"
	recAlterClientQuotas  recordType = "alter_client_quotas"
	recSetFeatures        recordType = "set_features"
)

// record is one entry of the metadata log, JSON encoded. Every decision
// that needs randomness (topic ids, replica assignment) is made by the
// active controller before the record is appended, so that applying a
// record is deterministic on every node.
type record struct {
	Version int        `json:"v"`
	Type    recordType `json:"type"`

	NodeID      int32             `json:"node_id,omitempty"`
	ClusterID   string            `json:"cluster_id,omitempty"`
	Broker      *Broker           `json:"broker,omitempty"`
	Topic       *Topic            `json:"topic,omitempty"`
	Name        string            `json:"name,omitempty"`
	Assignments [][]int32         `json:"assignments,omitempty"`
	Configs     map[string]string `json:"configs,omitempty"`
	Count       int64             `json:"count,omitempty"`

	Alter    *alterPartitionRecord `json:"alter,omitempty"`
	Elect    *electLeadersRecord   `json:"elect,omitempty"`
	Reassign []Reassignment        `json:"reassign,omitempty"`

	// The security records (security.go); each carries one call's changes
	// so that the call is atomic.
	Scram  []ScramChange `json:"scram,omitempty"`
	ACLs   []acl.Binding `json:"acls,omitempty"`
	Quotas []QuotaChange `json:"quotas,omitempty"`

	// Features is a set_features record's finalized levels (features.go).
	Features map[string]int16 `json:"features,omitempty"`
}

type alterPartitionRecord struct {
	Topic          string  `json:"topic"`
	Partition      int32   `json:"partition"`
	LeaderID       int32   `json:"leader_id"`
	LeaderEpoch    int32   `json:"leader_epoch"`
	PartitionEpoch int32   `json:"partition_epoch"`
	NewISR         []int32 `json:"new_isr"`
}

type electLeadersRecord struct {
	Preferred  bool             `json:"preferred"`
	Partitions []TopicPartition `json:"partitions,omitempty"` // nil: all
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// Reassignment asks for a partition's replica set to become Replicas; a
// nil Replicas cancels a reassignment in progress.
type Reassignment struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas"`
}

func encodeRecord(r *record) ([]byte, error) {
	r.Version = recordVersion
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode %s record: %w", r.Type, err)
	}
	return b, nil
}

func decodeRecord(b []byte) (*record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode metadata record: %w", err)
	}
	if r.Version > recordVersion {
		return nil, fmt.Errorf("metadata record version %d is newer than supported %d", r.Version, recordVersion)
	}
	return &r, nil
}
