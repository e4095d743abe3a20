package dumplog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/silkworm/silkworm/internal/record"
)

// Options are the parsed command-line options of dump-log.
type Options struct {
	Files              []string // .log, .index and .timeindex files, in order
	PrintDataLog       bool     // print keys and payloads (implies DeepIteration)
	DeepIteration      bool     // print every record, not only batches
	VerifyIndexOnly    bool     // check indexes against the log without printing entries
	IndexSanityCheck   bool     // only check that index files are well formed
	SkipRecordMetadata bool     // omit the offset/timestamp/size part of record lines
	MaxBytes           int      // read at most this many bytes of each .log file
	MaxMessageSize     int      // largest batch looked at when checking an index
}

// DefaultOptions returns Kafka's defaults.
func DefaultOptions() Options {
	return Options{MaxBytes: math.MaxInt32, MaxMessageSize: 5 * 1024 * 1024}
}

// Validate reports a missing or invalid option.
func (o *Options) Validate() error {
	if len(o.Files) == 0 {
		return errors.New("missing required argument \"[files]\"")
	}
	if o.MaxBytes <= 0 {
		return fmt.Errorf("--max-bytes must be positive, got %d", o.MaxBytes)
	}
	if o.MaxMessageSize <= 0 {
		return fmt.Errorf("--max-message-size must be positive, got %d", o.MaxMessageSize)
	}
	return nil
}

// pair is one (expected, found) couple of offsets or timestamps reported on
// stderr after all files were dumped.
type pair struct{ a, b int64 }

// dumper holds the errors collected across files, reported at the end in
// Kafka's wording. Not safe for concurrent use.
type dumper struct {
	opts   Options
	out    *bufio.Writer
	errOut io.Writer

	indexMismatches  map[string][]pair // offset index entry vs batch last offset
	nonConsecutive   map[string][]pair // record offsets that skip
	timeMismatches   map[string][]pair // index timestamp vs batch max timestamp
	timeOutOfOrder   map[string][]pair // index timestamp vs previous one
	timeNotFound     map[string][]pair // indexed offset vs batch found
	mismatchOrder    []string
	nonConsecOrder   []string
	timeErrFileOrder []string
}

// Dump dumps every file of opts to stdout, Kafka's way, and the problems it
// found to stderr. It fails only when a file cannot be read at all.
func Dump(opts Options, stdout, stderr io.Writer) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.PrintDataLog {
		opts.DeepIteration = true
	}
	d := &dumper{
		opts: opts, out: bufio.NewWriter(stdout), errOut: stderr,
		indexMismatches: map[string][]pair{}, nonConsecutive: map[string][]pair{},
		timeMismatches: map[string][]pair{}, timeOutOfOrder: map[string][]pair{}, timeNotFound: map[string][]pair{},
	}
	defer d.out.Flush()
	for _, f := range opts.Files {
		fmt.Fprintf(d.out, "Dumping %s\n", f)
		var err error
		switch filepath.Ext(f) {
		case ".log":
			err = d.dumpLog(f)
		case ".index":
			err = d.dumpIndex(f)
		case ".timeindex":
			err = d.dumpTimeIndex(f)
		default:
			d.out.Flush()
			fmt.Fprintf(stderr, "Ignoring unknown file %s\n", f)
		}
		if err != nil {
			return err
		}
	}
	d.out.Flush()
	d.printErrors()
	return nil
}

