package perf

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
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

// storedStep is one row of TestStoredData.
type storedStep struct {
	storedBytes int64 // record value bytes stored after the step
	records     int
	elapsed     time.Duration
	cpu         time.Duration
	rssKiB      int64
	fds         int
}

// TestStoredData measures whether stored data costs anything (issue #15's
// sixth item): one broker (a single combined node), a topic of
// SILKWORM_PERF_STORED_PARTITIONS partitions (default 1,000), one acks=1
// producer with Kafka's default batching writing records of
// SILKWORM_PERF_STORED_RECORD_BYTES (default 1 KiB) in steps of
// SILKWORM_PERF_STORED_STEP_MB (default 1,024) until
// SILKWORM_PERF_STORED_GB of record values are stored. After each step it
// reports the step's records/s and broker CPU per record, and the broker's
// RSS (VmRSS) and open file descriptors. Then it stops the broker with
// SIGTERM and restarts it on the same data, and reports the shutdown time
// and the start-up time: from the process start until Metadata shows every
// partition with a leader. Runs only when SILKWORM_PERF_STORED_GB is set.
func TestStoredData(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("a measurement, not a test: set SILKWORM_PERF=1 to run it")
	}
	gbEnv := os.Getenv("SILKWORM_PERF_STORED_GB")
	if gbEnv == "" {
		t.Skip("set SILKWORM_PERF_STORED_GB (e.g. 20) to run it")
	}
	gb, err := strconv.ParseFloat(gbEnv, 64)
	if err != nil || gb <= 0 {
		t.Fatalf("SILKWORM_PERF_STORED_GB=%q: want a positive number", gbEnv)
	}
	total := int64(gb * (1 << 30))
	step := int64(envInt(t, "SILKWORM_PERF_STORED_STEP_MB", 1024)) << 20
	partitions := int32(envInt(t, "SILKWORM_PERF_STORED_PARTITIONS", 1000))
	recordSize := envInt(t, "SILKWORM_PERF_STORED_RECORD_BYTES", 1024)

	c := startPerfCluster(t, 1,
		"default.replication.factor=1", "min.insync.replicas=1",
		"offsets.topic.replication.factor=1",
		"transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
	)
	node := c.Nodes[0]
	var fs syscall.Statfs_t
	if err := syscall.Statfs(node.Dir, &fs); err != nil {
		t.Fatalf("statfs %s: %v", node.Dir, err)
	}
	if free := int64(fs.Bavail) * fs.Bsize; free < total+total/5+(1<<30) {
		t.Skipf("%s has %d MiB free, the measurement needs about %d MiB", node.Dir, free>>20, (total+total/5+(1<<30))>>20)
	}
	ctx := context.Background()
	adm := c.admin(t)
	const topic = "stored"
	c.createTopic(ctx, t, adm, topic, partitions, 1, nil)

	prod := c.Client(t,
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerLinger(kafkaDefaultLinger),
		kgo.ProducerBatchMaxBytes(clusterBatchBytes),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(100_000),
	)
	if err := prod.Ping(ctx); err != nil {
		t.Fatalf("producer ping: %v", err)
	}
	value := make([]byte, recordSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, &err)
		}
	}
	pid := func() int { return node.Pid() }
	sample := func(st *storedStep) {
		t.Helper()
		var err error
		if st.rssKiB, err = procRSSKiB(pid()); err != nil {
			t.Fatal(err)
		}
		if st.fds, err = procFDs(pid()); err != nil {
			t.Fatal(err)
		}
	}
	steps := []storedStep{{}}
	sample(&steps[0])
	pctx, cancel := context.WithTimeout(ctx, phaseTimeout)
	defer cancel()
	var stored int64
	for stored < total {
		n := int(min(step, total-stored) / int64(recordSize))
		if n == 0 {
			break
		}
		cpu0 := c.cpu(t)[0]
		start := time.Now()
		for range n {
			prod.Produce(pctx, &kgo.Record{Value: value}, done)
		}
		if err := prod.Flush(pctx); err != nil {
			t.Fatalf("flush: %v", err)
		}
		st := storedStep{records: n, elapsed: time.Since(start), cpu: c.cpu(t)[0] - cpu0}
		if f := failed.Load(); f > 0 {
			t.Fatalf("%d records failed to produce, first: %v", f, *firstErr.Load())
		}
		stored += int64(n) * int64(recordSize)
		st.storedBytes = stored
		sample(&st)
		steps = append(steps, st)
		t.Logf("%.2f GiB stored: %.0f rec/s, %.3f µs broker CPU/rec, RSS %d MiB, %d fds",
			float64(stored)/(1<<30), float64(n)/st.elapsed.Seconds(), microsPer(st.cpu, n), st.rssKiB>>10, st.fds)
	}

	// A clean restart on the same data.
	stopStart := time.Now()
	if err := node.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("stop broker: %v", err)
	}
	node.WaitExit(t, 2*time.Minute)
	shutdown := time.Since(stopStart)
	launched := time.Now()
	node.Launch(t)
	err = testcluster.Poll(5*time.Minute, func() error {
		if err := node.Exited(); err != nil {
			return testcluster.GiveUp(fmt.Errorf("broker %w during restart", err))
		}
		conn, err := net.DialTimeout("tcp", node.Addr, time.Second)
		if err != nil {
			return err
		}
		conn.Close()
		return nil
	})
	if err != nil {
		t.Fatalf("restart: %v\nlog:\n%s", err, testcluster.Tail(node.Log, 60))
	}
	listening := time.Since(launched)
	rcl, err := kgo.NewClient(kgo.SeedBrokers(node.Addr), kgo.MetadataMinAge(adminMetadataMinAge))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer rcl.Close()
	radm := kadm.NewClient(rcl)
	if err := testcluster.Poll(5*time.Minute, func() error { return topicLed(ctx, radm, topic, partitions, false) }); err != nil {
		t.Fatalf("after restart: %v\nlog:\n%s", err, testcluster.Tail(node.Log, 60))
	}
	led := time.Since(launched)
	var after storedStep
	sample(&after)
	fmt.Println(storedTable(steps, after, partitions, recordSize, shutdown, listening, led))
}

