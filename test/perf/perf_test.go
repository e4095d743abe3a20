package perf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat. Linux reports
// them in USER_HZ, which is 100 on every architecture Go supports.
const userHZ = 100

// phaseTimeout bounds one produce or consume phase. It is a hang guard, not
// an assertion about speed.
const phaseTimeout = 10 * time.Minute

// perfCase is one cell of the matrix.
type perfCase struct {
	recordSize int
	acks       int16 // 1 or -1
	partitions int32
	records    int
}

func (c perfCase) name() string {
	size := fmt.Sprintf("%dB", c.recordSize)
	if c.recordSize%1024 == 0 {
		size = fmt.Sprintf("%dKiB", c.recordSize/1024)
	}
	return fmt.Sprintf("%s/acks=%d/p=%d", size, c.acks, c.partitions)
}

// phase is what one produce or consume run measured.
type phase struct {
	records   int
	bytes     int64 // record value bytes
	elapsed   time.Duration
	brokerCPU time.Duration // utime+stime of the broker process
	clientCPU time.Duration // utime+stime of this test process
}

func (p phase) recordsPerSec() float64 { return float64(p.records) / p.elapsed.Seconds() }

// mbPerSec counts MB as 2^20 bytes of record values, as Kafka's perf tools do.
func (p phase) mbPerSec() float64 { return float64(p.bytes) / (1 << 20) / p.elapsed.Seconds() }

func (p phase) brokerMicrosPerRecord() float64 {
	return float64(p.brokerCPU.Nanoseconds()) / 1e3 / float64(p.records)
}

func (p phase) clientMicrosPerRecord() float64 {
	return float64(p.clientCPU.Nanoseconds()) / 1e3 / float64(p.records)
}

type result struct {
	c        perfCase
	idem     bool
	produce  phase
	consume  phase
	produced int64
	errs     int64
}

