package broker

// Fetch v0-v3: down-conversion for clients that cannot read v2 batches.
//
// Fetch v0 and v1 read magic 0 message sets, v2 and v3 magic 1 (Kafka's
// FetchRequest.version -> magic map). The stored v2 batches of the range
// read are converted by record.DownConvert (headers dropped, compression
// kept where the legacy format has the codec, control batches dropped) and
// the answer carries the converted bytes instead of a file region. As
// Kafka:
//
//   - a topic with message.downconversion.enable=false answers
//     UNSUPPORTED_VERSION for each of its partitions;
//   - a zstd batch at the fetch offset answers UNSUPPORTED_COMPRESSION_TYPE
//     (the conversion stops before a zstd batch further on);
//   - v0-v2 have a hard partition limit (no KIP-74): the stored range is
//     read within partition_max_bytes, and when even the first batch is
//     larger the answer is the first converted message cut at that limit,
//     a partial message that old clients answer by raising their fetch
//     size (or with "message too large");
//   - the first converted batch is always sent whole (Kafka's
//     LazyDownConversionRecords sizes the answer to hold it), later ones
//     only while they fit the limit.
//
// Deviations, both for safety: the read stops at the last stable offset
// (old clients are read_uncommitted but cannot see transaction markers, so
// they must not be handed records of a transaction that may still abort),
// and aborted transactional batches are dropped (Kafka sends them).
//
// Memory (KIP-283): each partition's answer is converted from at most its
// partition_max_bytes of stored data (or one batch), one batch decompressed
// at a time; the converted bytes are held until the response is written.
// A fetch therefore holds about twice the sum of its partitions' limits,
// never the backlog. Modern fetches (v4+) never come here and keep sendfile.

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
)

// fetchLegacyMagic is the message format a fetch version reads, or -1 for
// the versions that read v2 batches as stored.
func fetchLegacyMagic(version int16) int8 {
	switch {
	case version <= 1:
		return record.MagicV0
	case version <= 3:
		return record.MagicV1
	}
	return -1
}

// readFetchLegacy reads one partition for a Fetch v0-v3 into fp
// (fp.legacy) and returns the converted bytes found. readFetchPartition
// calls it once the leader epoch and the fetch offset are checked; maxBytes
// is the response limit (v3) and total what the fetch found so far.
func (b *Broker) readFetchLegacy(req *kmsg.FetchRequest, rp *fetchPartReq, ts *topicState, p *partition.Partition,
	fp *fetchPart, maxBytes, total int64) int64 {
	if !ts.cfg.MessageDownconversionEnable {
		fp.errorCode = kerr.UnsupportedVersion.Code
		return 0
	}
	magic := fetchLegacyMagic(req.Version)
	limit := min(int64(rp.maxBytes), maxBytes-total)
	minOne := total == 0
	if limit <= 0 && (!minOne || req.Version <= 2) {
		return 0
	}
	upTo := p.LastStablePosition()
	if rp.fetchOffset >= upTo.Offset {
		return 0
	}
	hard := req.Version <= 2
	res, err := p.Log.Read(rp.fetchOffset, int32(max(limit, 0)), upTo, minOne && !hard)
	if err != nil {
		fp.errorCode = errorCode(err)
		return 0
	}
	cut := false
	if res.Size == 0 && hard {
		// The first batch is larger than the hard limit: convert it and
		// send the start of its first message, as Kafka sent a partial one.
		if res, err = p.Log.Read(rp.fetchOffset, 1, upTo, true); err != nil {
			fp.errorCode = errorCode(err)
			return 0
		}
		cut = true
	}
	if res.Size == 0 {
		return 0
	}
	src, release := fetchLegacySource(res.Size)
	defer release()
	if _, err := res.File.ReadAt(src, res.Pos); err != nil {
		fp.errorCode = errorCode(err)
		return 0
	}
	aborted := p.Log.AbortedTransactions(rp.fetchOffset, upTo.Offset)
	opts := record.DownConvertOptions{
		Magic:           magic,
		FirstOffset:     rp.fetchOffset,
		MaxBytes:        int(max(limit, 1)),
		MaxUncompressed: maxUncompressed(int32(ts.cfg.MaxMessageBytes)),
	}
	if len(aborted) > 0 {
		opts.Skip = func(h *record.Header) bool { return fetchLegacyAborted(h, aborted) }
	}
	out, _, err := record.DownConvert(make([]byte, 0, res.Size+res.Size/4), src, opts)
	switch {
	case errors.Is(err, record.ErrDownConvertZstd):
		fp.errorCode = kerr.UnsupportedCompressionType.Code
		return 0
	case err != nil:
		b.log.Error("down-convert fetch", slog.String("topic", ts.name), slog.Int("partition", int(rp.partition)),
			slog.Int64("offset", rp.fetchOffset), slog.Any("error", err))
		fp.errorCode = kerr.CorruptMessage.Code
		return 0
	}
	if cut && int64(len(out)) > limit {
		out = out[:limit]
	}
	if len(out) == 0 {
		return 0
	}
	fp.legacy = out
	// read carries no file region, only the size (what metrics count as
	// bytes sent); encodeFetchSession sends legacy instead.
	fp.read = storage.ReadResult{Size: int64(len(out)), FirstOffset: res.FirstOffset}
	fp.hasData = true
	return int64(len(out))
}

// fetchLegacyAborted reports whether transactional batch h belongs to one
// of the aborted transactions (its producer's, begun at or before it and
// ended by an ABORT marker after it).
func fetchLegacyAborted(h *record.Header, aborted []storage.AbortedTxn) bool {
	if !h.IsTransactional() {
		return false
	}
	for _, a := range aborted {
		if a.ProducerID == h.ProducerID && a.FirstOffset <= h.BaseOffset && h.BaseOffset < a.LastOffset {
			return true
		}
	}
	return false
}

// fetchLegacySources holds the buffers (*[]byte) the stored range is read
// into before conversion, so that a busy old consumer does not allocate and
// zero a fresh MiB per fetch. Buffers above fetchLegacyPooledMax are left
// to the garbage collector.
var fetchLegacySources sync.Pool

const fetchLegacyPooledMax = 8 << 20

// fetchLegacySource returns a buffer of n bytes and the function that gives
// it back once the conversion is done.
func fetchLegacySource(n int64) ([]byte, func()) {
	p, ok := fetchLegacySources.Get().(*[]byte)
	if !ok || int64(cap(*p)) < n {
		if ok {
			fetchLegacySources.Put(p) // keep the smaller one for smaller reads
		}
		b := make([]byte, 0, max(n, 1<<20))
		p = &b
	}
	return (*p)[:n], func() {
		if cap(*p) <= fetchLegacyPooledMax {
			fetchLegacySources.Put(p)
		}
	}
}
