package metadata

import (
	"crypto/rand"
	"encoding/base64"
	"maps"
	"slices"

	"github.com/silkworm/silkworm/internal/quota"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/acl"
)

// TopicID is a topic's UUID.
type TopicID [16]byte

// String is Kafka's textual form of a UUID: URL-safe base64 without padding.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// MarshalText implements encoding.TextMarshaler.
func (id TopicID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (id *TopicID) UnmarshalText(b []byte) error {
	var out [16]byte
	n, err := base64.RawURLEncoding.Decode(out[:], b)
	if err != nil || n != 16 {
		return err
	}
	*id = out
	return nil
}

// NewTopicID returns a random topic id that is not the zero id and does not
// start with '-' in its textual form, as Kafka's Uuid.randomUuid.
func NewTopicID() TopicID {
	for {
		var id TopicID
		_, _ = rand.Read(id[:])
		s := id.String()
		if id != (TopicID{}) && s[0] != '-' {
			return id
		}
	}
}

// Partition is the assignment and leadership of one partition.
type Partition struct {
	Partition      int32   `json:"partition"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leader_epoch"`
	PartitionEpoch int32   `json:"partition_epoch"`
	// AddingReplicas and RemovingReplicas describe a reassignment in
	// progress (Quorum only); Replicas holds the union of old and new.
	AddingReplicas   []int32 `json:"adding_replicas,omitempty"`
	RemovingReplicas []int32 `json:"removing_replicas,omitempty"`
}

// Topic is one topic's metadata.
type Topic struct {
	Name       string            `json:"name"`
	ID         TopicID           `json:"id"`
	Partitions []Partition       `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

// Broker is a registered broker and where clients reach it.
type Broker struct {
	NodeID int32   `json:"node_id"`
	Host   string  `json:"host"`
	Port   int32   `json:"port"`
	Rack   *string `json:"rack,omitempty"`

	// The fields below are kept by Quorum; Local leaves them zero.

	// Listeners are every endpoint the broker advertises; Host and Port
	// above are the first (the client listener).
	Listeners []Endpoint `json:"listeners,omitempty"`
	// Epoch is the broker epoch: the metadata offset of its latest
	// registration.
	Epoch int64 `json:"epoch,omitempty"`
	// Incarnation identifies one run of the broker process.
	Incarnation string `json:"incarnation,omitempty"`
	// Fenced is true until the broker's first heartbeat after
	// registration, and again after BrokerSessionTimeout without one.
	Fenced bool `json:"fenced,omitempty"`
	// InControlledShutdown is set by ControlledShutdown: the broker leads
	// nothing and is not elected again until it registers anew.
	InControlledShutdown bool `json:"in_controlled_shutdown,omitempty"`
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Name             string `json:"name"`
	Host             string `json:"host"`
	Port             int32  `json:"port"`
	SecurityProtocol string `json:"security_protocol,omitempty"`
}

// Image is a consistent view of the cluster metadata. An Image is never
// modified after it is published; readers may use it without locks.
type Image struct {
	ClusterID    string            `json:"cluster_id"`
	Epoch        int64             `json:"epoch"` // bumped by every change
	ControllerID int32             `json:"controller_id"`
	Brokers      []Broker          `json:"brokers"`
	Topics       map[string]*Topic `json:"topics"`
	// BrokerConfigs are the cluster-wide dynamic broker config defaults,
	// NodeConfigs each broker's own overrides by node id (nodeconfigs.go;
	// shared between images, replaced on change).
	BrokerConfigs  map[string]string            `json:"broker_configs,omitempty"`
	NodeConfigs    map[string]map[string]string `json:"node_configs,omitempty"`
	NextProducerID int64                        `json:"next_producer_id"`

	// GroupConfigs are the GROUP config overrides by group id
	// (groupconfigs.go); shared between images, replaced on change.
	GroupConfigs map[string]map[string]string `json:"group_configs,omitempty"`

	// The security state, as KRaft keeps it in the metadata log so that
	// every broker enforces the same set (see security.go). Readers must
	// not modify it: it is shared between images. A change that does not
	// touch a field leaves it identical (same map, same backing array) in
	// the next image, and one that does replaces it with a new one, so a
	// subscriber can tell "unchanged" by identity.

	// Scram maps a user to its SCRAM credentials, one per mechanism,
	// sorted by mechanism.
	Scram map[string][]security.ScramCredential `json:"scram,omitempty"`
	// ACLs are the ACL bindings, without duplicates, sorted by resource
	// type, pattern type, resource name, principal, host, operation and
	// permission.
	ACLs []acl.Binding `json:"acls,omitempty"`
	// ClientQuotas are the client quotas, one entry per entity, sorted by
	// entity; an entity without values has no entry.
	ClientQuotas []quota.Entry `json:"client_quotas,omitempty"`

	// Features are the finalized feature levels (metadata.version and the
	// others, KIP-584), replaced whole by SetFeatures; nil until the first
	// UpdateFeatures, when a broker uses its binary's defaults. Shared
	// between images like the security state: never modified in place.
	Features map[string]int16 `json:"features,omitempty"`
}

// BrokerByID finds a registered broker, or returns nil.
func (im *Image) BrokerByID(id int32) *Broker {
	for i := range im.Brokers {
		if im.Brokers[i].NodeID == id {
			return &im.Brokers[i]
		}
	}
	return nil
}

// TopicByID finds a topic by id.
func (im *Image) TopicByID(id TopicID) *Topic {
	for _, t := range im.Topics {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// SortedTopics returns the topic names in order.
func (im *Image) SortedTopics() []string {
	return slices.Sorted(maps.Keys(im.Topics))
}

// clone makes a copy deep enough to change topics and configs. Scram, ACLs
// and ClientQuotas are shared with im: a change replaces them with new
// ones and never writes into them (see txn.alterScram and the others).
func (im *Image) clone() *Image {
	c := *im
	c.Brokers = slices.Clone(im.Brokers)
	c.Topics = make(map[string]*Topic, len(im.Topics))
	for k, v := range im.Topics {
		c.Topics[k] = v
	}
	c.BrokerConfigs = maps.Clone(im.BrokerConfigs)
	return &c
}

func (t *Topic) clone() *Topic {
	c := *t
	c.Partitions = slices.Clone(t.Partitions)
	c.Configs = maps.Clone(t.Configs)
	return &c
}
