package group

// Consumer group (KIP-848) records in __consumer_offsets.
//
// Kafka keeps a consumer group as several compacted records: the group
// epoch, each member's subscription, the target assignment (its epoch and
// one record per member) and each member's current assignment. Silkworm
// writes the same set of records, keyed the same way, but in its own
// documented encoding, under key versions Kafka does not use, so that no
// tool mistakes one for Kafka's schema:
//
//	key version | key fields            | Kafka's record
//	1003        | group                 | ConsumerGroupMetadata (group epoch, subscription metadata digest)
//	1005        | group, member         | ConsumerGroupMemberMetadata (subscription, client, rack, timeouts)
//	1006        | group                 | ConsumerGroupTargetAssignmentMetadata (assignment epoch)
//	1007        | group, member         | ConsumerGroupTargetAssignmentMember (target partitions)
//	1008        | group, member         | ConsumerGroupCurrentMemberAssignment (state, epochs, partitions)
//
// A key is the int16 version then each field as an int16-length string
// (Kafka's key layout). A value is an int16 value version (0) followed by
// a JSON object; partitions are keyed by the topic id in hex. A null value
// is a tombstone. Offsets committed by consumer group members are ordinary
// OffsetCommit records: the same offsets as classic groups'.

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/silkworm/silkworm/internal/record"
)

const (
	cgKeyGroup        = 1003
	cgKeyMember       = 1005
	cgKeyTargetEpoch  = 1006
	cgKeyTargetMember = 1007
	cgKeyCurrent      = 1008
	cgValueVersion    = 0
)

func cgKey(version int16, group string, member ...string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(version))
	for _, s := range append([]string{group}, member...) {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	return b
}

// parseCGKey splits a consumer group key into its string fields.
func parseCGKey(key []byte) ([]string, error) {
	var out []string
	b := key[2:]
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, fmt.Errorf("truncated key")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			return nil, fmt.Errorf("truncated key string")
		}
		out = append(out, string(b[2:2+n]))
		b = b[2+n:]
	}
	return out, nil
}

func cgValue(v any) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("group: encode consumer group record: %v", err)) // plain data: cannot fail
	}
	return append(binary.BigEndian.AppendUint16(nil, cgValueVersion), body...)
}

type cgGroupValue struct {
	Epoch    int32  `json:"epoch"`
	MetaHash string `json:"metadata_digest"`
}

type cgMemberValue struct {
	InstanceID         *string  `json:"instance_id,omitempty"`
	RackID             *string  `json:"rack_id,omitempty"`
	ClientID           string   `json:"client_id"`
	ClientHost         string   `json:"client_host"`
	RebalanceTimeoutMs int64    `json:"rebalance_timeout_ms"`
	TopicNames         []string `json:"subscribed_topic_names,omitempty"`
	Regex              *string  `json:"subscribed_topic_regex,omitempty"`
	ServerAssignor     *string  `json:"server_assignor,omitempty"`
	// Classic is set for a member using the classic protocol.
	Classic *cgClassicValue `json:"classic,omitempty"`
}

type cgClassicValue struct {
	SessionTimeoutMs int64             `json:"session_timeout_ms"`
	Protocols        []cgProtocolValue `json:"protocols"`
}

type cgProtocolValue struct {
	Name     string `json:"name"`
	Metadata []byte `json:"metadata"`
}

type cgTargetEpochValue struct {
	AssignmentEpoch int32 `json:"assignment_epoch"`
}

type cgTargetValue struct {
	Partitions map[string][]int32 `json:"partitions"`
}

type cgCurrentValue struct {
	State         int8               `json:"state"`
	Epoch         int32              `json:"member_epoch"`
	PrevEpoch     int32              `json:"previous_member_epoch"`
	Assigned      map[string][]int32 `json:"assigned"`
	PendingRevoke map[string][]int32 `json:"pending_revocation,omitempty"`
	// AssignedAt maps "topic id hex/partition" to its assignment epoch.
	AssignedAt map[string]int32 `json:"assignment_epochs,omitempty"`
}

func encodeAssignment(a assignment) map[string][]int32 {
	out := make(map[string][]int32, len(a))
	for t, ps := range a {
		if len(ps) > 0 {
			out[hex.EncodeToString(t[:])] = ps
		}
	}
	return out
}

func encodeAssignedAt(at map[tpKey]int32) map[string]int32 {
	out := make(map[string]int32, len(at))
	for k, e := range at {
		out[fmt.Sprintf("%x/%d", k.topic[:], k.partition)] = e
	}
	return out
}

