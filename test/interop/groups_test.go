package interop

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// groupPartitions is the partition count of the group scenarios' topics.
const groupPartitions = 6

func TestGroupsKcat(t *testing.T) {
	t.Parallel()
	requireClient(t, kcatMissing(), "apt-get install -y kcat")
	runGroupScenarios(t, kcatGroupClient(false))
}

func TestGroupsKcatCooperative(t *testing.T) {
	t.Parallel()
	requireClient(t, kcatMissing(), "apt-get install -y kcat")
	runGroupScenarios(t, kcatGroupClient(true))
}

func TestGroupsKafkaPython(t *testing.T) {
	t.Parallel()
	requireClient(t, kafkaPythonMissing(), "apt-get install -y python3-kafka")
	runGroupScenarios(t, scriptGroupClient("kafka-python",
		[]string{pythonInterpreter(), scriptPath(t, "python/interop_client.py")}))
}

func TestGroupsKafkaJS(t *testing.T) {
	t.Parallel()
	requireClient(t, kafkaJSMissing(), "apt-get install -y nodejs npm && (cd test/interop/js && npm ci)")
	gc := scriptGroupClient("kafkajs", []string{"node", scriptPath(t, "js/interop_client.js")})
	gc.noneUnsupported = "kafkajs has no auto.offset.reset=none: a new group starts at the earliest " +
		"(fromBeginning: true) or latest offset, never with an error"
	runGroupScenarios(t, gc)
}

// runGroupScenarios runs the consumer-group scenarios for one client on
// one broker. Members of franz-go are covered in-process by
// internal/broker/group_test.go.
func runGroupScenarios(t *testing.T, gc groupClient) {
	b := startBroker(t, groupBrokerOverrides...)
	t.Run("balance-idle-kill", func(t *testing.T) { groupBalanceIdleKill(t, gc, b.Addr()) })
	t.Run("offset-reset", func(t *testing.T) { groupOffsetReset(t, gc, b.Addr()) })
	t.Run("commits-survive-broker-kill", func(t *testing.T) { groupCommitsSurviveKill(t, gc, b) })
}

// groupBalanceIdleKill: 3 members get 2 partitions each; 6 get one each;
// a 7th leaves one member idle, and the idle one consumes nothing; a
// SIGKILLed member's partition moves to the others and no record is
// skipped.
func groupBalanceIdleKill(t *testing.T, gc groupClient, addr string) {
	topic, group := "balance-"+gc.name, "g-balance-"+gc.name
	createTopicWith(t, addr, topic, groupPartitions, nil)
	produced := 0
	produce := func(n int) {
		produceSeq(t, addr, topic, produced, produced+n, -1)
		produced += n
	}
	produce(120)

	var members []*groupMember
	add := func(n int) {
		for range n {
			name := fmt.Sprintf("%s-member-%d", gc.name, len(members)+1)
			members = append(members, startMember(t, gc, name, addr, topic, group, memberOpts{reset: "earliest"}))
		}
	}
	add(3)
	waitBalanced(t, members, []int{2, 2, 2})
	waitConsumed(t, members, produced)

	add(3)
	waitBalanced(t, members, []int{1, 1, 1, 1, 1, 1})
	add(1)
	reports := waitBalanced(t, members, []int{0, 1, 1, 1, 1, 1, 1})
	idle := -1
	for i, r := range reports {
		if len(r.partitions) == 0 {
			idle = i
		}
	}
	if gc.sticky && idle != len(members)-1 {
		t.Errorf("%s sits idle, want the newcomer %s: a sticky assignor moves no partition to it",
			members[idle].name, members[len(members)-1].name)
	} else {
		t.Logf("%s sits idle (sticky assignor: %v; else the assignor's choice)", members[idle].name, gc.sticky)
	}
	idleBefore := len(reports[idle].records)
	produce(120)
	waitConsumed(t, members, produced)
	if r := members[idle].report(); len(r.records) != idleBefore || len(r.partitions) != 0 {
		t.Errorf("idle %s consumed %d records (partitions %v) while six members held all six partitions",
			members[idle].name, len(r.records)-idleBefore, r.partitions)
	}

	// SIGKILL a member that holds a partition: no LeaveGroup, so the
	// broker must notice the missed heartbeats (session timeout).
	victim := 0
	if victim == idle {
		victim = 1
	}
	lost := members[victim].report().partitions
	members[victim].kill()
	t.Logf("killed %s (SIGKILL), which held partitions %v", members[victim].name, lost)
	produce(120)
	alive := slices.Delete(slices.Clone(members), victim, victim+1)
	waitBalanced(t, alive, []int{1, 1, 1, 1, 1, 1})
	// The union of what every member printed, the killed one included,
	// must cover every record: a member prints a record before committing it.
	waitConsumed(t, members, produced)
	for _, m := range members {
		if r := m.report(); len(r.badLines) > 0 || len(r.errs) > 0 {
			t.Errorf("%s: bad output %v, errors %v", m.name, r.badLines, r.errs)
		}
	}
}