// TestDataPath runs the matrix against one broker process, one topic per
// case, and prints a Markdown table of the results.
func TestDataPath(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("a measurement, not a test: set SILKWORM_PERF=1 to run it")
	}
	n100 := 200_000
	if s := os.Getenv("SILKWORM_PERF_RECORDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("SILKWORM_PERF_RECORDS=%q: want a positive integer", s)
		}
		n100 = v
	}
	codecName := cmp.Or(os.Getenv("SILKWORM_PERF_COMPRESSION"), "none")
	codec, err := parseCodec(codecName)
	if err != nil {
		t.Fatal(err)
	}
	protocol, err := parseSecurity(os.Getenv("SILKWORM_PERF_SECURITY"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []perfCase
	for _, size := range []int{100, 1024} {
		n := n100
		if size > 100 {
			n = max(1, n100/4)
		}
		for _, acks := range []int16{1, -1} {
			for _, parts := range []int32{1, 6} {
				c := perfCase{recordSize: size, acks: acks, partitions: parts, records: n}
				if f := os.Getenv("SILKWORM_PERF_CASES"); f != "" && !strings.Contains(c.name(), f) {
					continue
				}
				cases = append(cases, c)
			}
		}
	}

	b := startBroker(t, protocol)
	ctx := context.Background()
	adm, err := kgo.NewClient(kgo.SeedBrokers(b.adminAddr))
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	defer adm.Close()

	var results []result
	for i, c := range cases {
		topic := fmt.Sprintf("perf-%d-%d-%d-%d", i, c.recordSize, -c.acks, c.partitions)
		resp, err := kadm.NewClient(adm).CreateTopic(ctx, c.partitions, 1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("%s: create topic %s: %v", c.name(), topic, err)
		}
		res := result{c: c, idem: c.acks == -1}
		stopProfile := b.profile(t, c.name())
		res.produce, res.produced, res.errs = runProduce(t, b, topic, c, codec)
		stopProfile()
		if res.errs > 0 {
			t.Errorf("%s: %d of %d records failed to produce", c.name(), res.errs, c.records)
		}
		stopProfile = b.profile(t, c.name()+"/consume")
		res.consume = runConsume(t, b, topic, c, res.produced)
		stopProfile()
		results = append(results, res)
		t.Logf("%s over %s: produce %.0f rec/s, %.3f µs broker CPU/rec; consume %.0f rec/s, %.3f µs broker CPU/rec",
			c.name(), protocol, res.produce.recordsPerSec(), res.produce.brokerMicrosPerRecord(),
			res.consume.recordsPerSec(), res.consume.brokerMicrosPerRecord())
	}
	report := table(results, protocol, codecName)
	// Printed rather than logged so the table can be pasted as it is.
	fmt.Println(report)
}

func parseCodec(s string) (kgo.CompressionCodec, error) {
	switch s {
	case "none":
		return kgo.NoCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("SILKWORM_PERF_COMPRESSION=%q: want none, snappy, lz4, zstd or gzip", s)
}

// runProduce sends c.records records of c.recordSize bytes with one
// asynchronous producer and waits until every one is acknowledged.
func runProduce(t *testing.T, b *processBroker, topic string, c perfCase, codec kgo.CompressionCodec) (phase, int64, int64) {
	t.Helper()
	opts := append(b.clientOpts(),
		kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytes(int32(envInt(t, "SILKWORM_PERF_BATCH_BYTES", 1<<20))),
		kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedRecords(100_000),
	)
	if c.acks == 1 {
		// franz-go's idempotent producer requires acks=all.
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	} else {
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("%s: producer: %v", c.name(), err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), phaseTimeout)
	defer cancel()
	// Connect and load metadata before the clock starts.
	if err := cl.Ping(ctx); err != nil {
		t.Fatalf("%s: ping: %v", c.name(), err)
	}

	value := make([]byte, c.recordSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	var ok, failed atomic.Int64
	var firstErr atomic.Pointer[error]
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, &err)
			return
		}
		ok.Add(1)
	}

	cpu0, self0 := b.cpu(t), selfCPU(t)
	start := time.Now()
	for range c.records {
		cl.Produce(ctx, &kgo.Record{Value: value}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("%s: flush: %v", c.name(), err)
	}
	elapsed := time.Since(start)
	cpu1, self1 := b.cpu(t), selfCPU(t)
	if p := firstErr.Load(); p != nil {
		t.Logf("%s: first produce error: %v", c.name(), *p)
	}
	return phase{
		records:   c.records,
		bytes:     int64(c.records) * int64(c.recordSize),
		elapsed:   elapsed,
		brokerCPU: cpu1 - cpu0,
		clientCPU: self1 - self0,
	}, ok.Load(), failed.Load()
}

// runConsume reads the topic from the start with one consumer until want
// records have arrived.
func runConsume(t *testing.T, b *processBroker, topic string, c perfCase, want int64) phase {
	t.Helper()
	cl, err := kgo.NewClient(append(b.clientOpts(),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)...)
	if err != nil {
		t.Fatalf("%s: consumer: %v", c.name(), err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), phaseTimeout)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		t.Fatalf("%s: ping: %v", c.name(), err)
	}

	var got, bytes int64
	cpu0, self0 := b.cpu(t), selfCPU(t)
	start := time.Now()
	for got < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%s: consumed %d of %d records before giving up: %v", c.name(), got, want, err)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("%s: fetch %s-%d: %v", c.name(), topic, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			got++
			bytes += int64(len(r.Value))
		})
	}
	elapsed := time.Since(start)
	cpu1, self1 := b.cpu(t), selfCPU(t)
	if got != want {
		t.Errorf("%s: consumed %d records, produced %d", c.name(), got, want)
	}
	return phase{
		records:   int(got),
		bytes:     bytes,
		elapsed:   elapsed,
		brokerCPU: cpu1 - cpu0,
		clientCPU: self1 - self0,
	}
}

func table(results []result, protocol, codec string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Security: %s. Compression: %s. MB = 2^20 bytes of record values. CPU = utime+stime per record.\n\n", protocol, codec)
	sb.WriteString("| case | idempotent | records | produce rec/s | produce MB/s | broker CPU µs/rec (produce) | client CPU µs/rec (produce) | consume rec/s | consume MB/s | broker CPU µs/rec (consume) | client CPU µs/rec (consume) |\n")
	sb.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&sb, "| %s | %v | %d | %.0f | %.1f | %.3f | %.3f | %.0f | %.1f | %.3f | %.3f |\n",
			r.c.name(), r.idem, r.c.records,
			r.produce.recordsPerSec(), r.produce.mbPerSec(), r.produce.brokerMicrosPerRecord(), r.produce.clientMicrosPerRecord(),
			r.consume.recordsPerSec(), r.consume.mbPerSec(), r.consume.brokerMicrosPerRecord(), r.consume.clientMicrosPerRecord())
	}
	return sb.String()
}

