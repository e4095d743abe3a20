package broker

// Benchmarks of one produce request through the broker at the shapes of
// issue 15's figures (acks=all, one broker, so the local append satisfies
// the ISR):
//
//   - 100B: six partitions, each a 16 KiB batch of 100-byte records;
//   - 1KiB: one partition, a 1 MiB batch of 1 KiB records;
//   - Small: one partition, a 1 KiB batch of 100-byte records, where the
//     cost per request (frame read, hand-offs, response) dominates.
//
// "Handler" decodes the request frame and runs the handler on the
// benchmark goroutine (the allocations per request are the decode's and
// the handler's); "Loopback" sends the frames over TCP to the broker, up to
// benchWindow in flight on one connection, and is the whole network path
// (frame read, decode, handler, response write). Each reports ns/op,
// B/op and allocs/op per request, and ns/record and cpu-ns/record (CPU
// of the whole process, client included).
//
//	go test ./internal/broker -run '^$' -bench 'ProduceRequest' -benchtime 2000x

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/wire"
)

// produceBenchShape is one produce request shape.
type produceBenchShape struct {
	name       string
	valueSize  int
	batchBytes int
	partitions int32
}

var produceBenchShapes = []produceBenchShape{
	{"100B", 100, 16 << 10, 6},
	{"1KiB", 1024, 1 << 20, 1},
	{"Small", 100, 1 << 10, 1},
}

// buildBenchBatch builds an uncompressed batch of as many valueSize-byte
// records (null keys) as fit in batchBytes, and returns it with its count.
func buildBenchBatch(valueSize, batchBytes int) ([]byte, int) {
	value := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz", valueSize/26+1)[:valueSize])
	per := record.BuildBatch(record.BuildOptions{}, []record.Record{{Value: value}})
	n := max(1, (batchBytes-record.HeaderSize)/(len(per)-record.HeaderSize))
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{TimestampDelta: int64(i), Value: value}
	}
	for {
		b := record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli()}, recs)
		if len(b) <= batchBytes || len(recs) == 1 {
			return b, len(recs)
		}
		recs = recs[:len(recs)-1]
	}
}

// produceBenchFrame is the whole frame (size prefix included) of an
// acks=all produce request carrying batch to each of the shape's
// partitions of the bench topic, and the records it carries.
func produceBenchFrame(s produceBenchShape) ([]byte, int) {
	batch, n := buildBenchBatch(s.valueSize, s.batchBytes)
	req := kmsg.NewPtrProduceRequest()
	req.Version = benchProduceVersion
	req.Acks = -1
	req.TimeoutMillis = 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = benchTopic
	for p := range s.partitions {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = p
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 0), n * int(s.partitions)
}

// startProduceBench starts a broker whose bench topic has the shape's
// partitions.
func startProduceBench(b *testing.B, s produceBenchShape) *Broker {
	b.Helper()
	brk, _ := startBenchBroker(b)
	if s.partitions == 1 {
		return brk
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brk.Addr()))
	if err != nil {
		b.Fatalf("client: %v", err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreatePartitions(b.Context(), int(s.partitions-1), benchTopic)
	if err == nil {
		var r kadm.CreatePartitionsResponse
		if r, err = resp.On(benchTopic, nil); err == nil {
			err = r.Err
		}
	}
	if err != nil {
		b.Fatalf("add partitions: %v", err)
	}
	for p := range s.partitions {
		for {
			if _, part := brk.partition(benchTopic, p); part != nil && part.IsLeader() {
				break
			}
			time.Sleep(time.Millisecond) // a benchmark's setup, polling
		}
	}
	return brk
}

func BenchmarkProduceRequest(b *testing.B) {
	for _, s := range produceBenchShapes {
		b.Run(s.name+"/Handler", func(b *testing.B) {
			brk := startProduceBench(b, s)
			frame, n := produceBenchFrame(s)
			body := frame[4:]
			c := &conn{out: make(chan *wire.Response, 1), done: make(chan struct{})}
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			cpu0 := benchCPUTime(b)
			b.ResetTimer()
			for b.Loop() {
				kreq := kmsg.NewPtrProduceRequest()
				hdr, err := wire.ParseRequest(body, kreq)
				if err != nil {
					b.Fatal(err)
				}
				brk.handle(&request{c: c, hdr: hdr, kreq: kreq, size: len(body), received: time.Now()})
				if out := <-c.out; out.Size() == 0 {
					b.Fatal("empty response")
				}
			}
			b.StopTimer()
			benchReport(b, int64(b.N)*int64(n), cpu0)
		})
		b.Run(s.name+"/Loopback", func(b *testing.B) {
			brk := startProduceBench(b, s)
			frame, n := produceBenchFrame(s)
			rc := benchDial(b, brk.Addr())
			resp := kmsg.NewPtrProduceResponse()
			resp.Version = benchProduceVersion
			check := func() {
				rc.recv(resp, true)
				for _, t := range resp.Topics {
					for _, p := range t.Partitions {
						if p.ErrorCode != 0 {
							b.Fatalf("produce to partition %d: error code %d", p.Partition, p.ErrorCode)
						}
					}
				}
			}
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			cpu0 := benchCPUTime(b)
			b.ResetTimer()
			inflight := 0
			for b.Loop() {
				if inflight == benchWindow {
					check()
					inflight--
				}
				rc.send(frame)
				inflight++
			}
			for ; inflight > 0; inflight-- {
				check()
			}
			b.StopTimer()
			benchReport(b, int64(b.N)*int64(n), cpu0)
		})
	}
}
