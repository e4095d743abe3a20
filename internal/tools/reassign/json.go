package reassign

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// AnyLogDir is the log_dirs entry that leaves a replica's directory to the
// broker.
const AnyLogDir = "any"

// Partition names a topic partition; String is Kafka's TopicPartition
// form, topic-partition.
type Partition struct {
	Topic     string
	Partition int32
}

func (p Partition) String() string { return p.Topic + "-" + strconv.Itoa(int(p.Partition)) }

// comparePartitions orders by topic, then partition (Kafka's
// compareTopicPartitions).
func comparePartitions(a, b Partition) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// Replica is one replica of a partition on a broker (Kafka's
// TopicPartitionReplica).
type Replica struct {
	Partition
	Broker int32
}

// String is Kafka's TopicPartitionReplica.toString: topic-partition-broker.
func (r Replica) String() string { return r.Partition.String() + "-" + strconv.Itoa(int(r.Broker)) }

// compareReplicas orders by broker, then topic and partition.
func compareReplicas(a, b Replica) int {
	return cmp.Or(cmp.Compare(a.Broker, b.Broker), comparePartitions(a.Partition, b.Partition))
}

// Target is one entry of a reassignment JSON file: a partition and its
// wanted replicas, in order (the first is the preferred leader).
type Target struct {
	Partition
	Replicas []int32
}

// Plan is a parsed reassignment JSON file: the partition targets in file
// order and the replicas with an explicit log directory.
type Plan struct {
	Targets []Target
	LogDirs map[Replica]string
}

// Assignment maps partitions to replica lists.
type Assignment map[Partition][]int32

// sortedPartitions returns a's partitions in Kafka's order.
func (a Assignment) sortedPartitions() []Partition {
	ps := make([]Partition, 0, len(a))
	for p := range a {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, comparePartitions)
	return ps
}

// FormatReassignmentJSON is Kafka's formatAsReassignmentJson: version 1,
// partitions sorted by topic and partition, each with topic, partition,
// replicas and log_dirs ("any" unless logDirs names one), compact as
// Jackson writes it.
func FormatReassignmentJSON(a Assignment, logDirs map[Replica]string) string {
	var b strings.Builder
	b.WriteString(`{"version":1,"partitions":[`)
	for i, p := range a.sortedPartitions() {
		if i > 0 {
			b.WriteByte(',')
		}
		topic, _ := json.Marshal(p.Topic)
		fmt.Fprintf(&b, `{"topic":%s,"partition":%d,"replicas":[`, topic, p.Partition)
		replicas := a[p]
		for j, r := range replicas {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(r)))
		}
		b.WriteString(`],"log_dirs":[`)
		for j, r := range replicas {
			if j > 0 {
				b.WriteByte(',')
			}
			dir := AnyLogDir
			if d, ok := logDirs[Replica{p, r}]; ok {
				dir = d
			}
			s, _ := json.Marshal(dir)
			b.Write(s)
		}
		b.WriteString("]}")
	}
	b.WriteString("]}")
	return b.String()
}

// decodeJSON decodes data into v, keeping numbers exact.
func decodeJSON(data string, v any) error {
	d := json.NewDecoder(bytes.NewReader([]byte(data)))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// jsonVersion reads the optional "version" field; absent means 1.
func jsonVersion(obj map[string]json.RawMessage) (int, error) {
	raw, ok := obj["version"]
	if !ok {
		return 1, nil
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("the version field is not an integer: %s", raw)
	}
	return v, nil
}

// ParseTopicsJSON reads a --topics-to-move-json-file document
// ({"topics":[{"topic":"foo"}],"version":1}) and returns the topic names in
// file order.
func ParseTopicsJSON(data string) ([]string, error) {
	var obj map[string]json.RawMessage
	if err := decodeJSON(data, &obj); err != nil || obj == nil {
		return nil, errors.New("The input string is not a valid JSON")
	}
	v, err := jsonVersion(obj)
	if err != nil {
		return nil, err
	}
	if v != 1 {
		return nil, fmt.Errorf("Not supported version field value %d", v)
	}
	raw, ok := obj["topics"]
	if !ok {
		return nil, nil
	}
	var entries []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("the topics field is not an array of objects: %w", err)
	}
	var topics []string
	for _, e := range entries {
		var name string
		if err := json.Unmarshal(e["topic"], &name); err != nil {
			return nil, fmt.Errorf("a topics entry has no string field topic: %w", err)
		}
		topics = append(topics, name)
	}
	return topics, nil
}