// selfCPU is the CPU time this test process (the clients) has used.
func selfCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processBroker is a silkworm server running as a child process. It is
// used from the test goroutine only.
type processBroker struct {
	addr       string // the listener the measured clients use
	adminAddr  string // a PLAINTEXT listener for setup (topics, users, quotas)
	sec        *perfSecurity
	node       *testcluster.Node
	profileDir string
}

// startBroker starts the broker process with a listener of protocol
// (PLAINTEXT, SSL or SASL_SSL) for the measured clients and, unless that is
// PLAINTEXT already, a PLAINTEXT listener for setup. overrides ("key=value")
// come before SILKWORM_PERF_OVERRIDES, which can replace them. It is
// stopped with SIGTERM when the test ends.
func startBroker(t *testing.T, protocol string, overrides ...string) *processBroker {
	t.Helper()
	bin := perfBrokerBin(t)
	tmp := t.TempDir()
	b := &processBroker{adminAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(testcluster.FreePort(t))),
		profileDir: os.Getenv("SILKWORM_PERF_PROFILE_DIR")}
	b.addr = b.adminAddr
	listeners := "PLAINTEXT://" + b.adminAddr
	if protocol != protoPlaintext {
		b.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(testcluster.FreePort(t)))
		listeners += "," + protocol + "://" + b.addr
	}
	b.sec = newPerfSecurity(t, protocol, tmp)
	b.node = &testcluster.Node{
		Name: "broker",
		Bin:  bin,
		Dir:  filepath.Join(tmp, "data"),
		Addr: b.addr,
		Log:  filepath.Join(tmp, "broker.log"),
		// Every listener opens at start: the data listener answering
		// means the admin one does too.
		Ready: func() error {
			c, err := net.DialTimeout("tcp", b.addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err
		},
	}
	b.node.Args = []string{"server",
		"--override", "listeners=" + listeners,
		"--override", "log.dirs=" + b.node.Dir,
		"--log-level", "warn",
	}
	for _, kv := range slices.Concat(b.sec.brokerOverrides(), overrides, strings.Fields(os.Getenv("SILKWORM_PERF_OVERRIDES"))) {
		b.node.Args = append(b.node.Args, "--override", kv)
	}
	t.Cleanup(func() {
		b.node.Terminate(t, 30*time.Second)
		if t.Failed() {
			out, _ := os.ReadFile(b.node.Log)
			t.Logf("broker log:\n%s", out)
		}
	})
	b.node.Start(t)
	b.sec.setUp(t, b.adminAddr, b.addr)
	return b
}

// cpu is the broker's utime+stime so far.
func (b *processBroker) cpu(t *testing.T) time.Duration {
	t.Helper()
	d, err := procCPU(b.node.Pid())
	if err != nil {
		t.Fatalf("broker cpu: %v", err)
	}
	return d
}

// procCPU reads utime+stime of pid from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read stat of %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces; fields are counted after
	// its closing parenthesis, which starts at field 3 (state).
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat of %d: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// utime and stime are fields 14 and 15, so 11 and 12 after field 3.
	if len(f) < 13 {
		return 0, fmt.Errorf("stat of %d: %d fields", pid, len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat of %d: %w", pid, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// profile starts `perf record` on the broker when SILKWORM_PERF_PROFILE_DIR
// is set, and returns the function that stops it.
func (b *processBroker) profile(t *testing.T, name string) func() {
	t.Helper()
	if b.profileDir == "" {
		return func() {}
	}
	if err := os.MkdirAll(b.profileDir, 0o755); err != nil {
		t.Fatalf("profile dir: %v", err)
	}
	out := filepath.Join(b.profileDir, strings.NewReplacer("/", "_", "=", "").Replace(name)+".perf.data")
	cmd := exec.Command("perf", "record", "-q", "-F", "999", "-g", "-p", strconv.Itoa(b.node.Pid()), "-o", out)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("perf record: %v", err)
	}
	// perf attaches asynchronously; wait until it has created its output.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := os.Stat(out); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("perf record did not start writing %s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Errorf("perf record: %v", err)
			}
		}
		t.Logf("%s: broker profile in %s", name, out)
	}
}

// buildBroker builds ./cmd/silkworm into a directory removed when the test
// ends.
func buildBroker(t *testing.T) string {
	t.Helper()
	bin, err := testcluster.Build(t.TempDir(), false)
	if err != nil {
		t.Fatalf("build broker: %v", err)
	}
	return bin
}
