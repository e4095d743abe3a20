package broker

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/wire"
)

// BenchmarkFetchMiB measures a consumer fetch of 1 MiB (request max.bytes,
// split evenly as partition max bytes) of 16 KiB batches of 1 KiB records from
// one partition and from six, as a consumer that is behind gets: each
// partition is read from where the previous fetch ended, wrapping at the
// high watermark. Two depths, as in bench_test.go:
//
//   - Handler: the request decoded from its frame, located and encoded on
//     the benchmark goroutine (no socket); allocs/op is the handler's.
//
//   - Loopback: the whole path over TCP to the in-process broker, the
//     regions sent with sendfile; cpu-ns/record counts the client too.
//
//     go test ./internal/broker -run '^$' -bench 'FetchMiB' -benchtime 2000x
func BenchmarkFetchMiB(b *testing.B) {
	for _, parts := range []int{1, 6} {
		brk, ps := startFetchBenchBroker(b, parts)
		hws := make([]int64, parts)
		for i, p := range ps {
			hws[i] = benchFill1KiB(b, p, 32/parts+2)
		}
		batch, n := benchBatch(1024)
		batchSize, perBatch := int64(len(batch)), int64(n)
		b.Run(fmt.Sprintf("p=%d/Handler", parts), func(b *testing.B) {
			offsets := make([]int64, parts)
			// The offsets cycle: encode each request once, so that
			// allocs/op is the broker's alone.
			frames := map[[6]int64][]byte{}
			var bytes int64
			b.ReportAllocs()
			for b.Loop() {
				var key [6]int64
				copy(key[:], offsets)
				frame, ok := frames[key]
				if !ok {
					frame = benchFetchFrameParts(offsets)[4:]
					frames[key] = frame
				}
				topics, total := benchFetch(b, brk, frame, offsets)
				bytes += total
				benchAdvance(b, topics, offsets, hws, batchSize, perBatch)
			}
			b.SetBytes(bytes / int64(max(b.N, 1)))
		})
		b.Run(fmt.Sprintf("p=%d/Loopback", parts), func(b *testing.B) {
			rc := benchDial(b, brk.Addr())
			resp := kmsg.NewPtrFetchResponse()
			resp.Version = benchFetchVersion
			offsets := make([]int64, parts)
			var records, bytes int64
			b.ReportAllocs()
			cpu0 := benchCPUTime(b)
			for b.Loop() {
				rc.send(benchFetchFrameParts(offsets))
				rc.recv(resp, true)
				if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != parts {
					b.Fatalf("fetch response has %d topics", len(resp.Topics))
				}
				for _, fp := range resp.Topics[0].Partitions {
					if fp.ErrorCode != 0 {
						b.Fatalf("fetch partition %d: error code %d", fp.Partition, fp.ErrorCode)
					}
					if len(fp.RecordBatches) == 0 {
						continue
					}
					n, next := benchCountBatches(b, fp.RecordBatches)
					records += n
					bytes += int64(len(fp.RecordBatches))
					if next >= hws[fp.Partition] {
						next = 0
					}
					offsets[fp.Partition] = next
				}
			}
			b.StopTimer()
			b.SetBytes(bytes / int64(max(b.N, 1)))
			benchReport(b, records, cpu0)
		})
	}
}

// benchAdvance moves each partition's offset past what a Handler fetch
// returned (whole 16 KiB batches of 1 KiB records), wrapping at hws.
func benchAdvance(b *testing.B, topics []fetchTopic, offsets, hws []int64, batchSize, perBatch int64) {
	for _, t := range topics {
		for _, fp := range t.parts {
			if !fp.hasData {
				continue
			}
			if fp.read.Size%batchSize != 0 {
				b.Fatalf("partition %d: read %d bytes, not whole %d-byte batches", fp.partition, fp.read.Size, batchSize)
			}
			next := offsets[fp.partition] + fp.read.Size/batchSize*perBatch
			if next >= hws[fp.partition] {
				next = 0
			}
			offsets[fp.partition] = next
		}
	}
}

// startFetchBenchBroker starts an in-process broker with a topic of parts
// partitions and returns it with them. Both are closed when b ends.
func startFetchBenchBroker(b *testing.B, parts int) (*Broker, []*partition.Partition) {
	b.Helper()
	return startBenchTopicBroker(b, parts, "listeners=PLAINTEXT://127.0.0.1:0")
}