// waitBalanced waits until the live members are all assigned, between
// them hold every partition exactly once, and their partition counts,
// sorted, are want. It returns the members' reports at that moment.
func waitBalanced(t *testing.T, members []*groupMember, want []int) []memberReport {
	t.Helper()
	var reports []memberReport
	err := testcluster.Poll(groupWaitTimeout, func() error {
		reports = reports[:0]
		var counts []int
		held := map[int32]string{}
		for _, m := range members {
			if m.isExited() {
				return testcluster.GiveUp(fmt.Errorf("%s exited: %v", m.name, m.report().errs))
			}
			r := m.report()
			reports = append(reports, r)
			if !r.assigned {
				return fmt.Errorf("%s has no assignment yet", m.name)
			}
			counts = append(counts, len(r.partitions))
			for _, p := range r.partitions {
				if other, ok := held[p]; ok {
					return fmt.Errorf("partition %d held by %s and %s", p, other, m.name)
				}
				held[p] = m.name
			}
		}
		slices.Sort(counts)
		if len(held) != groupPartitions || !slices.Equal(counts, want) {
			return fmt.Errorf("partition counts %v covering %d partitions, want %v covering %d",
				counts, len(held), want, groupPartitions)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("group did not balance: %v", err)
	}
	return reports
}

// waitConsumed waits until the members between them have consumed every
// record s-000000..s-(n-1) and checks that nothing else was consumed.
func waitConsumed(t *testing.T, members []*groupMember, n int) {
	t.Helper()
	var missing []int
	err := testcluster.Poll(groupWaitTimeout, func() error {
		seen := make([]bool, n)
		for _, m := range members {
			for _, r := range m.report().records {
				seq, _ := seqOfSeqKey(r.Key)
				if seq >= n {
					return testcluster.GiveUp(fmt.Errorf("%s consumed %v, beyond the %d records produced", m.name, r, n))
				}
				if r.Value != seqValue(seq) {
					return testcluster.GiveUp(fmt.Errorf("%s consumed %v: wrong value", m.name, r))
				}
				seen[seq] = true
			}
		}
		missing = missing[:0]
		for seq, ok := range seen {
			if !ok {
				missing = append(missing, seq)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d of %d records not consumed by any member, first s-%06d", len(missing), n, missing[0])
		}
		return nil
	})
	if err != nil {
		t.Fatalf("records skipped: %v", err)
	}
}

// groupOffsetReset: new groups with auto.offset.reset earliest, latest and
// none on a topic holding records.
func groupOffsetReset(t *testing.T, gc groupClient, addr string) {
	topic := "reset-" + gc.name
	createTopicWith(t, addr, topic, groupPartitions, nil)
	const old = 60
	produceSeq(t, addr, topic, 0, old, -1)

	earliest := startMember(t, gc, gc.name+"-earliest", addr, topic, "g-earliest-"+gc.name, memberOpts{reset: "earliest"})
	latest := startMember(t, gc, gc.name+"-latest", addr, topic, "g-latest-"+gc.name, memberOpts{reset: "latest"})
	var none *groupMember
	if gc.noneUnsupported == "" {
		none = startMember(t, gc, gc.name+"-none", addr, topic, "g-none-"+gc.name, memberOpts{reset: "none"})
	}

	// earliest: every old record, each partition from offset 0.
	waitConsumed(t, []*groupMember{earliest}, old)
	first := map[int32]int64{}
	for _, r := range earliest.report().records {
		if _, ok := first[r.Partition]; !ok {
			first[r.Partition] = r.Offset
		}
	}
	for p, o := range first {
		if o != 0 {
			t.Errorf("earliest: partition %d read from offset %d, want the log start 0", p, o)
		}
	}

	// latest: produce one record per partition now and then until the
	// member has read from every partition (its positions are resolved),
	// then one more round that it must read entirely; it must never read
	// an old record.
	next := old
	var lastTick time.Time
	err := testcluster.Poll(groupWaitTimeout, func() error {
		if latest.isExited() {
			return testcluster.GiveUp(fmt.Errorf("latest member exited: %v", latest.report().errs))
		}
		got := map[int32]bool{}
		for _, r := range latest.report().records {
			got[r.Partition] = true
		}
		if len(got) == groupPartitions {
			return nil
		}
		if time.Since(lastTick) > 300*time.Millisecond { // pacing, not an assertion
			for p := range int32(groupPartitions) {
				produceSeq(t, addr, topic, next, next+1, p)
				next++
			}
			lastTick = time.Now()
		}
		return fmt.Errorf("latest member read from partitions %v so far", slices.Sorted(maps.Keys(got)))
	})
	if err != nil {
		t.Fatalf("latest: %v", err)
	}
	finalFrom := next
	for p := range int32(groupPartitions) {
		produceSeq(t, addr, topic, next, next+1, p)
		next++
	}
	err = testcluster.Poll(groupWaitTimeout, func() error {
		got := map[int]bool{}
		for _, r := range latest.report().records {
			seq, _ := seqOfSeqKey(r.Key)
			got[seq] = true
		}
		for seq := finalFrom; seq < next; seq++ {
			if !got[seq] {
				return fmt.Errorf("latest member has not read s-%06d", seq)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("latest: %v", err)
	}
	for _, r := range latest.report().records {
		if seq, _ := seqOfSeqKey(r.Key); seq < old {
			t.Errorf("latest: read %v, produced before the group existed", r)
		}
	}

	// none: no committed offset, so an error and no records.
	if none == nil {
		t.Log(gc.noneUnsupported)
		return
	}
	exitErr := none.waitExit(t)
	r := none.report()
	if exitErr == nil {
		t.Errorf("none: member exited cleanly, want an error exit")
	}
	if len(r.errs) == 0 {
		t.Errorf("none: member reported no error")
	} else {
		t.Logf("none: %s", r.errs[0])
	}
	if len(r.records) > 0 {
		t.Errorf("none: member read %d records, first %v", len(r.records), r.records[0])
	}
}

// groupCommitsSurviveKill: a member commits exactly its first 100 records
// and exits; the broker is SIGKILLed and restarted; the committed offsets
// are still there, and a new member of the group reads exactly the
// records after them.
func groupCommitsSurviveKill(t *testing.T, gc groupClient, b broker) {
	topic, group := "commit-"+gc.name, "g-commit-"+gc.name
	createTopicWith(t, b.Addr(), topic, groupPartitions, nil)
	const before, after, firstRead = 300, 60, 100
	produceSeq(t, b.Addr(), topic, 0, before, -1)

	first := startMember(t, gc, gc.name+"-committer", b.Addr(), topic, group, memberOpts{reset: "earliest", maxRecords: firstRead})
	if err := first.waitExit(t); err != nil {
		t.Fatalf("%s: %v (errors %v)", first.name, err, first.report().errs)
	}
	read := first.report().records
	if len(read) != firstRead {
		t.Fatalf("%s read %d records, want %d", first.name, len(read), firstRead)
	}
	want := map[int32]int64{}
	consumed := map[int]bool{}
	for _, r := range read {
		want[r.Partition] = max(want[r.Partition], r.Offset+1)
		seq, _ := seqOfSeqKey(r.Key)
		consumed[seq] = true
	}
	checkCommitted := func(when string) {
		t.Helper()
		var got map[int32]int64
		err := testcluster.Poll(groupWaitTimeout, func() error {
			var err error
			got, err = committedOffsets(b.Addr(), group, topic)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%s: committed offsets %v, want %v (one past the last record read per partition)", when, got, want)
		}
	}
	checkCommitted("after the first member exited")
	if !b.CanRestart() {
		t.Log("broker cannot be restarted by this test (SILKWORM_TEST_BOOTSTRAP): no kill -9")
	} else {
		b.Restart(t)
		checkCommitted("after kill -9 and restart of the broker")
	}
	produceSeq(t, b.Addr(), topic, before, before+after, -1)

	second := startMember(t, gc, gc.name+"-resumer", b.Addr(), topic, group, memberOpts{reset: "earliest"})
	total := before + after
	err := testcluster.Poll(groupWaitTimeout, func() error {
		n := len(second.report().records)
		if n >= total-firstRead {
			return nil
		}
		if second.isExited() {
			return testcluster.GiveUp(fmt.Errorf("%s exited: %v", second.name, second.report().errs))
		}
		return fmt.Errorf("%s read %d of %d records", second.name, n, total-firstRead)
	})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	// Per partition a resumed member reads in offset order, so reading
	// anything at or before a commit would show up before the records
	// awaited above.
	var problems []string
	seen := map[int]bool{}
	for _, r := range second.report().records {
		seq, _ := seqOfSeqKey(r.Key)
		switch {
		case consumed[seq]:
			problems = append(problems, fmt.Sprintf("read again after its commit: %v", r))
		case seen[seq]:
			problems = append(problems, fmt.Sprintf("read twice: %v", r))
		case seq >= total:
			problems = append(problems, fmt.Sprintf("never produced: %v", r))
		default:
			seen[seq] = true
		}
	}
	if len(seen)+len(consumed) != total {
		problems = append(problems, fmt.Sprintf("first member read %d and second %d distinct records, want %d in all",
			len(consumed), len(seen), total))
	}
	if len(problems) > 10 {
		problems = append(problems[:10], "...")
	}
	if len(problems) > 0 {
		t.Errorf("resumed member did not start exactly after the commits:\n  %s", strings.Join(problems, "\n  "))
	}
}