func (d *dumper) printErrors() {
	for _, f := range d.mismatchOrder {
		fmt.Fprintf(d.errOut, "Mismatches in :%s\n", f)
		for _, p := range d.indexMismatches[f] {
			fmt.Fprintf(d.errOut, "  Index offset: %d, log offset: %d\n", p.a, p.b)
		}
	}
	for _, f := range d.timeErrFileOrder {
		if ps := d.timeMismatches[f]; len(ps) > 0 {
			fmt.Fprintf(d.errOut, "Found timestamp mismatch in :%s\n", f)
			for _, p := range ps {
				fmt.Fprintf(d.errOut, "  Index timestamp: %d, log timestamp: %d\n", p.a, p.b)
			}
		}
		if ps := d.timeOutOfOrder[f]; len(ps) > 0 {
			fmt.Fprintf(d.errOut, "Found out of order timestamp in :%s\n", f)
			for _, p := range ps {
				fmt.Fprintf(d.errOut, "  Index timestamp: %d, Previously indexed timestamp: %d\n", p.a, p.b)
			}
		}
		if ps := d.timeNotFound[f]; len(ps) > 0 {
			fmt.Fprintln(d.errOut, "The following indexed offsets are not found in the log.")
			for _, p := range ps {
				fmt.Fprintf(d.errOut, "Indexed offset: %d, found log offset: %d\n", p.a, p.b)
			}
		}
	}
	for _, f := range d.nonConsecOrder {
		fmt.Fprintf(d.errOut, "Non-consecutive offsets in %s\n", f)
		for _, p := range d.nonConsecutive[f] {
			fmt.Fprintf(d.errOut, "  %d is followed by %d\n", p.a, p.b)
		}
	}
}

func addPair(m map[string][]pair, order *[]string, file string, p pair) {
	if _, ok := m[file]; !ok {
		*order = append(*order, file)
	}
	m[file] = append(m[file], p)
}

func (d *dumper) addTimeErr(m map[string][]pair, file string, p pair) {
	known := len(d.timeMismatches[file])+len(d.timeOutOfOrder[file])+len(d.timeNotFound[file]) > 0
	if !known {
		d.timeErrFileOrder = append(d.timeErrFileOrder, file)
	}
	m[file] = append(m[file], p)
}

// baseOffset parses the segment base offset from a file name such as
// 00000000000000000042.index.
func baseOffset(path string) (int64, error) {
	name := filepath.Base(path)
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	off, err := strconv.ParseInt(name, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("file name %s does not start with a base offset: %w", filepath.Base(path), err)
	}
	return off, nil
}