// startBenchTopicBroker starts an in-process broker with the settings of
// overrides, which must include a PLAINTEXT listener (its setup client),
// creates the bench topic with parts partitions and returns the broker
// with them. Both are closed when b ends.
func startBenchTopicBroker(b *testing.B, parts int, overrides ...string) (*Broker, []*partition.Partition) {
	b.Helper()
	cfg, err := config.Load("", append([]string{"log.dirs=" + b.TempDir()}, overrides...))
	if err != nil {
		b.Fatalf("config: %v", err)
	}
	brk, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatalf("new broker: %v", err)
	}
	if err := brk.Start(); err != nil {
		brk.Close()
		b.Fatalf("start broker: %v", err)
	}
	b.Cleanup(func() {
		if err := brk.Close(); err != nil {
			b.Errorf("close broker: %v", err)
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(brk.ListenerAddr("PLAINTEXT")))
	if err != nil {
		b.Fatalf("client: %v", err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(b.Context(), int32(parts), 1, nil, benchTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		b.Fatalf("create topic: %v", err)
	}
	ps := make([]*partition.Partition, parts)
	for i := range ps {
		if _, ps[i] = brk.partition(benchTopic, int32(i)); ps[i] == nil {
			b.Fatalf("topic created but partition %d not found", i)
		}
	}
	return brk, ps
}

// benchFetch decodes a fetch frame (without its size), reads its
// partitions and encodes the response, as handleFetch does for a fetch
// that needs no wait, and returns the partitions read and their bytes.
// at names the fetch in a failure.
func benchFetch(b *testing.B, brk *Broker, frame []byte, at any) ([]fetchTopic, int64) {
	req := kmsg.NewPtrFetchRequest()
	hdr, err := wire.ParseRequest(frame, req)
	if err != nil {
		b.Fatal(err)
	}
	r := &request{hdr: hdr, kreq: req, received: time.Now()}
	topics, total, anyErr := brk.readFetch(r, req, -1)
	if anyErr || total == 0 {
		b.Fatalf("fetch at %v: error %v, %d bytes", at, anyErr, total)
	}
	if resp := encodeFetch(r, topics); resp.Size() < total {
		b.Fatalf("response of %d bytes for %d bytes of records", resp.Size(), total)
	}
	return topics, total
}

// benchFill1KiB appends 16 KiB batches of 1 KiB records until p holds
// about mib MiB, and returns its log end offset.
func benchFill1KiB(b *testing.B, p *partition.Partition, mib int) int64 {
	b.Helper()
	batch, _ := benchBatch(1024)
	for p.Log.Size() < int64(mib)<<20 {
		if _, err := p.AppendAsLeader(append([]byte(nil), batch...), 0); err != nil {
			b.Fatalf("fill partition: %v", err)
		}
	}
	return p.HighWatermark()
}

// benchFetchFrameParts is a consumer fetch of max.bytes 1 MiB of
// partitions 0..len(offsets)-1 of the bench topic, each from its offset
// with a partition max bytes of 1 MiB / len(offsets), so that every
// partition contributes.
func benchFetchFrameParts(offsets []int64) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.Version = benchFetchVersion
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = benchTopic
	for i, off := range offsets {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = int32(i)
		rp.FetchOffset = off
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		rp.PartitionMaxBytes = int32((1 << 20) / len(offsets))
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 0)
}

// BenchmarkParkedFetchWake measures an append of a one-record batch while
// eight consumer fetches of six partitions are parked waiting for more
// bytes than the benchmark appends (fetch.min.bytes set high, as for
// throughput): cpu-ns/append counts what the parked fetches cost the
// broker besides the append (each append asks their wake conditions, and
// wakes none of them).
//
//	go test ./internal/broker -run '^$' -bench 'ParkedFetchWake' -benchtime 20000x
func BenchmarkParkedFetchWake(b *testing.B) {
	const parts, waiters = 6, 8
	brk, ps := startFetchBenchBroker(b, parts)
	req := kmsg.NewPtrFetchRequest()
	req.Version = benchFetchVersion
	req.ReplicaID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 600_000, math.MaxInt32, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = benchTopic
	for i := range parts {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LogStartOffset, rp.PartitionMaxBytes = int32(i), -1, -1, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 0)
	for range waiters {
		benchDial(b, brk.Addr()).send(append([]byte(nil), frame...))
	}
	deadline := time.Now().Add(time.Minute)
	for _, p := range ps {
		for n, _ := p.Waiting(); n != waiters; n, _ = p.Waiting() {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d fetches parked", n, waiters)
			}
			time.Sleep(time.Millisecond)
		}
	}
	batch := oneBatch()
	b.ReportAllocs()
	cpu0 := benchCPUTime(b)
	i := 0
	for b.Loop() {
		if _, err := ps[i%parts].AppendAsLeader(append([]byte(nil), batch...), 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64((benchCPUTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/append")
}
