package group

import (
	"fmt"
	"slices"
	"testing"
)

func members(n int, topics ...string) []assignMember {
	var out []assignMember
	for i := range n {
		m := assignMember{id: fmt.Sprintf("m%d", i), topics: map[string]bool{}}
		for _, t := range topics {
			m.topics[t] = true
		}
		out = append(out, m)
	}
	return out
}

func checkComplete(t *testing.T, got map[string]assignment, topics map[string]*TopicMeta, ms []assignMember) {
	t.Helper()
	seen := map[tpKey]string{}
	for id, a := range got {
		var m *assignMember
		for i := range ms {
			if ms[i].id == id {
				m = &ms[i]
			}
		}
		for tid, ps := range a {
			var name string
			for n, tm := range topics {
				if tm.ID == tid {
					name = n
				}
			}
			if !m.topics[name] {
				t.Fatalf("%s got topic %s it does not subscribe to", id, name)
			}
			for _, p := range ps {
				k := tpKey{tid, p}
				if o, ok := seen[k]; ok {
					t.Fatalf("%s-%d given to %s and %s", name, p, o, id)
				}
				seen[k] = id
			}
		}
	}
	want := 0
	for _, tm := range topics {
		for _, m := range ms {
			if m.topics[tm.Name] {
				want += int(tm.Partitions)
				break
			}
		}
	}
	if len(seen) != want {
		t.Fatalf("%d partitions assigned, want %d", len(seen), want)
	}
}

func TestRangeAssignor(t *testing.T) {
	topics := map[string]*TopicMeta{"a": {Name: "a", ID: [16]byte{1}, Partitions: 7}}
	ms := members(3, "a")
	got := rangeAssignor{}.assign(ms, topics)
	checkComplete(t, got, topics, ms)
	want := map[string][]int32{"m0": {0, 1, 2}, "m1": {3, 4}, "m2": {5, 6}}
	for id, ps := range want {
		if !slices.Equal(got[id][[16]byte{1}], ps) {
			t.Fatalf("%s got %v, want %v", id, got[id][[16]byte{1}], ps)
		}
	}
}

func TestUniformAssignorBalancedAndSticky(t *testing.T) {
	topics := map[string]*TopicMeta{
		"a": {Name: "a", ID: [16]byte{1}, Partitions: 10},
		"b": {Name: "b", ID: [16]byte{2}, Partitions: 5},
	}
	ms := members(4, "a", "b")
	got := uniformAssignor{}.assign(ms, topics)
	checkComplete(t, got, topics, ms)
	for id, a := range got {
		if n := a.count(); n < 3 || n > 4 {
			t.Fatalf("%s got %d partitions, want 3 or 4", id, n)
		}
	}
	// A fifth member: everyone keeps what they had but what the new member
	// needs for balance (15/5 = 3 each).
	for i := range ms {
		ms[i].prev = got[ms[i].id]
	}
	ms = append(ms, assignMember{id: "m9", topics: map[string]bool{"a": true, "b": true}})
	next := uniformAssignor{}.assign(ms, topics)
	checkComplete(t, next, topics, ms)
	moved := 0
	for _, m := range ms[:4] {
		if next[m.id].count() != 3 {
			t.Fatalf("%s got %d partitions, want 3", m.id, next[m.id].count())
		}
		if !isSubset(next[m.id], m.prev) {
			t.Fatalf("%s got partitions it did not have before: %v -> %v", m.id, m.prev, next[m.id])
		}
		moved += m.prev.count() - next[m.id].count()
	}
	if moved != 3 {
		t.Fatalf("%d partitions moved, want exactly the 3 the new member needs", moved)
	}
}

func TestUniformAssignorHeterogeneous(t *testing.T) {
	topics := map[string]*TopicMeta{
		"a": {Name: "a", ID: [16]byte{1}, Partitions: 6},
		"b": {Name: "b", ID: [16]byte{2}, Partitions: 6},
	}
	ms := members(2, "a", "b")
	ms = append(ms, assignMember{id: "only-b", topics: map[string]bool{"b": true}})
	got := uniformAssignor{}.assign(ms, topics)
	checkComplete(t, got, topics, ms)
	for id, a := range got {
		if n := a.count(); n != 4 {
			t.Fatalf("%s got %d partitions, want 4 each", id, n)
		}
	}
}

func TestUniformAssignorRackAware(t *testing.T) {
	racks := [][]string{{"r0"}, {"r1"}, {"r0"}, {"r1"}}
	topics := map[string]*TopicMeta{"a": {Name: "a", ID: [16]byte{1}, Partitions: 4, Racks: racks}}
	ms := members(2, "a")
	ms[0].rack, ms[1].rack = "r1", "r0"
	got := uniformAssignor{}.assign(ms, topics)
	checkComplete(t, got, topics, ms)
	if !slices.Equal(got["m0"][[16]byte{1}], []int32{1, 3}) || !slices.Equal(got["m1"][[16]byte{1}], []int32{0, 2}) {
		t.Fatalf("rack-aware assignment %v", got)
	}
}
