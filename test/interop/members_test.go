package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// Consumer-group members as child processes: kcat -G, the kafka-python
// and kafkajs scripts' group mode. Each member reports its assignment and
// the records it consumed; the tests poll those reports.

// groupBrokerOverrides make groups and the cleaner react at once: no
// initial rebalance delay, a 100 ms cleaner backoff.
var groupBrokerOverrides = []string{
	"group.initial.rebalance.delay.ms=0",
	"log.cleaner.backoff.ms=100",
}

const (
	// sessionTimeoutMs is the members' session timeout: a SIGKILLed
	// member's partitions move after about this long.
	sessionTimeoutMs = 6000
	// groupWaitTimeout bounds the polling for a group to settle; a hang
	// guard, not an assertion about speed.
	groupWaitTimeout = 90 * time.Second
)

// memberOpts are the settings of one member.
type memberOpts struct {
	reset      string // auto.offset.reset: earliest, latest or none
	maxRecords int    // > 0: commit exactly this many records, then exit
}

// groupClient starts group members of one client kind.
type groupClient struct {
	name string
	// noneUnsupported says why the client has no auto.offset.reset=none;
	// empty if it has.
	noneUnsupported string
	// command returns the member's program and arguments.
	command func(addr, topic, group string, o memberOpts) []string
	// sticky says the assignor keeps partitions where they are, so a
	// newcomer to a group with a member per partition gets none.
	sticky bool
	// stdoutLine and stderrLine fold one output line into the member's
	// state; they are called with m.mu held.
	stdoutLine func(m *groupMember, line string) error
	stderrLine func(m *groupMember, line string)
}

// groupMember is one running member process. Its report fields are
// written by the output readers and read by the test under mu.
type groupMember struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process and its readers are done

	mu         sync.Mutex
	assigned   bool    // holds an assignment (false during a rebalance)
	partitions []int32 // the assignment, sorted, when assigned
	records    []record
	errs       []string // errors the client reported
	badLines   []string // output we could not parse
	stderr     []string // last lines of stderr
	exitErr    error    // set before exited is closed
}

// memberReport is a copy of a member's state.
type memberReport struct {
	assigned   bool
	partitions []int32
	records    []record
	errs       []string
	badLines   []string
}

func (m *groupMember) report() memberReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	return memberReport{m.assigned, slices.Clone(m.partitions), slices.Clone(m.records), slices.Clone(m.errs), slices.Clone(m.badLines)}
}

func (m *groupMember) isExited() bool {
	select {
	case <-m.exited:
		return true
	default:
		return false
	}
}

