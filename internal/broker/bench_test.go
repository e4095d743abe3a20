package broker

// Benchmarks of the produce and fetch data paths, each at two depths:
//
//   - "Loopback": a real TCP connection on 127.0.0.1 to an in-process
//     broker, driven by a minimal client that writes pre-encoded request
//     frames (up to five in flight, as Kafka clients pipeline) and decodes
//     only the small response parts it checks. This is the whole broker
//     path: frame read, decode, the request queue and io goroutine hand-off,
//     validation, the append or sendfile, response encoding and write. A
//     franz-go client is not used because its own CPU cost would dominate
//     the profile.
//   - "Handler": the same request decoded from its frame and passed to the
//     handler on the benchmark goroutine, with no socket and no goroutine
//     hand-off; the difference to Loopback is the cost of the network layer.
//
// Every benchmark reports ns/record (wall time per record) and
// cpu-ns/record (CPU time of the whole process, client included, per
// record, from getrusage). Produce batches come from a plain producer
// (producer id -1), so the same bytes can be sent again; idempotent
// producer-state checks are not on this path.
//
// Profile with, for example:
//
//	go test ./internal/broker -run '^$' -bench 'Produce100B/Loopback' -benchtime 20000x -cpuprofile cpu.out
//	go tool pprof -top -nodecount 30 internal/broker/broker.test cpu.out

import (
	"bufio"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/wire"
)

const (
	benchTopic          = "bench"
	benchBatchBytes     = 16 << 10
	benchWindow         = 5 // requests in flight per connection, like max.in.flight
	benchProduceVersion = 9 // flexible, the oldest version franz-go and Java send today
	benchFetchVersion   = 12
)

// startBenchBroker starts an in-process broker with one single-partition
// topic and returns it with that partition. Both are closed when b ends.
func startBenchBroker(b *testing.B) (*Broker, *partition.Partition) {
	brk, ps := startFetchBenchBroker(b, 1)
	return brk, ps[0]
}

// benchBatch builds an uncompressed batch of as many valueSize-byte records
// (null keys) as fit in benchBatchBytes, and returns it with its count.
func benchBatch(valueSize int) ([]byte, int) {
	value := make([]byte, valueSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	var recs []record.Record
	var batch []byte
	for {
		next := append(recs, record.Record{TimestampDelta: int64(len(recs)), Value: value})
		b := record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli()}, next)
		if len(b) > benchBatchBytes && len(recs) > 0 {
			return batch, len(recs)
		}
		recs, batch = next, b
	}
}

// benchProduceFrame encodes a Produce request for partition 0 of the bench
// topic carrying batch, as a whole frame with its size prefix.
func benchProduceFrame(batch []byte) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version = benchProduceVersion
	req.Acks = 1
	req.TimeoutMillis = 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = benchTopic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = 0
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 0)
}

// benchFetchFrame encodes a Fetch request for partition 0 of the bench topic at
// offset, asking for up to 1 MiB and not waiting.
func benchFetchFrame(offset int64) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.Version = benchFetchVersion
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = benchTopic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = 0
	rp.FetchOffset = offset
	rp.CurrentLeaderEpoch = -1
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 0)
}

// benchClient speaks the Kafka protocol over one connection with
// pre-encoded frames. It is used by one goroutine.
type benchClient struct {
	b    *testing.B
	nc   net.Conn
	br   *bufio.Reader
	corr int32
	buf  []byte
}

func benchDial(b *testing.B, addr string) *benchClient {
	b.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatalf("dial: %v", err)
	}
	b.Cleanup(func() { nc.Close() })
	return &benchClient{b: b, nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
}

// send writes frame with the next correlation id patched in.
func (rc *benchClient) send(frame []byte) {
	rc.corr++
	binary.BigEndian.PutUint32(frame[8:], uint32(rc.corr))
	if _, err := rc.nc.Write(frame); err != nil {
		rc.b.Fatalf("write request: %v", err)
	}
}

// recv reads the next response frame and decodes its body into resp
// (flexible says whether its header carries tagged fields).
func (rc *benchClient) recv(resp kmsg.Response, flexible bool) {
	frame, err := wire.ReadFrame(rc.br, rc.buf, 64<<20)
	if err != nil {
		rc.b.Fatalf("read response: %v", err)
	}
	rc.buf = frame
	r := kbin.Reader{Src: frame}
	r.Int32() // correlation id; responses come in request order
	if flexible {
		kmsg.SkipTags(&r)
	}
	if err := resp.ReadFrom(r.Src); err != nil {
		rc.b.Fatalf("decode %s: %v", kmsg.NameForKey(resp.Key()), err)
	}
}

