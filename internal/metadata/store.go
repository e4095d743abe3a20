package metadata

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
	DeleteTopic(name string) error
	CreatePartitions(name string, count int32) error
	SetTopicConfigs(name string, configs map[string]string) error
	SetBrokerConfigs(configs map[string]string) error
	// SetSelf (re)registers this broker.
	SetSelf(self Broker) error
	// AllocateProducerIDs reserves n producer ids and returns the first.
	AllocateProducerIDs(n int64) (int64, error)
}

var (
	_ Store = (*Local)(nil)
	_ Store = (*Quorum)(nil)
)