// siblingPath is the path of the segment file with the same base name and
// another suffix (".log", ".index").
func siblingPath(path, suffix string) string {
	dir, name := filepath.Split(path)
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	return filepath.Join(dir, name+suffix)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// batch is one batch as found in a .log file.
type batch struct {
	pos int64
	h   record.Header
	raw []byte // the whole batch
}

// readBatches splits the first limit bytes of a log into whole batches. It
// returns the batches and the number of bytes they cover; a trailing partial
// or corrupt batch ends the walk.
func readBatches(data []byte, limit int) ([]batch, int64) {
	if limit < len(data) {
		data = data[:limit]
	}
	var out []batch
	var pos int64
	for int64(len(data))-pos >= record.HeaderSize {
		h, err := record.ParseHeader(data[pos:])
		if err != nil {
			break
		}
		size := h.Size()
		if h.BatchLength < record.HeaderSize-record.LogOverhead || pos+size > int64(len(data)) {
			break
		}
		out = append(out, batch{pos: pos, h: h, raw: data[pos : pos+size]})
		pos += size
	}
	return out, pos
}

func timestampType(h *record.Header) string {
	if h.Attributes&record.AttrTimestampLogAppend != 0 {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// recordTimestamp is the timestamp Kafka reports for a record of the batch.
func recordTimestamp(h *record.Header, r *record.Record) int64 {
	if h.Attributes&record.AttrTimestampLogAppend != 0 {
		return h.MaxTimestamp
	}
	return h.FirstTimestamp + r.TimestampDelta
}

// recordSequence is Kafka's per-record sequence: base + delta, wrapping.
func recordSequence(h *record.Header, delta int32) int32 {
	if h.BaseSequence < 0 {
		return -1
	}
	s := int64(h.BaseSequence) + int64(delta)
	if s > math.MaxInt32 {
		s -= math.MaxInt32 + 1
	}
	return int32(s)
}

func (d *dumper) dumpLog(path string) error {
	start, err := baseOffset(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "Log starting offset: %d\n", start)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read log segment: %w", err)
	}
	batches, valid := readBatches(data, d.opts.MaxBytes)
	lastOffset := int64(-1)
	for i := range batches {
		b := &batches[i]
		d.printBatch(b)
		if !d.opts.DeepIteration {
			continue
		}
		recs, err := record.Records(b.raw, 0)
		if err != nil {
			return fmt.Errorf("decode batch at position %d of %s: %w", b.pos, path, err)
		}
		for j := range recs {
			r := &recs[j]
			off := b.h.BaseOffset + int64(r.OffsetDelta)
			if lastOffset != -1 && off != lastOffset+1 {
				addPair(d.nonConsecutive, &d.nonConsecOrder, absPath(path), pair{lastOffset, off})
			}
			lastOffset = off
			d.printRecord(b, r, off)
		}
	}
	trailing := int64(len(data)) - valid
	if trailing > 0 && d.opts.MaxBytes == math.MaxInt32 {
		fmt.Fprintf(d.out, "Found %d invalid bytes at the end of %s\n", trailing, filepath.Base(path))
	}
	return nil
}

func (d *dumper) printBatch(b *batch) {
	h := &b.h
	horizon := "OptionalLong.empty"
	if h.Attributes&record.AttrDeleteHorizon != 0 {
		horizon = fmt.Sprintf("OptionalLong[%d]", h.FirstTimestamp)
	}
	valid := record.ComputeCRC(b.raw) == h.CRC
	fmt.Fprintf(d.out, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s",
		h.BaseOffset, h.LastOffset(), h.RecordCount, h.BaseSequence, h.LastSequence(), h.ProducerID, h.ProducerEpoch,
		h.PartitionLeaderEpoch, h.IsTransactional(), h.IsControl(), horizon)
	fmt.Fprintf(d.out, " position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
		b.pos, timestampType(h), h.MaxTimestamp, h.Size(), h.Magic, h.Compression(), h.CRC, valid)
}

// controlTypes are Kafka's ControlRecordType names by id.
var controlTypes = map[int16]string{
	0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
	4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS",
}

func (d *dumper) printRecord(b *batch, r *record.Record, off int64) {
	prefix := "| "
	if !d.opts.SkipRecordMetadata {
		fmt.Fprintf(d.out, "%soffset: %d %s: %d keySize: %d valueSize: %d", prefix, off, timestampType(&b.h),
			recordTimestamp(&b.h, r), size(r.Key), size(r.Value))
		prefix = " "
		keys := make([]string, len(r.Headers))
		for i, h := range r.Headers {
			keys[i] = h.Key
		}
		fmt.Fprintf(d.out, " sequence: %d headerKeys: [%s]", recordSequence(&b.h, r.OffsetDelta), strings.Join(keys, ","))
		if b.h.IsControl() {
			d.printControl(r)
		}
	}
	if d.opts.PrintDataLog && !b.h.IsControl() {
		if r.Key != nil {
			fmt.Fprintf(d.out, "%skey: %s", prefix, r.Key)
		}
		if r.Value != nil {
			fmt.Fprintf(d.out, " payload: %s", r.Value)
		}
	}
	fmt.Fprintln(d.out)
}

func (d *dumper) printControl(r *record.Record) {
	id := int16(-1)
	if len(r.Key) >= 4 {
		id = int16(binary.BigEndian.Uint16(r.Key[2:4]))
	}
	name, ok := controlTypes[id]
	if !ok {
		name = "UNKNOWN"
	}
	if (id == 0 || id == 1) && len(r.Value) >= 6 {
		epoch := int32(binary.BigEndian.Uint32(r.Value[2:6]))
		fmt.Fprintf(d.out, " endTxnMarker: %s coordinatorEpoch: %d", name, epoch)
		return
	}
	fmt.Fprintf(d.out, " controlType: %s(%d)", name, id)
}

func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// indexEntries reads a whole index file as fixed-size entries.
func indexEntries(path string, entrySize int) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	if len(data)%entrySize != 0 {
		return nil, fmt.Errorf("index file %s is corrupt: size %d is not a multiple of %d", path, len(data), entrySize)
	}
	out := make([][]byte, 0, len(data)/entrySize)
	for i := 0; i+entrySize <= len(data); i += entrySize {
		out = append(out, data[i:i+entrySize])
	}
	return out, nil
}

func (d *dumper) dumpIndex(path string) error {
	base, err := baseOffset(path)
	if err != nil {
		return err
	}
	entries, err := indexEntries(path, 8)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		fmt.Fprintf(d.out, "%s is empty.\n", path)
		return nil
	}
	if d.opts.IndexSanityCheck {
		if err := sanityCheckOffsets(entries); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Fprintf(d.out, "%s passed sanity check.\n", path)
		return nil
	}
	log, err := os.ReadFile(siblingPath(path, ".log"))
	if err != nil {
		return fmt.Errorf("read the log of index %s: %w", path, err)
	}
	for i, e := range entries {
		off := base + int64(int32(binary.BigEndian.Uint32(e)))
		pos := int64(int32(binary.BigEndian.Uint32(e[4:])))
		if off == base && i > 0 {
			return nil // the zero-filled tail of a preallocated index
		}
		found := int64(-1)
		if pos >= 0 && pos < int64(len(log)) {
			if bs, _ := readBatches(log[pos:], d.opts.MaxMessageSize); len(bs) > 0 {
				found = bs[0].h.LastOffset()
			}
		}
		if found != off {
			addPair(d.indexMismatches, &d.mismatchOrder, absPath(path), pair{off, found})
		}
		if !d.opts.VerifyIndexOnly {
			fmt.Fprintf(d.out, "offset: %d position: %d\n", off, pos)
		}
	}
	return nil
}

