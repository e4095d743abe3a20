package group

// Server-side assignors of KIP-848 consumer groups (group.consumer.assignors):
// "uniform" (Kafka's UniformAssignor: balanced and sticky, rack-aware) and
// "range" (Kafka's RangeAssignor: each topic's partitions cut in contiguous
// ranges over the members subscribed to it, in member id order). Both are
// pure functions of the members' subscriptions, their previous target
// assignment and the topics' metadata; the coordinator calls them with the
// group's mu held whenever the group epoch moves past the assignment epoch.

import (
	"bytes"
	"maps"
	"slices"
	"strings"
)

// topicID is a topic's UUID as the KIP-848 protocol carries it.
type topicID = [16]byte

// assignment is a set of partitions by topic id; each list is sorted and
// holds no duplicates. A nil or empty assignment owns nothing.
type assignment map[topicID][]int32

// clone returns a deep copy.
func (a assignment) clone() assignment {
	out := make(assignment, len(a))
	for t, ps := range a {
		out[t] = slices.Clone(ps)
	}
	return out
}

// equal reports whether a and b hold the same partitions.
func (a assignment) equal(b assignment) bool {
	if a.count() != b.count() {
		return false
	}
	for t, ps := range a {
		if len(ps) > 0 && !slices.Equal(ps, b[t]) {
			return false
		}
	}
	return true
}

func (a assignment) count() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

func (a assignment) has(t topicID, p int32) bool {
	_, ok := slices.BinarySearch(a[t], p)
	return ok
}

func (a assignment) add(t topicID, p int32) {
	ps := a[t]
	i, ok := slices.BinarySearch(ps, p)
	if !ok {
		a[t] = slices.Insert(ps, i, p)
	}
}

func (a assignment) remove(t topicID, p int32) {
	ps := a[t]
	if i, ok := slices.BinarySearch(ps, p); ok {
		ps = slices.Delete(ps, i, i+1)
		if len(ps) == 0 {
			delete(a, t)
		} else {
			a[t] = ps
		}
	}
}

// sortedTopics returns the topic ids of a in byte order.
func (a assignment) sortedTopics() []topicID {
	ts := slices.Collect(maps.Keys(a))
	slices.SortFunc(ts, func(x, y topicID) int { return bytes.Compare(x[:], y[:]) })
	return ts
}

// TopicMeta is one topic as consumer groups see it.
type TopicMeta struct {
	Name       string
	ID         [16]byte
	Partitions int32
	// Racks lists, per partition, the racks of its replicas (nil when no
	// broker has a rack): the rack-aware uniform assignor prefers a member
	// in one of them.
	Racks [][]string
}

// TopicImage is the cluster's topics at one metadata version. The Host
// builds a new one whenever topics change; Version differs between two
// images that differ. Readers must not modify it.
type TopicImage struct {
	Version int64
	ByName  map[string]*TopicMeta
	ByID    map[[16]byte]*TopicMeta
}

// NewTopicImage indexes topics by name and id.
func NewTopicImage(version int64, topics []*TopicMeta) *TopicImage {
	im := &TopicImage{Version: version, ByName: make(map[string]*TopicMeta, len(topics)), ByID: make(map[[16]byte]*TopicMeta, len(topics))}
	for _, t := range topics {
		im.ByName[t.Name] = t
		im.ByID[t.ID] = t
	}
	return im
}

// assignMember is one member as an assignor sees it.
type assignMember struct {
	id     string
	rack   string          // "" when the member has none
	topics map[string]bool // subscribed topics that exist
	prev   assignment      // its previous target assignment (stickiness)
}

// assignor computes a target assignment: member id -> partitions. Every
// partition of a subscribed topic goes to exactly one member subscribed to
// it.
type assignor interface {
	name() string
	assign(members []assignMember, topics map[string]*TopicMeta) map[string]assignment
}

func assignorByName(name string) assignor {
	switch name {
	case "uniform":
		return uniformAssignor{}
	case "range":
		return rangeAssignor{}
	}
	return nil
}

// sortedMembers returns members sorted by id (assignors are deterministic).
func sortedMembers(members []assignMember) []assignMember {
	out := slices.Clone(members)
	slices.SortFunc(out, func(a, b assignMember) int { return strings.Compare(a.id, b.id) })
	return out
}