// benchCPUTime is the CPU time this process has used.
func benchCPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchReport reports ns/record and cpu-ns/record for records handled
// since cpu0 was taken.
func benchReport(b *testing.B, records int64, cpu0 time.Duration) {
	if records == 0 {
		return
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
	b.ReportMetric(float64((benchCPUTime(b)-cpu0).Nanoseconds())/float64(records), "cpu-ns/record")
}

func benchCheckProduce(b *testing.B, resp *kmsg.ProduceResponse) {
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		b.Fatalf("produce response has %d topics", len(resp.Topics))
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 {
		b.Fatalf("produce: error code %d: %v", p.ErrorCode, p.ErrorMessage)
	}
}

// benchProduceLoopback sends b.N produce requests of one 16 KiB batch of
// valueSize-byte records over TCP, up to benchWindow in flight.
func benchProduceLoopback(b *testing.B, valueSize int) {
	brk, _ := startBenchBroker(b)
	batch, n := benchBatch(valueSize)
	frame := benchProduceFrame(batch)
	rc := benchDial(b, brk.Addr())
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = benchProduceVersion
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	cpu0 := benchCPUTime(b)
	b.ResetTimer()
	inflight := 0
	for b.Loop() {
		if inflight == benchWindow {
			rc.recv(resp, true)
			benchCheckProduce(b, resp)
			inflight--
		}
		rc.send(frame)
		inflight++
	}
	for ; inflight > 0; inflight-- {
		rc.recv(resp, true)
		benchCheckProduce(b, resp)
	}
	b.StopTimer()
	benchReport(b, int64(b.N)*int64(n), cpu0)
}

// benchProduceHandler decodes the produce frame and runs handleProduce
// on the benchmark goroutine, b.N times.
func benchProduceHandler(b *testing.B, valueSize int) {
	brk, _ := startBenchBroker(b)
	batch, n := benchBatch(valueSize)
	frame := benchProduceFrame(batch)[4:]
	c := &conn{out: make(chan *wire.Response, 1), done: make(chan struct{})}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	cpu0 := benchCPUTime(b)
	b.ResetTimer()
	for b.Loop() {
		kreq := kmsg.NewPtrProduceRequest()
		hdr, err := wire.ParseRequest(frame, kreq)
		if err != nil {
			b.Fatal(err)
		}
		brk.handle(&request{c: c, hdr: hdr, kreq: kreq, handled: make(chan struct{}), received: time.Now()})
		if out := <-c.out; out.Size() == 0 {
			b.Fatal("empty response")
		}
	}
	b.StopTimer()
	benchReport(b, int64(b.N)*int64(n), cpu0)
}

// BenchmarkProduce100B is a produce request for one partition with a 16
// KiB batch of 100-byte records.
func BenchmarkProduce100B(b *testing.B) {
	b.Run("Loopback", func(b *testing.B) { benchProduceLoopback(b, 100) })
	b.Run("Handler", func(b *testing.B) { benchProduceHandler(b, 100) })
}

// BenchmarkProduce1KiB is BenchmarkProduce100B with 1 KiB records.
func BenchmarkProduce1KiB(b *testing.B) {
	b.Run("Loopback", func(b *testing.B) { benchProduceLoopback(b, 1024) })
	b.Run("Handler", func(b *testing.B) { benchProduceHandler(b, 1024) })
}

// benchFill appends batches of 16 KiB (100-byte records) until the
// partition holds about mib MiB, and returns its log end offset.
func benchFill(b *testing.B, p *partition.Partition, mib int) int64 {
	b.Helper()
	batch, _ := benchBatch(100)
	for p.Log.Size() < int64(mib)<<20 {
		if _, err := p.AppendAsLeader(append([]byte(nil), batch...), 0); err != nil {
			b.Fatalf("fill partition: %v", err)
		}
	}
	return p.HighWatermark()
}

// benchCountBatches counts the records of the whole batches in a fetch
// response's record bytes and returns the offset after the last one.
func benchCountBatches(b *testing.B, batches []byte) (count, next int64) {
	next = -1
	for len(batches) >= record.HeaderSize {
		h, err := record.ParseHeader(batches)
		if err != nil || h.Size() > int64(len(batches)) {
			break // a partial batch at the end of the response
		}
		count += int64(h.RecordCount)
		next = h.LastOffset() + 1
		batches = batches[h.Size():]
	}
	if next < 0 {
		b.Fatal("fetch returned no whole batch")
	}
	return count, next
}

// BenchmarkFetch100B reads a partition of 16 KiB batches of 100-byte
// records in 1 MiB fetches, wrapping to the start at the high watermark.
// Loopback exercises sendfile; Handler only locates the data and encodes
// the response (no bytes are moved).
func BenchmarkFetch100B(b *testing.B) {
	b.Run("Loopback", func(b *testing.B) {
		brk, p := startBenchBroker(b)
		hw := benchFill(b, p, 64)
		rc := benchDial(b, brk.Addr())
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = benchFetchVersion
		var records, offset int64
		b.ReportAllocs()
		cpu0 := benchCPUTime(b)
		b.ResetTimer()
		for b.Loop() {
			rc.send(benchFetchFrame(offset))
			rc.recv(resp, true)
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				b.Fatalf("fetch response has %d topics", len(resp.Topics))
			}
			fp := resp.Topics[0].Partitions[0]
			if fp.ErrorCode != 0 {
				b.Fatalf("fetch at %d: error code %d", offset, fp.ErrorCode)
			}
			n, next := benchCountBatches(b, fp.RecordBatches)
			b.SetBytes(int64(len(fp.RecordBatches)))
			records += n
			if offset = next; offset >= hw {
				offset = 0
			}
		}
		b.StopTimer()
		benchReport(b, records, cpu0)
	})
	b.Run("Handler", func(b *testing.B) {
		brk, p := startBenchBroker(b)
		hw := benchFill(b, p, 64)
		batch, n := benchBatch(100)
		batchSize, perBatch := int64(len(batch)), int64(n)
		var records, offset int64
		b.ReportAllocs()
		cpu0 := benchCPUTime(b)
		b.ResetTimer()
		for b.Loop() {
			_, total := benchFetch(b, brk, benchFetchFrame(offset)[4:], offset)
			// Every batch is alike and reads start at batch boundaries,
			// so the records served follow from the byte count.
			batches := total / batchSize
			if batches == 0 {
				b.Fatalf("fetch at %d returned no whole batch", offset)
			}
			records += batches * perBatch
			next := offset + batches*perBatch
			b.SetBytes(total)
			if offset = next; offset >= hw {
				offset = 0
			}
		}
		b.StopTimer()
		benchReport(b, records, cpu0)
	})
}

