package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/silkworm/silkworm/internal/security/acl"
)

// Errors returned by store changes; handlers map them to Kafka codes.
var (
	ErrTopicExists       = errors.New("topic already exists")
	ErrUnknownTopic      = errors.New("unknown topic")
	ErrInvalidPartitions = errors.New("invalid partition count")
	ErrInvalidReplicas   = errors.New("invalid replication factor")
)

// FileName is the name of the single-node metadata document.
const FileName = "silkworm-metadata.json"

// Local is the single-node metadata store. Safe for concurrent use; every
// change is persisted before it is published.
type Local struct {
	path   string
	nodeID int32

	mu        sync.Mutex // serialises changes and guards image and listeners
	image     *Image
	listeners []func(*Image)
}

// OpenLocal loads the metadata document in dir, or starts an empty
// cluster with a new cluster id when there is none. self is this broker's
// registration.
func OpenLocal(dir string, self Broker, clusterID string) (*Local, error) {
	s := &Local{path: filepath.Join(dir, FileName), nodeID: self.NodeID}
	b, err := os.ReadFile(s.path)
	switch {
	case err == nil:
		var im Image
		if err := json.Unmarshal(b, &im); err != nil {
			return nil, fmt.Errorf("read cluster metadata %s: %w", s.path, err)
		}
		if im.Topics == nil {
			im.Topics = map[string]*Topic{}
		}
		s.image = &im
	case errors.Is(err, os.ErrNotExist):
		if clusterID == "" {
			clusterID = NewTopicID().String()
		}
		s.image = &Image{ClusterID: clusterID, Topics: map[string]*Topic{}}
	default:
		return nil, fmt.Errorf("read cluster metadata: %w", err)
	}
	im := s.image.clone()
	im.ControllerID = self.NodeID
	im.Brokers = []Broker{self}
	if err := s.publishLocked(im); err != nil {
		return nil, err
	}
	return s, nil
}

// Image returns the current metadata image.
func (s *Local) Image() *Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.image
}

// Subscribe registers fn to be called, under the store's lock and in
// change order, with every new image. It is called once at once with the
// current image.
func (s *Local) Subscribe(fn func(*Image)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
	fn(s.image)
}

func (s *Local) publishLocked(im *Image) error {
	im.Epoch++
	b, err := json.MarshalIndent(im, "", " ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.path, b, 0o666); err != nil {
		return fmt.Errorf("write cluster metadata %s: %w", s.path, err)
	}
	s.image = im
	for _, fn := range s.listeners {
		fn(im)
	}
	return nil
}

// CreateTopic adds a topic with partitions partitions, all led by this node.
func (s *Local) CreateTopic(name string, partitions int32, replicationFactor int16, configs map[string]string) (*Topic, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.image.Topics[name]; ok {
		return nil, fmt.Errorf("%w: topic '%s' already exists", ErrTopicExists, name)
	}
	if partitions <= 0 {
		return nil, fmt.Errorf("%w: number of partitions must be larger than 0", ErrInvalidPartitions)
	}
	if replicationFactor <= 0 || int(replicationFactor) > len(s.image.Brokers) {
		return nil, fmt.Errorf("%w: replication factor: %d larger than available brokers: %d",
			ErrInvalidReplicas, replicationFactor, len(s.image.Brokers))
	}
	t := &Topic{Name: name, ID: NewTopicID(), Configs: configs}
	for i := int32(0); i < partitions; i++ {
		t.Partitions = append(t.Partitions, s.newPartitionLocked(i))
	}
	im := s.image.clone()
	im.Topics[name] = t
	if err := s.publishLocked(im); err != nil {
		return nil, err
	}
	return t, nil
}

// CreateTopicWithAssignment creates a topic from a manual replica
// assignment, which on a single node may name only this node.
func (s *Local) CreateTopicWithAssignment(name string, assignment [][]int32, configs map[string]string) (*Topic, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.image.Topics[name]; ok {
		return nil, fmt.Errorf("%w: topic '%s' already exists", ErrTopicExists, name)
	}
	t, err := manualTopic(s.image, name, assignment, configs)
	if err != nil {
		return nil, err
	}
	for i := range t.Partitions {
		t.Partitions[i] = s.newPartitionLocked(int32(i))
	}
	im := s.image.clone()
	im.Topics[name] = t
	if err := s.publishLocked(im); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Local) newPartitionLocked(i int32) Partition {
	return Partition{Partition: i, Replicas: []int32{s.nodeID}, ISR: []int32{s.nodeID}, Leader: s.nodeID}
}

