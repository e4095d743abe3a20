package broker

// Wiring of the group coordinator (internal/group): the __consumer_offsets
// topic, created on first need through the metadata store like any topic,
// and the adapters from partitions to the coordinator's Log and Host.
//
// Deviation: the replication factor of __consumer_offsets is
// min(offsets.topic.replication.factor, live brokers), so a single node
// gets 1 where Kafka would refuse to create the topic until enough
// brokers are up.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/group"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
)

// offsetsTopic is Kafka's internal topic of committed offsets and group
// metadata.
const offsetsTopic = "__consumer_offsets"

// groupConfig maps the broker's group.* and offsets.* settings.
func (b *Broker) groupConfig() group.Config {
	c := group.DefaultConfig()
	c.NumPartitions = int32(b.cfg.OffsetsTopicNumPartitions)
	if t := b.meta.Image().Topics[offsetsTopic]; t != nil {
		c.NumPartitions = int32(len(t.Partitions)) // the topic as created wins
	}
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	c.InitialRebalanceDelay = ms(int64(b.cfg.GroupInitialRebalanceDelayMs))
	c.MinSessionTimeout = ms(int64(b.cfg.GroupMinSessionTimeoutMs))
	c.MaxSessionTimeout = ms(int64(b.cfg.GroupMaxSessionTimeoutMs))
	c.MaxSize = b.cfg.GroupMaxSize
	c.OffsetsRetention = time.Duration(b.cfg.OffsetsRetentionMinutes) * time.Minute
	c.RetentionCheckInterval = ms(b.cfg.OffsetsRetentionCheckIntervalMs)
	c.OffsetMetadataMaxBytes = b.cfg.OffsetMetadataMaxBytes
	c.MaxBatchBytes = b.cfg.MessageMaxBytes
	c.Consumer.Enabled = b.cfg.ConsumerProtocolEnabled()
	c.Consumer.Assignors = nil
	for _, a := range b.cfg.GroupConsumerAssignors {
		c.Consumer.Assignors = append(c.Consumer.Assignors, config.ConsumerAssignorName(a))
	}
	c.Consumer.SessionTimeout = ms(int64(b.cfg.GroupConsumerSessionTimeoutMs))
	c.Consumer.HeartbeatInterval = ms(int64(b.cfg.GroupConsumerHeartbeatIntervalMs))
	c.Consumer.MaxSize = b.cfg.GroupConsumerMaxSize
	c.Consumer.MigrationPolicy = strings.ToLower(b.cfg.GroupConsumerMigrationPolicy)
	return c
}

// startGroups creates the coordinator and loads every __consumer_offsets
// partition this node leads, before any request is served.
func (b *Broker) startGroups() error {
	gc, err := group.New(b.groupConfig(), groupHost{b: b, topics: new(atomic.Pointer[group.TopicImage])}, b.log.With("component", "group-coordinator"))
	if err != nil {
		return err
	}
	// applyImage (the metadata goroutine, already running in a cluster)
	// reads b.groups under b.mu.
	b.mu.Lock()
	b.groups = gc
	b.mu.Unlock()
	if ts := b.topic(offsetsTopic); ts != nil {
		for _, p := range ts.partitions {
			if !p.IsLeader() {
				continue
			}
			if err := gc.LoadPartition(p.Index, b.newOffsetsLog(p)); err != nil {
				gc.Close()
				return err
			}
		}
	}
	return nil
}

// stopGroups stops the coordinator; called before the logs close.
func (b *Broker) stopGroups() {
	if b.groups != nil {
		b.groups.Close()
	}
}

// ensureOffsetsTopic returns __consumer_offsets, creating it if needed.
func (b *Broker) ensureOffsetsTopic() (*topicState, error) {
	return b.ensureInternalTopic(offsetsTopic)
}

// groupHost gives the coordinator the broker's partitions and topics.
type groupHost struct {
	b      *Broker
	topics *atomic.Pointer[group.TopicImage] // Topics' cache
}

