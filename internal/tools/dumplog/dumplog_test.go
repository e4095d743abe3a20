package dumplog

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/tools/golden"
)

// goldenDir is resolved before any test changes the working directory.
var goldenDir, _ = filepath.Abs("testdata")

// checkGolden compares got with testdata/name.golden, or rewrites it under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join(goldenDir, name+".golden"), got)
}

// writeSegment writes a small segment with base offset 100 into dir: a plain
// batch, an idempotent gzip batch with headers and a null key, and a
// transaction COMMIT marker; plus its .index and .timeindex.
func writeSegment(t *testing.T, dir string, trailing []byte) {
	t.Helper()
	b1 := record.BuildBatch(record.BuildOptions{BaseOffset: 100, PartitionLeaderEpoch: 3, FirstTimestamp: 1700000000000},
		[]record.Record{
			{Key: []byte("k1"), Value: []byte("hello")},
			{Key: []byte("k2"), Value: []byte("world"), TimestampDelta: 5},
		})
	b2 := record.BuildBatch(record.BuildOptions{BaseOffset: 102, PartitionLeaderEpoch: 3, FirstTimestamp: 1700000001000,
		Compression: record.CompressionGzip, Idempotent: true, ProducerID: 7, ProducerEpoch: 1, BaseSequence: 10},
		[]record.Record{
			{Value: []byte("no key"), Headers: []record.RecordHeader{{Key: "h1", Value: []byte("v")}, {Key: "h2"}}},
			{Key: []byte("tombstone")},
			{Key: []byte("k3"), Value: []byte("v3"), TimestampDelta: 2},
		})
	marker := make([]byte, 6)
	binary.BigEndian.PutUint32(marker[2:], 4) // version 0, coordinator epoch 4
	ctlKey := []byte{0, 0, 0, 1}              // version 0, type COMMIT
	b3 := record.BuildBatch(record.BuildOptions{BaseOffset: 105, PartitionLeaderEpoch: 3, FirstTimestamp: 1700000002000,
		Transactional: true, Control: true, ProducerID: 9, ProducerEpoch: 0, BaseSequence: -1},
		[]record.Record{{Key: ctlKey, Value: marker}})
	log := append(append(append([]byte{}, b1...), b2...), b3...)
	log = append(log, trailing...)
	name := filepath.Join(dir, "00000000000000000100")
	if err := os.WriteFile(name+".log", log, 0o644); err != nil {
		t.Fatal(err)
	}
	idx := make([]byte, 0, 32)
	idx = binary.BigEndian.AppendUint32(idx, 1) // offset 101 at position 0
	idx = binary.BigEndian.AppendUint32(idx, 0)
	idx = binary.BigEndian.AppendUint32(idx, 4) // offset 104 at b2's position
	idx = binary.BigEndian.AppendUint32(idx, uint32(len(b1)))
	idx = append(idx, make([]byte, 16)...) // preallocated zero tail
	if err := os.WriteFile(name+".index", idx, 0o644); err != nil {
		t.Fatal(err)
	}
	tidx := make([]byte, 0, 24)
	tidx = binary.BigEndian.AppendUint64(tidx, 1700000000005)
	tidx = binary.BigEndian.AppendUint32(tidx, 1)
	tidx = binary.BigEndian.AppendUint64(tidx, 1700000001002)
	tidx = binary.BigEndian.AppendUint32(tidx, 4)
	if err := os.WriteFile(name+".timeindex", tidx, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDumpGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"shallow", []string{"--files", "00000000000000000100.log"}},
		{"deep", []string{"--files", "00000000000000000100.log", "--deep-iteration"}},
		{"print-data-log", []string{"--files", "00000000000000000100.log", "--print-data-log"}},
		{"skip-metadata", []string{"--files", "00000000000000000100.log", "--print-data-log", "--skip-record-metadata"}},
		{"indexes", []string{"--files", "00000000000000000100.index,00000000000000000100.timeindex"}},
		{"verify-index", []string{"--files", "00000000000000000100.index", "--verify-index-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSegment(t, dir, nil)
			t.Chdir(dir)
			var out, errOut bytes.Buffer
			if err := Run(tc.args, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			if errOut.Len() > 0 {
				t.Errorf("unexpected stderr: %s", errOut.String())
			}
			checkGolden(t, tc.name, out.Bytes())
		})
	}
}

func TestDumpTrailingBytesAndMismatch(t *testing.T) {
	dir := t.TempDir()
	writeSegment(t, dir, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0})
	// Point the second index entry at the wrong batch.
	idx := filepath.Join(dir, "00000000000000000100.index")
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(data[12:], 0)
	if err := os.WriteFile(idx, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	if err := Run([]string{"--files", "00000000000000000100.log,00000000000000000100.index"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "trailing", out.Bytes())
	want := "Mismatches in :" + filepath.Join(dir, "00000000000000000100.index") + "\n  Index offset: 104, log offset: 101\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
}

func TestRunErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := Run(nil, &out, &errOut); err == nil {
		t.Error("no --files: want an error")
	}
	if err := Run([]string{"--files", "x.log", "--bogus"}, &out, &errOut); err == nil {
		t.Error("unknown option: want an error")
	}
	if err := Run([]string{"--files", filepath.Join(t.TempDir(), "00000000000000000000.log")}, &out, &errOut); err == nil {
		t.Error("missing file: want an error")
	}
	out.Reset()
	if err := Run([]string{"--help"}, &out, &errOut); err != nil || !bytes.Contains(out.Bytes(), []byte("--print-data-log")) {
		t.Errorf("--help: err %v, output %q", err, out.String())
	}
}
