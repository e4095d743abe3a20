package offsets

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

// TestOffsetsEndToEnd runs get-offsets and delete-records against an
// in-process broker holding 5 records in a-0 (timestamps base+0s..4s), 3 in
// a-1 and none in b-0.
func TestOffsetsEndToEnd(t *testing.T) {
	addr := brokertest.Start(t)
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "b"); err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{Topic: "a", Partition: 0, Value: []byte("x"), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	for i := range 3 {
		recs = append(recs, &kgo.Record{Topic: "a", Partition: 1, Value: []byte("y"), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	get := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := RunGetOffsets(ctx, append([]string{"--bootstrap-server", addr}, args...), &out, &errOut); err != nil {
			t.Fatalf("get-offsets %q: %v (stderr %q)", args, err, errOut.String())
		}
		return out.String()
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "a"}, "a:0:5\na:1:3\n"},
		{[]string{"--topic", "a|b", "--time", "-1"}, "a:0:5\na:1:3\nb:0:0\n"},
		{[]string{"--topic", "a", "--time", "earliest"}, "a:0:0\na:1:0\n"},
		{[]string{"--topic", "a", "--partitions", "1"}, "a:1:3\n"},
		{[]string{"--topic-partitions", "a:0,b"}, "a:0:5\nb:0:0\n"},
		{[]string{"--topic-partitions", "a:1-"}, "a:1:3\n"},
		{[]string{"--topic", "a", "--time", "1700000002000"}, "a:0:2\na:1:2\n"},
		{[]string{"--topic", "a", "--time", "1700000004000"}, "a:0:4\n"}, // nothing that late in a-1
		{[]string{"--topic", "a", "--time", "max-timestamp"}, "a:0:4\na:1:2\n"},
		{[]string{"--topic", "a", "--exclude-internal-topics"}, "a:0:5\na:1:3\n"},
	} {
		if got := get(c.args...); got != c.want {
			t.Errorf("get-offsets %q: %q, want %q", c.args, got, c.want)
		}
	}
	// The broker-list alias and unmatched filters.
	var out, errOut bytes.Buffer
	if err := RunGetOffsets(ctx, []string{"--broker-list", addr, "--topic", "b"}, &out, &errOut); err != nil || out.String() != "b:0:0\n" {
		t.Errorf("--broker-list: %q %v", out.String(), err)
	}
	if err := RunGetOffsets(ctx, []string{"--bootstrap-server", addr, "--topic", "nope"}, &out, &errOut); err == nil {
		t.Error("an unmatched --topic: want an error")
	}

	// delete-records moves the log start offset; get-offsets sees it.
	del := func(json string) (string, error) {
		path := filepath.Join(t.TempDir(), "offsets.json")
		if err := os.WriteFile(path, []byte(json), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		err := RunDeleteRecords(ctx, []string{"--bootstrap-server", addr, "--offset-json-file", path}, &out, &errOut)
		return out.String(), err
	}
	got, err := del(`{"partitions":[{"topic":"a","partition":0,"offset":3},{"topic":"a","partition":1,"offset":-1}],"version":1}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "Executing records delete operation\nRecords delete operation completed:\npartition: a-0\tlow_watermark: 3\npartition: a-1\tlow_watermark: 3\n"
	if got != want {
		t.Errorf("delete-records: %q, want %q", got, want)
	}
	if got := get("--topic", "a", "--time", "-2"); got != "a:0:3\na:1:3\n" {
		t.Errorf("earliest after delete-records: %q", got)
	}
	got, err = del(`{"partitions":[{"topic":"a","partition":0,"offset":99}],"version":1}`)
	if err == nil || !strings.Contains(got, "partition: a-0\terror: ") {
		t.Errorf("delete past the high watermark: %q %v", got, err)
	}
	if got, err := del(`{"partitions":[{"topic":"nope","partition":0,"offset":1}],"version":1}`); err == nil {
		t.Errorf("delete of a missing topic: %q, want an error", got)
	}
}
