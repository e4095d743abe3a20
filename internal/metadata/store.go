package metadata

import "github.com/silkworm/silkworm/internal/security/acl"

// Store is what a broker needs from its metadata store. Local (one node)
// and Quorum (a Raft-replicated cluster) implement it.
type Store interface {
	// Image returns the latest applied image.
	Image() *Image
	// Subscribe calls fn at once with the current image and then with
	// every new image, in apply order, from the store's apply goroutine.
	// fn must not call the store's change methods.
	Subscribe(fn func(*Image))
	CreateTopic(name string, partitions int32, replicationFactor int16, configs map[string]string) (*Topic, error)
	// CreateTopicWithAssignment creates a topic whose partition i has
	// exactly the replicas assignment[i], in that order: the first is
	// the preferred leader, and the leader is the first that is live (as
	// Kafka's manual replica assignment in CreateTopics). It fails with
	// ErrInvalidReplicaAssignment when a list is empty, repeats or names
	// an unregistered broker, or has no live broker.
	CreateTopicWithAssignment(name string, assignment [][]int32, configs map[string]string) (*Topic, error)
	DeleteTopic(name string) error
	CreatePartitions(name string, count int32) error
	// CreatePartitionsWithAssignment grows a topic to count partitions;
	// the i-th new partition gets exactly the replicas assignment[i], in
	// that order (CreatePartitions with a manual Assignment). It fails
	// as CreateTopicWithAssignment does for a bad replica list, and with
	// ErrInvalidReplicaAssignment when the count of lists is not the
	// count of new partitions.
	CreatePartitionsWithAssignment(name string, count int32, assignment [][]int32) error
	SetTopicConfigs(name string, configs map[string]string) error
	// SetBrokerConfigs replaces the cluster-wide dynamic broker config
	// defaults, SetNodeConfigs one broker's own overrides (nodeconfigs.go).
	SetBrokerConfigs(configs map[string]string) error
	SetNodeConfigs(node int32, configs map[string]string) error
	// SetSelf (re)registers this broker.
	SetSelf(self Broker) error
	// AllocateProducerIDs reserves n producer ids and returns the first.
	AllocateProducerIDs(n int64) (int64, error)

	// The security state. Each call is atomic: all its changes are in
	// one image. Validation (mechanisms, iterations, duplicates, quota
	// keys, filters) is the caller's; the store only refuses what it
	// cannot persist (ErrInvalidRequest).

	// AlterScramCredentials applies changes in order and returns one
	// error per change: nil when applied, ErrResourceNotFound when it
	// deletes a credential that does not exist.
	AlterScramCredentials(changes []ScramChange) ([]error, error)
	// CreateACLs adds bindings; one already present is not duplicated.
	CreateACLs(bindings []acl.Binding) error
	// DeleteACLs removes exactly bindings; absent ones are ignored.
	DeleteACLs(bindings []acl.Binding) error
	// AlterClientQuotas applies changes in order; an entity left
	// without values is removed.
	AlterClientQuotas(changes []QuotaChange) error
}

var (
	_ Store = (*Local)(nil)
	_ Store = (*Quorum)(nil)
)