func (h groupHost) OffsetsLog(p int32) (group.Log, error) {
	ts, err := h.b.ensureOffsetsTopic()
	if err != nil {
		return nil, err
	}
	if p < 0 || int(p) >= len(ts.partitions) {
		return nil, fmt.Errorf("%s has no partition %d", offsetsTopic, p)
	}
	part := ts.partitions[p]
	if !part.IsLeader() {
		return nil, fmt.Errorf("%s-%d: %w", offsetsTopic, p, partition.ErrNotLeader)
	}
	return h.b.newOffsetsLog(part), nil
}

// PartitionExists reports whether the cluster has the partition, wherever
// its replicas live (in a cluster, not every broker holds every partition).
func (h groupHost) PartitionExists(topic string, p int32) bool {
	ts := h.b.topic(topic)
	return ts != nil && p >= 0 && int(p) < len(ts.partitions)
}

// Topics is the metadata image's topics for KIP-848 consumer groups
// (ids, partition counts, replica racks), rebuilt only when the image
// changed.
func (h groupHost) Topics() *group.TopicImage {
	im := h.b.meta.Image()
	if c := h.topics.Load(); c != nil && c.Version == im.Epoch {
		return c
	}
	topics := make([]*group.TopicMeta, 0, len(im.Topics))
	for _, t := range im.Topics {
		tm := &group.TopicMeta{Name: t.Name, ID: t.ID, Partitions: int32(len(t.Partitions))}
		hasRack := false
		racks := make([][]string, len(t.Partitions))
		for i, p := range t.Partitions {
			for _, r := range p.Replicas {
				if br := im.BrokerByID(r); br != nil && br.Rack != nil {
					racks[i] = append(racks[i], *br.Rack)
					hasRack = true
				}
			}
		}
		if hasRack {
			tm.Racks = racks
		}
		topics = append(topics, tm)
	}
	ti := group.NewTopicImage(im.Epoch, topics)
	h.topics.Store(ti)
	return ti
}

// offsetsLog is one __consumer_offsets partition as a group.Log.
type offsetsLog struct {
	p       *partition.Partition
	stop    <-chan struct{} // the broker's Close: stop waiting for replicas
	timeout time.Duration   // offsets.commit.timeout.ms
}

// newOffsetsLog is p as the group coordinator's log.
func (b *Broker) newOffsetsLog(p *partition.Partition) offsetsLog {
	ms, _ := b.cfg.Value("offsets.commit.timeout.ms")
	timeout, err := strconv.Atoi(ms)
	if err != nil || timeout <= 0 {
		timeout = 5000
	}
	return offsetsLog{p: p, stop: b.stopWatch, timeout: time.Duration(timeout) * time.Millisecond}
}

// Append appends batch and returns once the ISR has it (the high
// watermark passed it), as Kafka writes group records and offsets with
// acks=all and offsets.commit.timeout.ms: an acknowledged commit survives
// a coordinator failover.
func (l offsetsLog) Append(batch []byte) error {
	if err := appendCommittedWithin(l.p, batch, l.stop, l.timeout); err != nil {
		return fmt.Errorf("append to %s: %w", l.p, err)
	}
	return nil
}

// Replay reads the log from its LogStartOffset to its end, a megabyte of
// whole batches at a time.
func (l offsetsLog) Replay(fn func(batch []byte) error) error {
	log := l.p.Log
	end := log.EndPosition()
	off := log.LogStartOffset()
	for off < end.Offset {
		rr, err := log.Read(off, 1<<20, end, true)
		if err != nil {
			return fmt.Errorf("replay %s at offset %d: %w", l.p, off, err)
		}
		if rr.Size == 0 {
			return nil
		}
		buf := make([]byte, rr.Size)
		if _, err := rr.File.ReadAt(buf, rr.Pos); err != nil {
			return fmt.Errorf("replay %s at offset %d: %w", l.p, off, err)
		}
		for len(buf) > 0 {
			h, err := record.ParseHeader(buf)
			if err != nil || h.Size() > int64(len(buf)) {
				return fmt.Errorf("replay %s at offset %d: torn batch: %w", l.p, off, errors.Join(err, storage.ErrCorrupt))
			}
			if err := fn(buf[:h.Size()]); err != nil {
				return err
			}
			off = h.LastOffset() + 1
			buf = buf[h.Size():]
		}
	}
	return nil
}