func storedTable(steps []storedStep, after storedStep, partitions int32, recordSize int, shutdown, listening, led time.Duration) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "One broker, one topic of %d partitions, %d B records, acks=1, %d B batches, linger %v. "+
		"CPU = broker utime+stime per record of the step. RSS = VmRSS, fds = entries of /proc/<pid>/fd, after the step.\n\n",
		partitions, recordSize, clusterBatchBytes, kafkaDefaultLinger)
	sb.WriteString("| stored GiB | step records | rec/s | MB/s | broker CPU µs/rec | RSS MiB | open fds |\n")
	sb.WriteString("|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, st := range steps {
		if st.records == 0 {
			fmt.Fprintf(&sb, "| %.2f | 0 | | | | %d | %d |\n", float64(st.storedBytes)/(1<<30), st.rssKiB>>10, st.fds)
			continue
		}
		fmt.Fprintf(&sb, "| %.2f | %d | %.0f | %.1f | %.3f | %d | %d |\n",
			float64(st.storedBytes)/(1<<30), st.records, float64(st.records)/st.elapsed.Seconds(),
			float64(st.records)*float64(recordSize)/(1<<20)/st.elapsed.Seconds(),
			microsPer(st.cpu, st.records), st.rssKiB>>10, st.fds)
	}
	fmt.Fprintf(&sb, "\n| restart | shutdown s | start to listening s | start to all partitions led s (goal < 5) | RSS MiB after | open fds after |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&sb, "| clean | %.2f | %.2f | %.2f | %d | %d |\n",
		shutdown.Seconds(), listening.Seconds(), led.Seconds(), after.rssKiB>>10, after.fds)
	return sb.String()
}

// procRSSKiB is VmRSS of pid from /proc/<pid>/status, in KiB.
func procRSSKiB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read status of %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest) // "123456 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("status of %d: VmRSS %q", pid, rest)
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("status of %d: VmRSS: %w", pid, err)
		}
		return v, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read status of %d: %w", pid, err)
	}
	return 0, fmt.Errorf("status of %d has no VmRSS", pid)
}

// procFDs counts the open file descriptors of pid (/proc/<pid>/fd).
func procFDs(pid int) (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("list fds of %d: %w", pid, err)
	}
	return len(entries), nil
}