// DeleteTopic removes a topic.
func (s *Local) DeleteTopic(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.image.Topics[name]; !ok {
		return fmt.Errorf("%w: %s", ErrUnknownTopic, name)
	}
	im := s.image.clone()
	delete(im.Topics, name)
	return s.publishLocked(im)
}

// CreatePartitions grows a topic to count partitions.
func (s *Local) CreatePartitions(name string, count int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.image.Topics[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownTopic, name)
	}
	if count <= int32(len(t.Partitions)) {
		return fmt.Errorf("%w: topic currently has %d partitions, which is higher than the requested %d",
			ErrInvalidPartitions, len(t.Partitions), count)
	}
	nt := t.clone()
	for i := int32(len(t.Partitions)); i < count; i++ {
		nt.Partitions = append(nt.Partitions, s.newPartitionLocked(i))
	}
	im := s.image.clone()
	im.Topics[name] = nt
	return s.publishLocked(im)
}

// CreatePartitionsWithAssignment grows a topic to count partitions from a
// manual assignment, which on a single node may name only this node.
func (s *Local) CreatePartitionsWithAssignment(name string, count int32, assignment [][]int32) error {
	// Images are immutable: checking one and then growing the topic
	// under the lock (which checks the count again) is safe.
	im := s.Image()
	if t, ok := im.Topics[name]; ok && count > int32(len(t.Partitions)) {
		if add := count - int32(len(t.Partitions)); int32(len(assignment)) != add {
			return fmt.Errorf("%w: %d assignments for %d new partitions", ErrInvalidReplicaAssignment, len(assignment), add)
		}
		if _, err := manualTopic(im, name, assignment, nil); err != nil {
			return err
		}
	}
	return s.CreatePartitions(name, count)
}

// SetTopicConfigs replaces a topic's config overrides.
func (s *Local) SetTopicConfigs(name string, configs map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.image.Topics[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownTopic, name)
	}
	nt := t.clone()
	nt.Configs = configs
	im := s.image.clone()
	im.Topics[name] = nt
	return s.publishLocked(im)
}

// SetBrokerConfigs replaces the cluster-wide dynamic broker config
// defaults.
func (s *Local) SetBrokerConfigs(configs map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	im := s.image.clone()
	im.BrokerConfigs = configs
	return s.publishLocked(im)
}

// writeFileAtomic replaces path with b (mode perm for a new file): a
// temporary file, synced, renamed over path, and the directory synced.
func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// SetSelf updates this broker's registration (its port once known).
func (s *Local) SetSelf(self Broker) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	im := s.image.clone()
	im.Brokers = []Broker{self}
	return s.publishLocked(im)
}

// AllocateProducerIDs reserves n producer ids and returns the first. Ids
// are never handed out twice, across restarts included.
func (s *Local) AllocateProducerIDs(n int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	im := s.image.clone()
	first := im.NextProducerID
	im.NextProducerID += n
	if err := s.publishLocked(im); err != nil {
		return 0, err
	}
	return first, nil
}

// AlterScramCredentials applies changes in order, persists the result and
// returns one error per change: nil when applied, ErrResourceNotFound when
// it deletes a credential that does not exist.
func (s *Local) AlterScramCredentials(changes []ScramChange) ([]error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(changes) == 0 {
		return []error{}, nil
	}
	tx := newTxn(s.image)
	errs := tx.alterScram(changes)
	if err := s.publishLocked(tx.im); err != nil {
		return nil, err
	}
	return errs, nil
}

// CreateACLs adds bindings; one already present is not duplicated. A
// binding with an enum value that cannot be stored fails the call with
// ErrInvalidRequest.
func (s *Local) CreateACLs(bindings []acl.Binding) error {
	if err := checkBindings(bindings); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(bindings) == 0 {
		return nil
	}
	tx := newTxn(s.image)
	tx.createACLs(bindings)
	return s.publishLocked(tx.im)
}

// DeleteACLs removes exactly bindings; absent ones are ignored.
func (s *Local) DeleteACLs(bindings []acl.Binding) error {
	bindings = storableOnly(bindings)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(bindings) == 0 {
		return nil
	}
	tx := newTxn(s.image)
	tx.deleteACLs(bindings)
	return s.publishLocked(tx.im)
}

// AlterClientQuotas applies changes in order; an entity left without
// values is removed. A NaN or infinite value fails the call with
// ErrInvalidRequest.
func (s *Local) AlterClientQuotas(changes []QuotaChange) error {
	if err := checkQuotaChanges(changes); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(changes) == 0 {
		return nil
	}
	tx := newTxn(s.image)
	tx.alterClientQuotas(changes)
	return s.publishLocked(tx.im)
}
