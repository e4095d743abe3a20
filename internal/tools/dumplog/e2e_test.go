package dumplog

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/broker/brokertest"
)

// TestDumpBrokerSegments dumps the segment files an in-process broker wrote
// for 12 records produced one batch each, with an index entry per batch.
func TestDumpBrokerSegments(t *testing.T) {
	const n = 12
	c := brokertest.Cluster(t, "log.index.interval.bytes=1")
	dir := c.DataDir(1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("dump"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	for i := range n {
		r := &kgo.Record{Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "value-%d", i), Timestamp: base.Add(time.Duration(i) * time.Second)}
		if i == 3 {
			r.Headers = []kgo.RecordHeader{{Key: "h1", Value: []byte("x")}}
		}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	// A controlled shutdown: the segments are complete on disk.
	if err := c.Stop(1); err != nil {
		t.Fatal(err)
	}

	seg := filepath.Join(dir, "dump-0", "00000000000000000000")
	dump := func(args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := Run(args, &out, &errOut); err != nil {
			t.Fatalf("dump-log %q: %v", args, err)
		}
		return out.String(), errOut.String()
	}

	// Shallow: one batch line per record, each at a position.
	out, _ := dump("--files", seg+".log")
	batchLine := regexp.MustCompile(`(?m)^baseOffset: (\d+) lastOffset: (\d+) count: 1 .* position: (\d+) CreateTime: (\d+) size: \d+ magic: 2 compresscodec: none crc: \d+ isvalid: true$`)
	batches := batchLine.FindAllStringSubmatch(out, -1)
	if !strings.HasPrefix(out, "Dumping "+seg+".log\nLog starting offset: 0\n") || len(batches) != n {
		t.Fatalf("shallow dump has %d batch lines, want %d:\n%s", len(batches), n, out)
	}
	lastByPos := map[string]string{}
	for i, m := range batches {
		if m[1] != strconv.Itoa(i) || m[2] != strconv.Itoa(i) || m[4] != strconv.FormatInt(base.UnixMilli()+int64(i)*1000, 10) {
			t.Errorf("batch %d: %q", i, m[0])
		}
		lastByPos[m[3]] = m[2]
	}
	if strings.Contains(out, "| offset:") {
		t.Error("shallow dump prints records")
	}

	// Deep iteration: every record, no data.
	out, _ = dump("--files", seg+".log", "--deep-iteration")
	recLine := regexp.MustCompile(`(?m)^\| offset: (\d+) CreateTime: (\d+) keySize: (\d+) valueSize: (\d+) sequence: -?\d+ headerKeys: \[([^\]]*)\]$`)
	recs := recLine.FindAllStringSubmatch(out, -1)
	if len(recs) != n || strings.Contains(out, "payload:") {
		t.Fatalf("deep dump has %d record lines, want %d without payloads:\n%s", len(recs), n, out)
	}
	for i, m := range recs {
		wantHeaders := ""
		if i == 3 {
			wantHeaders = "h1"
		}
		if m[1] != strconv.Itoa(i) || m[3] != strconv.Itoa(len(fmt.Sprintf("key-%d", i))) || m[4] != strconv.Itoa(len(fmt.Sprintf("value-%d", i))) || m[5] != wantHeaders {
			t.Errorf("record %d: %q", i, m[0])
		}
	}

	// --print-data-log: keys and values.
	out, _ = dump("--files", seg+".log", "--print-data-log")
	for i := range n {
		if !strings.Contains(out, fmt.Sprintf(" key: key-%d payload: value-%d\n", i, i)) {
			t.Errorf("--print-data-log lacks record %d:\n%s", i, out)
		}
	}

	// .index: every entry points at the batch whose last offset it names.
	out, errOut := dump("--files", seg+".index")
	idxLine := regexp.MustCompile(`(?m)^offset: (\d+) position: (\d+)$`)
	entries := idxLine.FindAllStringSubmatch(out, -1)
	if len(entries) < n-1 || errOut != "" {
		t.Fatalf("index dump (want an entry per batch after the first): %q, stderr %q", out, errOut)
	}
	for _, e := range entries {
		if lastByPos[e[2]] != e[1] {
			t.Errorf("index entry %q: the batch at that position ends at offset %q", e[0], lastByPos[e[2]])
		}
	}
	if out, errOut := dump("--files", seg+".index", "--verify-index-only"); errOut != "" || strings.Contains(out, "offset:") {
		t.Errorf("--verify-index-only: %q, stderr %q", out, errOut)
	}
	if out, _ := dump("--files", seg+".index", "--index-sanity-check"); !strings.Contains(out, "passed sanity check") {
		t.Errorf("--index-sanity-check: %q", out)
	}

	// .timeindex: timestamps increase and each is its batch's max timestamp.
	out, errOut = dump("--files", seg+".timeindex")
	tiLine := regexp.MustCompile(`(?m)^timestamp: (\d+) offset: (\d+)$`)
	tentries := tiLine.FindAllStringSubmatch(out, -1)
	if len(tentries) < n-1 || errOut != "" {
		t.Fatalf("time index dump: %q, stderr %q", out, errOut)
	}
	for _, e := range tentries {
		off, _ := strconv.ParseInt(e[2], 10, 64)
		if want := strconv.FormatInt(base.UnixMilli()+off*1000, 10); e[1] != want {
			t.Errorf("time index entry %q: want timestamp %s", e[0], want)
		}
	}
	// Several files in one go, in order.
	out, _ = dump("--files", seg+".index,"+seg+".timeindex")
	if i, j := strings.Index(out, "Dumping "+seg+".index\n"), strings.Index(out, "Dumping "+seg+".timeindex\n"); i != 0 || j <= i {
		t.Errorf("two files: %q", out)
	}
}