func decodeAssignedAt(m map[string]int32) map[tpKey]int32 {
	out := make(map[tpKey]int32, len(m))
	for s, e := range m {
		var h string
		var p int32
		if i := strings.IndexByte(s, '/'); i > 0 {
			h = s[:i]
			if _, err := fmt.Sscan(s[i+1:], &p); err != nil {
				continue
			}
		}
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 16 {
			continue
		}
		out[tpKey{topicID(b), p}] = e
	}
	return out
}

func decodeAssignment(m map[string][]int32) (assignment, error) {
	out := assignment{}
	for k, ps := range m {
		b, err := hex.DecodeString(k)
		if err != nil || len(b) != 16 {
			return nil, fmt.Errorf("bad topic id %q", k)
		}
		ps = slices.Clone(ps)
		slices.Sort(ps)
		out[topicID(b)] = slices.Compact(ps)
	}
	return out, nil
}

func (g *group) queueLocked(key, value []byte) {
	g.pendingRecs = append(g.pendingRecs, record.Record{Key: key, Value: value})
}

func (g *group) recordGroupEpochLocked() {
	g.queueLocked(cgKey(cgKeyGroup, g.id), cgValue(cgGroupValue{Epoch: g.cg.epoch, MetaHash: g.cg.metaSig}))
}

func (g *group) recordAssignmentEpochLocked() {
	g.queueLocked(cgKey(cgKeyTargetEpoch, g.id), cgValue(cgTargetEpochValue{AssignmentEpoch: g.cg.assignmentEpoch}))
}

func (g *group) recordMemberLocked(m *cmember) {
	v := cgMemberValue{
		InstanceID: m.instanceID, RackID: m.rack, ClientID: m.clientID, ClientHost: m.clientHost,
		RebalanceTimeoutMs: m.rebalanceTimeout.Milliseconds(), TopicNames: m.topicNames,
		Regex: m.regex, ServerAssignor: m.serverAssignor,
	}
	if m.classic != nil {
		v.Classic = &cgClassicValue{SessionTimeoutMs: m.classic.sessionTimeout.Milliseconds()}
		for _, p := range m.classic.protocols {
			v.Classic.Protocols = append(v.Classic.Protocols, cgProtocolValue{p.name, p.metadata})
		}
	}
	g.queueLocked(cgKey(cgKeyMember, g.id, m.id), cgValue(v))
}

// recordTargetLocked writes a member's target, or its tombstone for nil.
func (g *group) recordTargetLocked(memberID string, a assignment) {
	var v []byte
	if a != nil {
		v = cgValue(cgTargetValue{Partitions: encodeAssignment(a)})
	}
	g.queueLocked(cgKey(cgKeyTargetMember, g.id, memberID), v)
}

func (g *group) recordCurrentLocked(m *cmember) {
	g.queueLocked(cgKey(cgKeyCurrent, g.id, m.id), cgValue(cgCurrentValue{
		State: int8(m.state), Epoch: m.epoch, PrevEpoch: m.prevEpoch,
		Assigned: encodeAssignment(m.assigned), PendingRevoke: encodeAssignment(m.pendingRevoke),
		AssignedAt: encodeAssignedAt(m.assignedAt),
	}))
}

func (g *group) recordMemberTombstonesLocked(memberID string) {
	g.queueLocked(cgKey(cgKeyCurrent, g.id, memberID), nil)
	g.queueLocked(cgKey(cgKeyTargetMember, g.id, memberID), nil)
	g.queueLocked(cgKey(cgKeyMember, g.id, memberID), nil)
}

// recordConsumerGroupTombstonesLocked deletes the whole consumer group
// (DeleteGroups, expiry, conversion back to a classic group).
func (g *group) recordConsumerGroupTombstonesLocked() {
	for id := range g.cg.members {
		g.recordMemberTombstonesLocked(id)
	}
	g.queueLocked(cgKey(cgKeyTargetEpoch, g.id), nil)
	g.queueLocked(cgKey(cgKeyGroup, g.id), nil)
}

// flushLocked writes the records queued by this operation as one batch.
// A failed write is logged: the group's memory state stays ahead of the
// log until the next write (the partition is usually moving away, and
// the new coordinator replays what was written).
func (g *group) flushLocked() int16 {
	recs := g.pendingRecs
	g.pendingRecs = nil
	if len(recs) == 0 {
		return 0
	}
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
	}
	if err := g.log.Append(buildBatch(g.c.clock(), recs)); err != nil {
		g.c.logger.Error("store consumer group records", "group", g.id, "err", err)
		return 1
	}
	return 0
}

