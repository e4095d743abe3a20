package check

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Log is what was read back from one partition.
type Log struct {
	Topic     string
	Partition int32
	// LogStartOffset and HighWatermark bound the read: records were read
	// from the first at or after LogStartOffset up to HighWatermark
	// (exclusive).
	LogStartOffset int64
	HighWatermark  int64
	// Records are the records read, in offset order.
	Records []Record
}

// Kind is a kind of damage Compare reports.
type Kind int

const (
	// Lost: an acknowledged record is not read back anywhere.
	Lost Kind = iota + 1
	// Misplaced: an acknowledged record is read back, but not at the
	// partition and offset of its acknowledgement.
	Misplaced
	// Duplicated: a record is read back more often than it was
	// acknowledged, and more than once.
	Duplicated
	// Reordered: a record is read back after a record of the same
	// producer and partition that was acknowledged after it.
	Reordered
)

func (k Kind) String() string {
	switch k {
	case Lost:
		return "lost"
	case Misplaced:
		return "misplaced"
	case Duplicated:
		return "duplicated"
	case Reordered:
		return "reordered"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Problem is one damaged record.
type Problem struct {
	Kind Kind
	// Record is the acknowledged record concerned; for a duplicate that
	// was never acknowledged, its first copy read back.
	Record Record
	// Found lists where the record was read back (empty when lost).
	Found []Record
	// Detail says what was seen, for people.
	Detail string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: %s %s", p.Kind, describe(p.Record), p.Detail)
}

// Report is the outcome of a check.
type Report struct {
	// Acked is the number of acknowledged records checked.
	Acked int
	// Read is the number of records read back.
	Read int
	// Verified is the number of acknowledged records read back exactly
	// once, at the partition and offset of their acknowledgement.
	Verified int
	// Problems lists every damaged record, ordered by kind, topic,
	// partition and offset.
	Problems []Problem
}

// Count is the number of problems of kind k.
func (r *Report) Count(k Kind) int {
	n := 0
	for _, p := range r.Problems {
		if p.Kind == k {
			n++
		}
	}
	return n
}

// String summarises the report in one line.
func (r *Report) String() string {
	return fmt.Sprintf("%d acknowledged records, %d read back, %d verified (once, at their offset); lost %d, misplaced %d, duplicated %d, reordered %d",
		r.Acked, r.Read, r.Verified, r.Count(Lost), r.Count(Misplaced), r.Count(Duplicated), r.Count(Reordered))
}

// maxListed is how many problems Err lists.
const maxListed = 20

// Err is nil when nothing was damaged, else an error that holds the
// summary and the first problems.
func (r *Report) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(r.String())
	for i, p := range r.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "\n... and %d more", len(r.Problems)-maxListed)
			break
		}
		b.WriteString("\n")
		b.WriteString(p.String())
	}
	return errors.New(b.String())
}

// content identifies a record: its topic, key and value.
type content string

func contentOf(r Record) content {
	return content(fmt.Sprintf("%d:%s%d:%s", len(r.Topic), r.Topic, len(r.Key), r.Key) + string(r.Value))
}

type topicPartition struct {
	topic     string
	partition int32
}

// orderGroup is the records whose read-back order is checked against each
// other: one producer's records to one partition.
type orderGroup struct {
	producer string
	tp       topicPartition
}