// BenchmarkPageCacheWrite is the floor under the produce path: one 16 KiB
// pwrite per op into a file in the benchmark's temp dir, either appending
// (the page cache needs new pages, as a growing segment does) or
// overwriting the same 16 KiB (pages already cached). ns/record counts a
// 100-byte record as 110 bytes of batch, so it compares with
// BenchmarkProduce100B. The Append64KiB and Append256KiB cases append the
// same bytes in larger writes: the kernel's cost per byte falls with the
// write size (fewer syscalls and larger page-cache folios), which no
// broker can use without holding acknowledged batches back.
func BenchmarkPageCacheWrite(b *testing.B) {
	for _, mode := range []string{"Append", "Overwrite", "Append64KiB", "Append256KiB"} {
		b.Run(mode, func(b *testing.B) {
			size := benchBatchBytes
			switch mode {
			case "Append64KiB":
				size = 64 << 10
			case "Append256KiB":
				size = 256 << 10
			}
			f, err := os.Create(filepath.Join(b.TempDir(), "floor"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, size)
			for i := range buf {
				buf[i] = byte(i)
			}
			b.SetBytes(int64(len(buf)))
			cpu0 := benchCPUTime(b)
			var pos int64
			for b.Loop() {
				if _, err := f.WriteAt(buf, pos); err != nil {
					b.Fatal(err)
				}
				if mode != "Overwrite" {
					pos += int64(len(buf))
				}
			}
			b.StopTimer()
			benchReport(b, int64(b.N)*int64(len(buf))/110, cpu0)
		})
	}
}
