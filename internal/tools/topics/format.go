package topics

import (
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TopicDescription is what --describe prints for one topic.
type TopicDescription struct {
	Name              string
	ID                [16]byte // all zero when the broker has no topic IDs
	ReplicationFactor int
	Configs           []ConfigEntry // in the order the broker returned them
	Partitions        []PartitionDescription
}

// ConfigEntry is one topic config as DescribeConfigs returns it.
type ConfigEntry struct {
	Name      string
	Value     *string // nil when the broker sent null
	IsDefault bool    // source is DEFAULT_CONFIG
}

// PartitionDescription is one partition line of --describe.
type PartitionDescription struct {
	Partition int32
	Leader    int32 // -1 when there is none
	Replicas  []int32
	ISR       []int32
}

// uuidString formats a topic ID like Kafka's Uuid.toString: URL-safe base64
// without padding.
func uuidString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func javaString(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// writeTopicLine prints the topic summary line.
func writeTopicLine(w io.Writer, td *TopicDescription) {
	var cfgs []string
	for _, c := range td.Configs {
		if !c.IsDefault {
			cfgs = append(cfgs, c.Name+"="+javaString(c.Value))
		}
	}
	fmt.Fprintf(w, "Topic: %s", td.Name)
	if td.ID != [16]byte{} {
		fmt.Fprintf(w, "\tTopicId: %s", uuidString(td.ID))
	}
	fmt.Fprintf(w, "\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: %s\n",
		len(td.Partitions), td.ReplicationFactor, strings.Join(cfgs, ","))
}

// writePartitionLine prints one partition line.
func writePartitionLine(w io.Writer, topic string, p *PartitionDescription) {
	leader := "none"
	if p.Leader >= 0 {
		leader = strconv.Itoa(int(p.Leader))
	}
	fmt.Fprintf(w, "\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s\tElr: N/A\tLastKnownElr: N/A\n",
		topic, p.Partition, leader, joinIDs(p.Replicas), joinIDs(p.ISR))
}

// DescribeFilter selects what --describe prints, from its report options.
type DescribeFilter struct {
	UnderReplicated    bool // --under-replicated-partitions
	Unavailable        bool // --unavailable-partitions
	UnderMinISR        bool // --under-min-isr-partitions
	AtMinISR           bool // --at-min-isr-partitions
	TopicsWithOverride bool // --topics-with-overrides
	LiveBrokers        map[int32]bool
}

func (f *DescribeFilter) reportsPartitions() bool {
	return f.UnderReplicated || f.Unavailable || f.UnderMinISR || f.AtMinISR
}

func minISR(td *TopicDescription) int {
	for _, c := range td.Configs {
		if c.Name == "min.insync.replicas" && c.Value != nil {
			if n, err := strconv.Atoi(*c.Value); err == nil {
				return n
			}
		}
	}
	return 1
}

// WriteDescription prints td as Kafka's --describe does under filter f.
func WriteDescription(w io.Writer, td *TopicDescription, f DescribeFilter) {
	if !f.reportsPartitions() {
		hasOverride := false
		for _, c := range td.Configs {
			hasOverride = hasOverride || !c.IsDefault
		}
		if !f.TopicsWithOverride || hasOverride {
			writeTopicLine(w, td)
		}
	}
	if f.TopicsWithOverride {
		return
	}
	min := minISR(td)
	for i := range td.Partitions {
		p := &td.Partitions[i]
		hasLeader := p.Leader >= 0
		show := !f.reportsPartitions() ||
			(f.UnderReplicated && len(p.Replicas)-len(p.ISR) > 0) ||
			(f.Unavailable && (!hasLeader || !f.LiveBrokers[p.Leader])) ||
			(f.UnderMinISR && (!hasLeader || len(p.ISR) < min)) ||
			(f.AtMinISR && len(p.ISR) == min)
		if show {
			writePartitionLine(w, td.Name, p)
		}
	}
}
