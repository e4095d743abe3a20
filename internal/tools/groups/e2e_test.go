package groups

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

func startBroker(t *testing.T) string {
	t.Helper()
	return brokertest.Start(t, "group.initial.rebalance.delay.ms=0")
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type groupsEnv struct {
	t    *testing.T
	addr string
	adm  *kadm.Client
}

// with returns e reporting to t, for use inside a subtest.
func (e *groupsEnv) with(t *testing.T) *groupsEnv {
	c := *e
	c.t = t
	return &c
}

func (e *groupsEnv) run(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := Run(context.Background(), append([]string{"--bootstrap-server", e.addr}, args...), &out, &errOut)
	return out.String(), errOut.String(), err
}

func (e *groupsEnv) mustRun(args ...string) string {
	e.t.Helper()
	out, errOut, err := e.run(args...)
	if err != nil {
		e.t.Fatalf("consumer-groups %q: %v\nstdout:\n%s\nstderr:\n%s", args, err, out, errOut)
	}
	return out
}

// committed returns the group's committed offsets by partition of topic,
// read with OffsetFetch; a partition without a commit is absent.
func (e *groupsEnv) committed(group, topic string) map[int32]int64 {
	e.t.Helper()
	resps, err := e.adm.FetchOffsets(context.Background(), group)
	if err != nil {
		e.t.Fatalf("fetch offsets: %v", err)
	}
	out := map[int32]int64{}
	resps.Each(func(r kadm.OffsetResponse) {
		if r.Topic == topic && r.Err == nil && r.At >= 0 {
			out[r.Partition] = r.At
		}
	})
	return out
}

func (e *groupsEnv) wantCommitted(group, topic string, want map[int32]int64) {
	e.t.Helper()
	got := e.committed(group, topic)
	if len(got) != len(want) {
		e.t.Fatalf("committed offsets of %s: got %v, want %v", group, got, want)
	}
	for p, o := range want {
		if got[p] != o {
			e.t.Fatalf("committed offsets of %s: got %v, want %v", group, got, want)
		}
	}
}

// tableRows returns the whitespace-separated fields of the non-empty lines
// after the header line starting with header.
func tableRows(t *testing.T, out, header string) [][]string {
	t.Helper()
	var rows [][]string
	seen := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, header) {
			seen = true
			continue
		}
		if seen && strings.TrimSpace(line) != "" {
			rows = append(rows, strings.Fields(line))
		}
	}
	if !seen {
		t.Fatalf("no %q header in:\n%s", header, out)
	}
	return rows
}

var baseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// TestConsumerGroupsEndToEnd drives every consumer-groups action against an
// in-process broker: 10 records in orders-0 (timestamps base+0s..9s) and 6
// in orders-1 (base+100s..105s), one group member that committed 4 and 6.
func TestConsumerGroupsEndToEnd(t *testing.T) {
	addr := startBroker(t)
	ctx := context.Background()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	e := &groupsEnv{t: t, addr: addr, adm: kadm.NewClient(admCl)}
	if _, err := e.adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("a"), Timestamp: baseTime.Add(time.Duration(i) * time.Second)})
	}
	for i := range 6 {
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("b"), Timestamp: baseTime.Add(time.Duration(100+i) * time.Second)})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	prod.Close()

	member, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("g1"), kgo.ConsumeTopics("orders"),
		kgo.ClientID("member-1"), kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	memberClosed := false
	defer func() {
		if !memberClosed {
			member.Close()
		}
	}()
	pollCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	got := 0
	for got < 16 && pollCtx.Err() == nil {
		fs := member.PollFetches(pollCtx)
		got += fs.NumRecords()
	}
	cancel()
	if got != 16 {
		t.Fatalf("member consumed %d records, want 16", got)
	}
	var commitErr error
	member.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{"orders": {0: {Epoch: -1, Offset: 4}, 1: {Epoch: -1, Offset: 6}}},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
			commitErr = err
		})
	if commitErr != nil {
		t.Fatal(commitErr)
	}
	e.wantCommitted("g1", "orders", map[int32]int64{0: 4, 1: 6})

	t.Run("list", func(t *testing.T) {
		e := e.with(t)
		if out := e.mustRun("--list"); !strings.Contains("\n"+out, "\ng1\n") {
			t.Errorf("--list: %q", out)
		}
		out := e.mustRun("--list", "--state")
		rows := tableRows(t, out, "GROUP")
		if len(rows) != 1 || rows[0][0] != "g1" || rows[0][1] != "Stable" {
			t.Errorf("--list --state: %q", out)
		}
		if out := e.mustRun("--list", "--state", "Empty"); strings.Contains(out, "g1") {
			t.Errorf("--list --state Empty lists the stable group: %q", out)
		}
	})

	t.Run("describe-offsets", func(t *testing.T) {
		e := e.with(t)
		out := e.mustRun("--describe", "--group", "g1")
		rows := tableRows(t, out, "GROUP")
		want := [][]string{{"g1", "orders", "0", "4", "10", "6"}, {"g1", "orders", "1", "6", "6", "0"}}
		if len(rows) != len(want) {
			t.Fatalf("--describe: %q", out)
		}
		for i, w := range want {
			if len(rows[i]) != 9 || strings.Join(rows[i][:6], " ") != strings.Join(w, " ") || rows[i][8] != "member-1" || rows[i][6] == "-" {
				t.Errorf("--describe row %d: %q, want %q ... member-1", i, rows[i], w)
			}
		}
	})

	t.Run("describe-members", func(t *testing.T) {
		e := e.with(t)
		out := e.mustRun("--describe", "--group", "g1", "--members")
		rows := tableRows(t, out, "GROUP")
		if len(rows) != 1 || len(rows[0]) != 5 || rows[0][0] != "g1" || rows[0][3] != "member-1" || rows[0][4] != "2" {
			t.Errorf("--members: %q", out)
		}
		out = e.mustRun("--describe", "--group", "g1", "--members", "--verbose")
		rows = tableRows(t, out, "GROUP")
		if len(rows) != 1 || len(rows[0]) != 6 || rows[0][5] != "orders(0,1)" {
			t.Errorf("--members --verbose: %q", out)
		}
	})

	t.Run("describe-state", func(t *testing.T) {
		e := e.with(t)
		out := e.mustRun("--describe", "--group", "g1", "--state")
		rows := tableRows(t, out, "GROUP")
		// g1 host:port (id) strategy Stable 1
		if len(rows) != 1 || len(rows[0]) != 6 || rows[0][0] != "g1" || rows[0][1] != addr || rows[0][4] != "Stable" || rows[0][5] != "1" {
			t.Errorf("--state: %q", out)
		}
	})

	t.Run("reset-while-active", func(t *testing.T) {
		e := e.with(t)
		out, _, err := e.run("--reset-offsets", "--group", "g1", "--topic", "orders", "--to-earliest", "--execute")
		if err == nil || !strings.Contains(out, "current state is Stable") {
			t.Errorf("reset of an active group: %q, %v", out, err)
		}
		e.wantCommitted("g1", "orders", map[int32]int64{0: 4, 1: 6})
	})

	member.Close() // leaves the group
	memberClosed = true
	waitFor(t, "group g1 to become Empty", func() bool {
		gs, err := e.adm.DescribeGroups(ctx, "g1")
		return err == nil && gs["g1"].State == "Empty"
	})

	t.Run("describe-empty", func(t *testing.T) {
		e := e.with(t)
		out, errOut, err := e.run("--describe", "--group", "g1")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errOut, "Consumer group 'g1' has no active members.") {
			t.Errorf("stderr %q", errOut)
		}
		rows := tableRows(t, out, "GROUP")
		if len(rows) != 2 || strings.Join(rows[0], " ") != "g1 orders 0 4 10 6 - - -" || strings.Join(rows[1], " ") != "g1 orders 1 6 6 0 - - -" {
			t.Errorf("--describe of an empty group: %q", out)
		}
	})

	type resetCase struct {
		name string
		args []string
		want map[int32]int64
	}
	for _, c := range []resetCase{
		{"to-earliest", []string{"--topic", "orders", "--to-earliest"}, map[int32]int64{0: 0, 1: 0}},
		{"to-latest", []string{"--all-topics", "--to-latest"}, map[int32]int64{0: 10, 1: 6}},
		{"to-offset-one-partition", []string{"--topic", "orders:0", "--to-offset", "3"}, map[int32]int64{0: 3, 1: 6}},
		{"shift-by", []string{"--all-topics", "--shift-by", "-2"}, map[int32]int64{0: 1, 1: 4}},
		{"shift-by-clamped", []string{"--all-topics", "--shift-by", "-100"}, map[int32]int64{0: 0, 1: 0}},
		{"to-offset-clamped", []string{"--topic", "orders", "--to-offset", "1000"}, map[int32]int64{0: 10, 1: 6}},
		{"to-datetime", []string{"--topic", "orders", "--to-datetime", "2024-01-01T00:00:05.000Z"}, map[int32]int64{0: 5, 1: 0}},
		{"to-datetime-local", []string{"--topic", "orders", "--to-datetime", baseTime.Add(102 * time.Second).Local().Format("2006-01-02T15:04:05.000")}, map[int32]int64{0: 10, 1: 2}},
		{"by-duration-long", []string{"--topic", "orders", "--by-duration", "P3650D"}, map[int32]int64{0: 0, 1: 0}},
		{"by-duration-short", []string{"--topic", "orders", "--by-duration", "PT1H"}, map[int32]int64{0: 10, 1: 6}},
	} {
		t.Run("reset-"+c.name, func(t *testing.T) {
			e := e.with(t)
			before := e.committed("g1", "orders")
			args := append([]string{"--reset-offsets", "--group", "g1"}, c.args...)
			dry := e.mustRun(append(args, "--dry-run")...)
			if after := e.committed("g1", "orders"); len(after) != len(before) || after[0] != before[0] || after[1] != before[1] {
				t.Fatalf("--dry-run changed the offsets from %v to %v", before, after)
			}
			// Without --execute the plan is only shown, as Kafka does.
			if plain := e.mustRun(args...); plain != dry {
				t.Errorf("without --dry-run/--execute: %q, with --dry-run: %q", plain, dry)
			}
			if after := e.committed("g1", "orders"); after[0] != before[0] || after[1] != before[1] {
				t.Fatalf("a reset without --execute changed the offsets from %v to %v", before, after)
			}
			exec := e.mustRun(append(args, "--execute")...)
			if exec != dry {
				t.Errorf("--execute printed %q, --dry-run %q", exec, dry)
			}
			rows := tableRows(t, exec, "GROUP")
			for _, r := range rows {
				if len(r) != 4 || r[0] != "g1" || r[1] != "orders" {
					t.Errorf("reset row %q", r)
					continue
				}
				p := map[string]int32{"0": 0, "1": 1}[r[2]]
				if r[3] != strconv.FormatInt(c.want[p], 10) {
					t.Errorf("reset row %q: want NEW-OFFSET %d", r, c.want[p])
				}
			}
			e.wantCommitted("g1", "orders", c.want)
		})
	}
	t.Run("reset-by-duration-warns-on-fallback", func(t *testing.T) {
		e := e.with(t)
		out := e.mustRun("--reset-offsets", "--group", "g1", "--topic", "orders", "--by-duration", "PT1H", "--dry-run")
		if !strings.Contains(out, "Warn: Partition 0 from topic orders is empty. Falling back to latest known offset.") {
			t.Errorf("no fallback warning: %q", out)
		}
	})

	t.Run("export-and-from-file", func(t *testing.T) {
		e := e.with(t)
		out := e.mustRun("--reset-offsets", "--group", "g1", "--topic", "orders", "--to-offset", "2", "--dry-run", "--export")
		if want := "orders,0,2\norders,1,2\n\n"; out != want {
			t.Fatalf("--export: %q, want %q", out, want)
		}
		plan := filepath.Join(t.TempDir(), "plan.csv")
		if err := os.WriteFile(plan, []byte("orders,0,7\norders,1,5\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.mustRun("--reset-offsets", "--group", "g1", "--from-file", plan, "--execute")
		e.wantCommitted("g1", "orders", map[int32]int64{0: 7, 1: 5})
		// The group column format, with an offset past the end (clamped).
		if err := os.WriteFile(plan, []byte("g1,orders,0,8\ng1,orders,1,99\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out = e.mustRun("--reset-offsets", "--group", "g1", "--from-file", plan, "--execute", "--export")
		if want := "orders,0,8\norders,1,6\n\n"; out != want {
			t.Errorf("--from-file --export: %q, want %q", out, want)
		}
		e.wantCommitted("g1", "orders", map[int32]int64{0: 8, 1: 6})
		// A plan written by --export round-trips.
		out = e.mustRun("--reset-offsets", "--group", "g1", "--topic", "orders", "--to-earliest", "--dry-run", "--export")
		if err := os.WriteFile(plan, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		e.mustRun("--reset-offsets", "--group", "g1", "--from-file", plan, "--execute")
		e.wantCommitted("g1", "orders", map[int32]int64{0: 0, 1: 0})
		if err := os.WriteFile(plan, []byte("orders,zero,1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.run("--reset-offsets", "--group", "g1", "--from-file", plan, "--execute"); err == nil {
			t.Error("a malformed plan: want an error")
		}
	})

	t.Run("delete-offsets", func(t *testing.T) {
		e := e.with(t)
		e.mustRun("--reset-offsets", "--group", "g1", "--topic", "orders", "--to-offset", "3", "--execute")
		out := e.mustRun("--delete-offsets", "--group", "g1", "--topic", "orders:0")
		if !strings.HasPrefix(out, "Request succeed for deleting offsets with topic orders:0 group g1\n") {
			t.Errorf("--delete-offsets: %q", out)
		}
		rows := tableRows(t, out, "TOPIC")
		if len(rows) != 1 || strings.Join(rows[0], " ") != "orders 0 Successful" {
			t.Errorf("--delete-offsets rows: %q", out)
		}
		e.wantCommitted("g1", "orders", map[int32]int64{1: 3})
		out, _, err := e.run("--delete-offsets", "--group", "g1", "--topic", "nope")
		if err == nil || !strings.Contains(out, "Error: Encounter some partition level error") || !strings.Contains(out, "Not Provided") {
			t.Errorf("--delete-offsets of a missing topic: %q %v", out, err)
		}
		out = e.mustRun("--delete-offsets", "--group", "g1", "--topic", "orders")
		if rows := tableRows(t, out, "TOPIC"); len(rows) != 2 {
			t.Errorf("--delete-offsets of a whole topic: %q", out)
		}
		e.wantCommitted("g1", "orders", map[int32]int64{})
	})

	t.Run("delete", func(t *testing.T) {
		e := e.with(t)
		e.mustRun("--reset-offsets", "--group", "g1", "--topic", "orders", "--to-offset", "3", "--execute")
		out := e.mustRun("--delete", "--group", "g1")
		if out != "Deletion of requested consumer groups ('g1') was successful.\n" {
			t.Errorf("--delete: %q", out)
		}
		if out := e.mustRun("--list"); strings.Contains(out, "g1") {
			t.Errorf("--list after --delete: %q", out)
		}
		out, _, err := e.run("--describe", "--group", "g1")
		if err == nil || !strings.Contains(out, "Error: Consumer group 'g1' does not exist.") {
			t.Errorf("--describe of a deleted group: %q %v", out, err)
		}
		out, _, err = e.run("--delete", "--group", "g1")
		if err == nil || !strings.Contains(out, "* Group 'g1' could not be deleted due to:") {
			t.Errorf("--delete of a missing group: %q %v", out, err)
		}
	})
}