// Compare checks the records read back (logs) against the acknowledged
// ones (acked, for named producers in acknowledgement order; see Record):
// every acknowledged record read back once, at its acknowledged partition
// and offset, in its producer's order; no record read back more often than
// acknowledged. Records read back that were never acknowledged are allowed
// once. Compare does not modify its arguments.
func Compare(acked []Record, logs []Log) *Report {
	r := &Report{Acked: len(acked)}
	logOf := map[topicPartition]*Log{}
	found := map[content][]Record{} // every copy read back, in log order
	for i := range logs {
		l := &logs[i]
		logOf[topicPartition{l.Topic, l.Partition}] = l
		for _, rec := range l.Records {
			rec.Topic, rec.Partition = l.Topic, l.Partition
			c := contentOf(rec)
			found[c] = append(found[c], rec)
			r.Read++
		}
	}
	ackedAs := map[content][]int{} // indexes into acked
	for i, a := range acked {
		c := contentOf(a)
		ackedAs[c] = append(ackedAs[c], i)
	}

	// Lost and misplaced records.
	for _, a := range acked {
		copies := found[contentOf(a)]
		at := slices.IndexFunc(copies, func(f Record) bool { return f.Partition == a.Partition && f.Offset == a.Offset })
		switch {
		case len(copies) == 0:
			r.Problems = append(r.Problems, Problem{Kind: Lost, Record: a, Detail: "not read back: " + lostDetail(a, logOf)})
		case at < 0:
			r.Problems = append(r.Problems, Problem{Kind: Misplaced, Record: a, Found: copies,
				Detail: fmt.Sprintf("read back at %s instead", positions(copies))})
		case len(copies) == 1:
			r.Verified++
		}
	}

	// Duplicates: more copies than acknowledgements, and more than one.
	for c, copies := range found {
		if len(copies) <= max(1, len(ackedAs[c])) {
			continue
		}
		p := Problem{Kind: Duplicated, Record: copies[0], Found: copies,
			Detail: fmt.Sprintf("read back %d times, at %s", len(copies), positions(copies))}
		if idx := ackedAs[c]; len(idx) > 0 {
			p.Record = acked[idx[0]]
			p.Detail += fmt.Sprintf(", acknowledged %d times", len(idx))
		} else {
			p.Detail += ", never acknowledged"
		}
		r.Problems = append(r.Problems, p)
	}

	// Order: walk each partition; the first copy of each acknowledged
	// record in its acknowledged partition must come after the previous
	// one of its producer in acknowledgement order.
	type position struct {
		key int64 // acknowledgement order within the group
		rec Record
	}
	for _, l := range logs {
		tp := topicPartition{l.Topic, l.Partition}
		last := map[orderGroup]position{}
		for _, rec := range l.Records {
			rec.Topic, rec.Partition = l.Topic, l.Partition
			c := contentOf(rec)
			if first := found[c][0]; first.Partition != rec.Partition || first.Offset != rec.Offset {
				continue // a later copy: reported as a duplicate
			}
			i, ok := ackIn(acked, ackedAs[c], rec)
			if !ok {
				continue
			}
			a := acked[i]
			g := orderGroup{producer: a.Producer, tp: tp}
			key := int64(i)
			if a.Producer == "" {
				key = a.Offset
			}
			if prev, ok := last[g]; ok && key < prev.key {
				r.Problems = append(r.Problems, Problem{Kind: Reordered, Record: a, Found: []Record{rec},
					Detail: fmt.Sprintf("read back at offset %d, after %s at offset %d which was acknowledged later", rec.Offset, describe(prev.rec), prev.rec.Offset)})
			}
			last[g] = position{key: key, rec: rec}
		}
	}

	slices.SortFunc(r.Problems, func(a, b Problem) int {
		return cmp.Or(
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Record.Topic, b.Record.Topic),
			cmp.Compare(a.Record.Partition, b.Record.Partition),
			cmp.Compare(a.Record.Offset, b.Record.Offset),
			cmp.Compare(a.Record.Producer, b.Record.Producer),
		)
	})
	return r
}

// ackIn picks, among the acknowledgements (indexes into acked) of the
// content of rec, the one for rec's position, else the first one to rec's
// partition. ok is false when none was to rec's partition.
func ackIn(acked []Record, idx []int, rec Record) (int, bool) {
	pick := -1
	for _, i := range idx {
		a := acked[i]
		if a.Topic != rec.Topic || a.Partition != rec.Partition {
			continue
		}
		if a.Offset == rec.Offset {
			return i, true
		}
		if pick < 0 {
			pick = i
		}
	}
	return pick, pick >= 0
}

// lostDetail says where the read-back of a lost record's partition went.
func lostDetail(a Record, logOf map[topicPartition]*Log) string {
	l, ok := logOf[topicPartition{a.Topic, a.Partition}]
	switch {
	case !ok:
		return "its partition was not read"
	case a.Offset < l.LogStartOffset:
		return fmt.Sprintf("below the log start offset %d (deleted?)", l.LogStartOffset)
	case a.Offset >= l.HighWatermark:
		return fmt.Sprintf("at or beyond the high watermark %d", l.HighWatermark)
	}
	i, ok := slices.BinarySearchFunc(l.Records, a.Offset, func(r Record, off int64) int { return cmp.Compare(r.Offset, off) })
	if ok {
		return fmt.Sprintf("its offset holds key %s value %s", quote(l.Records[i].Key), quote(l.Records[i].Value))
	}
	return "its offset holds no record"
}

// describe names a record for people.
func describe(r Record) string {
	s := fmt.Sprintf("%s-%d@%d key %s value %s", r.Topic, r.Partition, r.Offset, quote(r.Key), quote(r.Value))
	if r.Producer != "" {
		s += " (producer " + r.Producer + ")"
	}
	return s
}

// positions lists where copies of a record were read back.
func positions(copies []Record) string {
	var parts []string
	for _, c := range copies {
		parts = append(parts, fmt.Sprintf("%d@%d", c.Partition, c.Offset))
	}
	return strings.Join(parts, ", ")
}

// quote prints a key or value, shortened.
func quote(b []byte) string {
	if b == nil {
		return "null"
	}
	const maxLen = 48
	if len(b) > maxLen {
		return fmt.Sprintf("%q...(%d bytes)", b[:maxLen], len(b))
	}
	return fmt.Sprintf("%q", b)
}