func sanityCheckOffsets(entries [][]byte) error {
	last := int32(-1)
	for i, e := range entries {
		rel := int32(binary.BigEndian.Uint32(e))
		if i > 0 && rel == 0 {
			return nil
		}
		if rel <= last && i > 0 {
			return fmt.Errorf("corrupt index: entry %d has offset %d after %d", i, rel, last)
		}
		last = rel
	}
	return nil
}

func (d *dumper) dumpTimeIndex(path string) error {
	base, err := baseOffset(path)
	if err != nil {
		return err
	}
	entries, err := indexEntries(path, 12)
	if err != nil {
		return err
	}
	if d.opts.IndexSanityCheck {
		fmt.Fprintf(d.out, "%s passed sanity check.\n", path)
		return nil
	}
	log, err := os.ReadFile(siblingPath(path, ".log"))
	if err != nil {
		return fmt.Errorf("read the log of time index %s: %w", path, err)
	}
	batches, _ := readBatches(log, math.MaxInt32)
	file := absPath(path)
	prevTS := int64(-1)
	for i, e := range entries {
		ts := int64(binary.BigEndian.Uint64(e))
		off := base + int64(int32(binary.BigEndian.Uint32(e[8:])))
		if off == base && i > 0 {
			return nil
		}
		var b *batch
		for j := range batches {
			if batches[j].h.LastOffset() >= off {
				b = &batches[j]
				break
			}
		}
		switch {
		case b == nil:
			d.addTimeErr(d.timeNotFound, file, pair{off, -1})
		case b.h.LastOffset() != off:
			d.addTimeErr(d.timeNotFound, file, pair{off, b.h.LastOffset()})
		default:
			maxTS := int64(-1)
			if recs, err := record.Records(b.raw, 0); err == nil {
				for k := range recs {
					maxTS = max(maxTS, recordTimestamp(&b.h, &recs[k]))
				}
			}
			if maxTS != ts {
				d.addTimeErr(d.timeMismatches, file, pair{ts, maxTS})
			}
			if prevTS >= ts {
				d.addTimeErr(d.timeOutOfOrder, file, pair{ts, prevTS})
			}
		}
		if !d.opts.VerifyIndexOnly {
			fmt.Fprintf(d.out, "timestamp: %d offset: %d\n", ts, off)
		}
		prevTS = ts
	}
	return nil
}