// applyConsumerRecord replays one consumer group record.
func applyConsumerRecord(get func(string) *group, hasMeta map[string]bool, version int16, r *record.Record) error {
	fields, err := parseCGKey(r.Key)
	if err != nil || len(fields) == 0 {
		return fmt.Errorf("consumer group key version %d: %v", version, err)
	}
	g := get(fields[0])
	if version == cgKeyGroup && r.Value == nil {
		// The group was deleted or turned back into a classic group.
		g.cg = nil
		hasMeta[g.id] = false
		return nil
	}
	if g.cg == nil {
		if r.Value == nil {
			return nil
		}
		g.cg = newConsumerGroup()
	}
	cg := g.cg
	hasMeta[g.id] = true
	var body []byte
	if r.Value != nil {
		if len(r.Value) < 2 {
			return fmt.Errorf("consumer group value of %d bytes", len(r.Value))
		}
		body = r.Value[2:]
	}
	member := func() (*cmember, error) {
		if len(fields) < 2 {
			return nil, fmt.Errorf("consumer group key version %d without member", version)
		}
		m := cg.members[fields[1]]
		if m == nil {
			m = &cmember{id: fields[1], assigned: assignment{}, pendingRevoke: assignment{}}
			cg.members[m.id] = m
		}
		return m, nil
	}
	switch version {
	case cgKeyGroup:
		var v cgGroupValue
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("consumer group metadata: %w", err)
		}
		cg.epoch, cg.metaSig = v.Epoch, v.MetaHash
	case cgKeyTargetEpoch:
		if r.Value == nil {
			cg.assignmentEpoch = 0
			return nil
		}
		var v cgTargetEpochValue
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("consumer group target epoch: %w", err)
		}
		cg.assignmentEpoch = v.AssignmentEpoch
	case cgKeyMember:
		if r.Value == nil {
			if len(fields) > 1 {
				delete(cg.members, fields[1])
			}
			return nil
		}
		m, err := member()
		if err != nil {
			return err
		}
		var v cgMemberValue
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("consumer group member: %w", err)
		}
		m.instanceID, m.rack, m.clientID, m.clientHost = v.InstanceID, v.RackID, v.ClientID, v.ClientHost
		m.rebalanceTimeout = time.Duration(v.RebalanceTimeoutMs) * time.Millisecond
		m.topicNames, m.regex, m.serverAssignor = v.TopicNames, v.Regex, v.ServerAssignor
		m.classic = nil
		if v.Classic != nil {
			m.classic = &classicMember{sessionTimeout: time.Duration(v.Classic.SessionTimeoutMs) * time.Millisecond}
			for _, p := range v.Classic.Protocols {
				m.classic.protocols = append(m.classic.protocols, protocol{name: p.Name, metadata: p.Metadata})
			}
		}
	case cgKeyTargetMember:
		if len(fields) < 2 {
			return fmt.Errorf("target assignment key without member")
		}
		if r.Value == nil {
			delete(cg.target, fields[1])
			return nil
		}
		var v cgTargetValue
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("consumer group target: %w", err)
		}
		a, err := decodeAssignment(v.Partitions)
		if err != nil {
			return err
		}
		cg.target[fields[1]] = a
	case cgKeyCurrent:
		if r.Value == nil {
			return nil // the member record's tombstone removes the member
		}
		m, err := member()
		if err != nil {
			return err
		}
		var v cgCurrentValue
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("consumer group current assignment: %w", err)
		}
		m.state, m.epoch, m.prevEpoch = memberState(v.State), v.Epoch, v.PrevEpoch
		if m.assigned, err = decodeAssignment(v.Assigned); err != nil {
			return err
		}
		if m.pendingRevoke, err = decodeAssignment(v.PendingRevoke); err != nil {
			return err
		}
		m.assignedAt = decodeAssignedAt(v.AssignedAt)
	}
	return nil
}

// finishConsumerReplay rebuilds what is derived from the replayed records:
// static member ids and partition owners.
func finishConsumerReplay(g *group) {
	cg := g.cg
	if cg == nil {
		return
	}
	for id := range cg.target {
		if cg.members[id] == nil {
			delete(cg.target, id)
		}
	}
	for _, m := range cg.members {
		if m.instanceID != nil {
			cg.static[*m.instanceID] = m.id
		}
		for _, a := range []assignment{m.assigned, m.pendingRevoke} {
			for t, ps := range a {
				for _, p := range ps {
					cg.owners[tpKey{t, p}] = owner{m.id, m.epoch}
				}
			}
		}
	}
}