// startMember starts a member of group on topic; it is SIGKILLed when the
// test ends if still running.
func startMember(t *testing.T, gc groupClient, name, addr, topic, group string, o memberOpts) *groupMember {
	t.Helper()
	argv := gc.command(addr, topic, group, o)
	cmd := exec.Command(argv[0], argv[1:]...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("%s stdout: %v", name, err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatalf("%s stderr: %v", name, err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	m := &groupMember{name: name, cmd: cmd, exited: make(chan struct{})}
	var readers sync.WaitGroup
	readers.Add(2)
	scan := func(r io.Reader, handle func(string)) {
		defer readers.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			m.mu.Lock()
			handle(sc.Text())
			m.mu.Unlock()
		}
	}
	go scan(stdout, func(line string) {
		if err := gc.stdoutLine(m, line); err != nil {
			m.badLines = append(m.badLines, fmt.Sprintf("%q: %v", line, err))
		}
	})
	go scan(stderr, func(line string) {
		m.stderr = append(m.stderr, line)
		if len(m.stderr) > 40 {
			m.stderr = m.stderr[1:]
		}
		if gc.stderrLine != nil {
			gc.stderrLine(m, line)
		}
	})
	go func() {
		readers.Wait() // Wait must not run before the pipes are drained
		err := cmd.Wait()
		m.mu.Lock()
		m.exitErr = err
		m.mu.Unlock()
		close(m.exited)
	}()
	t.Cleanup(func() {
		m.signal(syscall.SIGKILL)
		<-m.exited
		if t.Failed() {
			m.mu.Lock()
			t.Logf("%s (exit %v) stderr, last lines:\n%s", m.name, m.exitErr, strings.Join(m.stderr, "\n"))
			m.mu.Unlock()
		}
	})
	return m
}

func (m *groupMember) signal(sig syscall.Signal) {
	if err := m.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		panic(fmt.Sprintf("signal %s: %v", m.name, err))
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (m *groupMember) kill() {
	m.signal(syscall.SIGKILL)
	<-m.exited
}

// waitExit waits for the member to exit by itself and returns its exit
// error.
func (m *groupMember) waitExit(t *testing.T) error {
	t.Helper()
	select {
	case <-m.exited:
	case <-time.After(groupWaitTimeout): // hang guard
		t.Fatalf("%s did not exit", m.name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.exitErr
}

// addRecord parses a record key s-NNNNNN and keeps the record.
func (m *groupMember) addRecordLocked(r record) error {
	if _, ok := seqOfSeqKey(r.Key); !ok {
		return fmt.Errorf("unexpected key %q", r.Key)
	}
	m.records = append(m.records, r)
	return nil
}

// scriptGroupClient drives the group mode of interop_client.py or .js.
func scriptGroupClient(name string, command []string) groupClient {
	return groupClient{
		name: name,
		command: func(addr, topic, group string, o memberOpts) []string {
			args := append(slices.Clone(command), "group", "--bootstrap", addr, "--topic", topic, "--group", group,
				"--offset-reset", o.reset, "--session-timeout-ms", strconv.Itoa(sessionTimeoutMs), "--timeout", "600")
			if o.maxRecords > 0 {
				args = append(args, "--max-records", strconv.Itoa(o.maxRecords))
			}
			return args
		},
		stdoutLine: func(m *groupMember, line string) error {
			var ev struct {
				Event      string  `json:"event"`
				Partitions []int32 `json:"partitions"`
				Partition  int32   `json:"partition"`
				Offset     int64   `json:"offset"`
				Key        *string `json:"key"`
				Value      *string `json:"value"`
				Error      string  `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				return err
			}
			switch ev.Event {
			case "assigned":
				m.assigned, m.partitions = true, slices.Sorted(slices.Values(ev.Partitions))
			case "revoked":
				m.assigned, m.partitions = false, nil
			case "record":
				if ev.Key == nil || ev.Value == nil {
					return errors.New("record without key or value")
				}
				return m.addRecordLocked(record{Partition: ev.Partition, Offset: ev.Offset, Key: *ev.Key, Value: *ev.Value})
			case "error":
				m.errs = append(m.errs, ev.Error)
			default:
				return fmt.Errorf("unknown event %q", ev.Event)
			}
			return nil
		},
	}
}

// kcatGroupClient runs kcat's balanced consumer (-G). Records come as -J
// lines on stdout (unbuffered, -u, so a SIGKILL loses none that librdkafka
// may have committed); rebalances and errors as "%" lines on stderr.
// cooperative selects librdkafka's cooperative-sticky assignor (incremental
// rebalancing, KIP-429) instead of its default range,roundrobin.
func kcatGroupClient(cooperative bool) groupClient {
	name, strategy := "kcat", "range,roundrobin"
	if cooperative {
		name, strategy = "kcat-cooperative", "cooperative-sticky"
	}
	return groupClient{
		name:   name,
		sticky: cooperative,
		command: func(addr, topic, group string, o memberOpts) []string {
			reset := o.reset
			if reset == "none" {
				reset = "error" // librdkafka's name for it
			}
			args := []string{"kcat", "-b", addr, "-G", group, "-J", "-u",
				"-X", "session.timeout.ms=" + strconv.Itoa(sessionTimeoutMs),
				"-X", "heartbeat.interval.ms=" + strconv.Itoa(sessionTimeoutMs/6),
				"-X", "auto.offset.reset=" + reset,
				"-X", "partition.assignment.strategy=" + strategy}
			if o.maxRecords > 0 {
				// kcat exits after -c records; librdkafka commits the
				// offsets stored for the records it handed out on close.
				args = append(args, "-c", strconv.Itoa(o.maxRecords))
			}
			return append(args, topic)
		},
		stdoutLine: func(m *groupMember, line string) error {
			var km kcatMessage
			if err := json.Unmarshal([]byte(line), &km); err != nil {
				return err
			}
			if km.Key == nil || km.Payload == nil {
				return errors.New("record without key or value")
			}
			return m.addRecordLocked(record{Partition: km.Partition, Offset: km.Offset, Key: *km.Key, Value: *km.Payload})
		},
		stderrLine: func(m *groupMember, line string) {
			// % Group g rebalanced (memberid m): assigned: t [0], t [3]
			// % Group g rebalanced (memberid m): revoked: t [0], t [3]
			// % ERROR: Topic t [5] error: ...
			// and with cooperative-sticky:
			// % Group g rebalanced: incremental assignment of 2 partition(s) (memberid m, COOPERATIVE rebalance protocol): t [0], t [3]
			// % Group g rebalanced: incremental revoke of 1 partition(s) (...): t [3]
			parse := func(list string) []int32 {
				var ps []int32
				for _, f := range strings.Split(list, ",") {
					_, p, ok := strings.Cut(f, "[")
					if !ok {
						continue
					}
					n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(p), "]"))
					if err != nil {
						m.badLines = append(m.badLines, fmt.Sprintf("%q: %v", line, err))
						return nil
					}
					ps = append(ps, int32(n))
				}
				return ps
			}
			_, incremental, _ := strings.Cut(line, "rebalance protocol):")
			switch {
			case strings.HasPrefix(line, "% ERROR"):
				m.errs = append(m.errs, line)
			case !strings.HasPrefix(line, "% Group "):
			case strings.Contains(line, "): assigned:"):
				_, list, _ := strings.Cut(line, "): assigned:")
				m.assigned, m.partitions = true, slices.Sorted(slices.Values(parse(list)))
			case strings.Contains(line, "): revoked:"):
				m.assigned, m.partitions = false, nil
			case strings.Contains(line, ": incremental assignment of "):
				m.assigned = true
				m.partitions = slices.Sorted(slices.Values(append(m.partitions, parse(incremental)...)))
			case strings.Contains(line, ": incremental revoke of "):
				revoked := parse(incremental)
				m.partitions = slices.DeleteFunc(m.partitions, func(p int32) bool { return slices.Contains(revoked, p) })
			}
		},
	}
}

// kcatMissing, kafkaPythonMissing and kafkaJSMissing say why a client
// cannot run here; nil when it can.
func kcatMissing() error {
	_, err := exec.LookPath("kcat")
	return err
}

func kafkaPythonMissing() error {
	py := pythonInterpreter()
	if _, err := exec.LookPath(py); err != nil {
		return fmt.Errorf("kafka-python: no %s: %w", py, err)
	}
	if out, err := exec.Command(py, "-c", "import kafka").CombinedOutput(); err != nil {
		return fmt.Errorf("kafka-python: %s cannot import kafka: %w: %s", py, err, out)
	}
	return nil
}

func kafkaJSMissing() error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("kafkajs: node not found: %w", err)
	}
	if _, err := os.Stat(filepath.Join("js", "node_modules", "kafkajs", "package.json")); err != nil {
		return fmt.Errorf("kafkajs: not installed in test/interop/js: %w", err)
	}
	return nil
}

func scriptPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// seqKey and seqValue are the key and value of sequence record seq.
func seqKey(seq int) string   { return fmt.Sprintf("s-%06d", seq) }
func seqValue(seq int) string { return fmt.Sprintf("v-%06d", seq) }

func seqOfSeqKey(key string) (int, bool) {
	n, ok := strings.CutPrefix(key, "s-")
	if !ok {
		return 0, false
	}
	seq, err := strconv.Atoi(n)
	return seq, err == nil && seq >= 0
}

// createTopicWith creates a topic with the given partition count and
// configs, and waits until every partition has a leader.
func createTopicWith(t *testing.T, addr, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	adm, done := admin(t, addr)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	err = testcluster.Poll(brokerStartTimeout, func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		td, ok := md.Topics[topic]
		if !ok || td.Err != nil || len(td.Partitions) != int(partitions) {
			return fmt.Errorf("topic metadata: present=%v err=%v partitions=%d", ok, td.Err, len(td.Partitions))
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return fmt.Errorf("partition %d: leader %d, err %v", p.Partition, p.Leader, p.Err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("topic %s not ready: %v", topic, err)
	}
}

// produceSeq produces records seq from..to-1 (keys s-NNNNNN) with
// franz-go. partition >= 0 sends them all there; -1 spreads them round
// robin.
func produceSeq(t *testing.T, addr, topic string, from, to int, partition int32) {
	t.Helper()
	// Uncompressed: Debian's kafka-python has no snappy, franz-go's default.
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression())}
	if partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	} else {
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("franz-go producer: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	rs := make([]*kgo.Record, 0, to-from)
	for seq := from; seq < to; seq++ {
		rs = append(rs, &kgo.Record{Key: []byte(seqKey(seq)), Value: []byte(seqValue(seq)), Partition: max(partition, 0)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce s-%06d..s-%06d to %s: %v", from, to-1, topic, err)
	}
}

// committedOffsets returns group's committed offset per partition of topic.
func committedOffsets(addr, group, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("fetch offsets of %s: %w", group, err)
	}
	if err := resp.Error(); err != nil {
		return nil, fmt.Errorf("fetch offsets of %s: %w", group, err)
	}
	out := make(map[int32]int64)
	for p, o := range resp[topic] {
		if o.Err != nil {
			return nil, fmt.Errorf("fetch offsets of %s, partition %d: %w", group, p, o.Err)
		}
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out, nil
}

// TestKcatRebalanceLines checks the parsing of kcat's rebalance reports.
func TestKcatRebalanceLines(t *testing.T) {
	gc := kcatGroupClient(true)
	m := &groupMember{name: "parse"}
	steps := []struct {
		line     string
		assigned bool
		want     []int32
	}{
		{"% Waiting for group rebalance", false, nil},
		{"% Group g rebalanced (memberid rdkafka-1): assigned: t [0], t [3]", true, []int32{0, 3}},
		{"% Group g rebalanced (memberid rdkafka-1): revoked: t [0], t [3]", false, nil},
		{"% Group g rebalanced (memberid rdkafka-1): assigned: ", true, nil},
		{"% Group g rebalanced: incremental assignment of 2 partition(s) (memberid rdkafka-1, COOPERATIVE rebalance protocol): t [5], t [1]", true, []int32{1, 5}},
		{"% Group g rebalanced: incremental revoke of 1 partition(s) (memberid rdkafka-1, COOPERATIVE rebalance protocol): t [5]", true, []int32{1}},
		{"% Reached end of topic t [1] at offset 12", true, []int32{1}},
	}
	for _, s := range steps {
		gc.stderrLine(m, s.line)
		if m.assigned != s.assigned || !slices.Equal(m.partitions, s.want) {
			t.Errorf("after %q: assigned %v %v, want %v %v", s.line, m.assigned, m.partitions, s.assigned, s.want)
		}
	}
	gc.stderrLine(m, "% ERROR: Topic t [5] error: no previously committed offset available")
	if len(m.errs) != 1 || len(m.badLines) != 0 {
		t.Errorf("errors %v, bad lines %v", m.errs, m.badLines)
	}
}