// ParseReassignmentJSON reads a reassignment JSON document (version 1:
// partitions with topic, partition, replicas and optional log_dirs) as
// Kafka's parsePartitionReassignmentData does: without removing duplicates,
// so that the callers can refuse them.
func ParseReassignmentJSON(data string) (*Plan, error) {
	var obj map[string]json.RawMessage
	if err := decodeJSON(data, &obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, fmt.Errorf("The input string is not a valid JSON: %w", err)
	}
	v, err := jsonVersion(obj)
	if err != nil {
		return nil, err
	}
	if v != 1 {
		return nil, fmt.Errorf("Not supported version field value %d", v)
	}
	plan := &Plan{LogDirs: map[Replica]string{}}
	raw, ok := obj["partitions"]
	if !ok {
		return plan, nil
	}
	var entries []struct {
		Topic     *string   `json:"topic"`
		Partition *int32    `json:"partition"`
		Replicas  *[]int32  `json:"replicas"`
		LogDirs   *[]string `json:"log_dirs"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("the partitions field is not valid: %w", err)
	}
	for _, e := range entries {
		switch {
		case e.Topic == nil:
			return nil, errors.New("No such field exists: `topic`")
		case e.Partition == nil:
			return nil, errors.New("No such field exists: `partition`")
		case e.Replicas == nil:
			return nil, errors.New("No such field exists: `replicas`")
		}
		p := Partition{*e.Topic, *e.Partition}
		replicas := append([]int32{}, *e.Replicas...)
		if e.LogDirs != nil {
			if len(*e.LogDirs) != len(replicas) {
				return nil, fmt.Errorf("Size of replicas list %s is different from size of log dirs list %s for partition %s",
					javaList(replicas), javaStrings(*e.LogDirs), p)
			}
			for i, d := range *e.LogDirs {
				if d != AnyLogDir {
					plan.LogDirs[Replica{p, replicas[i]}] = d
				}
			}
		}
		plan.Targets = append(plan.Targets, Target{p, replicas})
	}
	return plan, nil
}

// javaList formats ids as Java's List.toString: [1, 2, 3].
func javaList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func javaStrings(ss []string) string { return "[" + strings.Join(ss, ", ") + "]" }

// joinIDs formats ids comma-separated without spaces.
func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// checkExecutePlan applies the checks of Kafka's parseExecuteAssignmentArgs
// and returns the plan as an assignment.
func checkExecutePlan(plan *Plan) (Assignment, error) {
	if len(plan.Targets) == 0 {
		return nil, errors.New("Partition reassignment list cannot be empty")
	}
	for _, t := range plan.Targets {
		if len(t.Replicas) == 0 {
			return nil, errors.New("Partition replica list cannot be empty")
		}
	}
	seen := map[Partition]int{}
	var dupParts []string
	for _, t := range plan.Targets {
		seen[t.Partition]++
		if seen[t.Partition] == 2 {
			dupParts = append(dupParts, t.Partition.String())
		}
	}
	if len(dupParts) > 0 {
		return nil, fmt.Errorf("Partition reassignment contains duplicate topic partitions: %s", strings.Join(dupParts, ","))
	}
	var dupMsgs []string
	for _, t := range plan.Targets {
		if d := duplicates(t.Replicas); len(d) > 0 {
			dupMsgs = append(dupMsgs, fmt.Sprintf("%s contains multiple entries for %s", t.Partition, joinIDs(d)))
		}
	}
	if len(dupMsgs) > 0 {
		return nil, fmt.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dupMsgs, ". "))
	}
	a := Assignment{}
	for _, t := range plan.Targets {
		a[t.Partition] = t.Replicas
	}
	return a, nil
}

// duplicates returns the ids that occur more than once, sorted.
func duplicates(ids []int32) []int32 {
	count := map[int32]int{}
	var out []int32
	for _, id := range ids {
		count[id]++
		if count[id] == 2 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