// subscribedTopics returns the names of the topics some member subscribes
// to, sorted.
func subscribedTopics(members []assignMember, topics map[string]*TopicMeta) []string {
	set := map[string]bool{}
	for _, m := range members {
		for t := range m.topics {
			if topics[t] != nil {
				set[t] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// rangeAssignor is Kafka's RangeAssignor for consumer groups: per topic,
// the members subscribed to it in member id order each get a contiguous
// range; the first (partitions % members) get one more.
type rangeAssignor struct{}

func (rangeAssignor) name() string { return "range" }

func (rangeAssignor) assign(members []assignMember, topics map[string]*TopicMeta) map[string]assignment {
	ms := sortedMembers(members)
	out := make(map[string]assignment, len(ms))
	for _, m := range ms {
		out[m.id] = assignment{}
	}
	for _, name := range subscribedTopics(ms, topics) {
		t := topics[name]
		var subs []string
		for _, m := range ms {
			if m.topics[name] {
				subs = append(subs, m.id)
			}
		}
		n := int32(len(subs))
		per, extra := t.Partitions/n, t.Partitions%n
		start := int32(0)
		for i, id := range subs {
			size := per
			if int32(i) < extra {
				size++
			}
			for p := start; p < start+size; p++ {
				out[id].add(t.ID, p)
			}
			start += size
		}
	}
	return out
}

// uniformAssignor is Kafka's UniformAssignor: every member gets about the
// same number of partitions of the topics it subscribes to, members keep
// what they had where balance allows (sticky), and a partition goes to a
// member in one of its replicas' racks when that costs no balance.
type uniformAssignor struct{}

func (uniformAssignor) name() string { return "uniform" }

type tpKey struct {
	topic     topicID
	partition int32
}

func (uniformAssignor) assign(members []assignMember, topics map[string]*TopicMeta) map[string]assignment {
	ms := sortedMembers(members)
	n := len(ms)
	out := make(map[string]assignment, n)
	for _, m := range ms {
		out[m.id] = assignment{}
	}
	if n == 0 {
		return out
	}
	names := subscribedTopics(ms, topics)
	byID := map[topicID]*TopicMeta{}
	subs := map[string][]int{} // topic -> indexes of subscribed members
	for _, name := range names {
		byID[topics[name].ID] = topics[name]
		for i, m := range ms {
			if m.topics[name] {
				subs[name] = append(subs[name], i)
			}
		}
	}
	// Each member's fair share: its part of every topic it subscribes to.
	share := make([]float64, n)
	for _, name := range names {
		for _, i := range subs[name] {
			share[i] += float64(topics[name].Partitions) / float64(len(subs[name]))
		}
	}
	quota := make([]int, n)
	for i := range share {
		quota[i] = int(share[i])
		if float64(quota[i]) < share[i] {
			quota[i]++
		}
	}
	count := make([]int, n)
	owner := map[tpKey]int{}
	eligible := func(i int, t *TopicMeta) bool { return ms[i].topics[t.Name] }
	give := func(i int, k tpKey) {
		owner[k] = i
		count[i]++
	}

	// 1. Sticky: members keep their previous partitions, up to their quota.
	for i, m := range ms {
		for _, tid := range m.prev.sortedTopics() {
			t := byID[tid]
			if t == nil || !eligible(i, t) {
				continue
			}
			for _, p := range m.prev[tid] {
				k := tpKey{tid, p}
				if p >= t.Partitions || count[i] >= quota[i] {
					continue
				}
				if _, taken := owner[k]; !taken {
					give(i, k)
				}
			}
		}
	}
	rackOK := func(i int, t *TopicMeta, p int32) bool {
		if ms[i].rack == "" || int(p) >= len(t.Racks) {
			return false
		}
		return slices.Contains(t.Racks[p], ms[i].rack)
	}
	// 2. The rest, in topic and partition order, to the eligible member
	// with the fewest partitions; a member in a replica's rack first while
	// it is under its quota.
	for _, name := range names {
		t := topics[name]
		for p := int32(0); p < t.Partitions; p++ {
			k := tpKey{t.ID, p}
			if _, taken := owner[k]; taken {
				continue
			}
			best, bestRack := -1, -1
			for _, i := range subs[name] {
				if best < 0 || count[i] < count[best] {
					best = i
				}
				if rackOK(i, t, p) && count[i] < quota[i] && (bestRack < 0 || count[i] < count[bestRack]) {
					bestRack = i
				}
			}
			if bestRack >= 0 {
				best = bestRack
			}
			give(best, k)
		}
	}
	// 3. Balance: move partitions from the fullest members to eligible
	// members with at least two fewer, until no such move exists.
	for moved := true; moved; {
		moved = false
		keys := slices.Collect(maps.Keys(owner))
		slices.SortFunc(keys, func(a, b tpKey) int {
			if c := bytes.Compare(a.topic[:], b.topic[:]); c != 0 {
				return c
			}
			return int(a.partition - b.partition)
		})
		for _, k := range keys {
			from := owner[k]
			t := byID[k.topic]
			to := -1
			for _, i := range subs[t.Name] {
				if count[i]+2 <= count[from] && (to < 0 || count[i] < count[to]) {
					to = i
				}
			}
			if to >= 0 {
				count[from]--
				give(to, k)
				moved = true
			}
		}
	}
	for k, i := range owner {
		out[ms[i].id].add(k.topic, k.partition)
	}
	return out
}
