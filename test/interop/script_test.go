package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// scriptClient is a client driven through a script that speaks JSON lines:
// "produce" reads outRecords from stdin, "consume" prints scriptRecords.
type scriptClient struct {
	clientName string
	// command returns the program and the arguments that precede the
	// mode and flags.
	command []string
}

// scriptRecord is one line printed by a script's consume mode.
type scriptRecord struct {
	Partition     int32    `json:"partition"`
	Offset        int64    `json:"offset"`
	Key           *string  `json:"key"`
	Value         *string  `json:"value"`
	Headers       []header `json:"headers"`
	Timestamp     int64    `json:"timestamp"`
	TimestampType int      `json:"timestamp_type"`
}

func (c scriptClient) name() string { return c.clientName }

func (c scriptClient) headers(seq int) []header { return perRecordHeaders(c.clientName)(seq) }

func (c scriptClient) run(ctx context.Context, t *testing.T, stdin []byte, mode, addr, topic string) ([]byte, error) {
	t.Helper()
	args := append(c.command[1:len(c.command):len(c.command)], mode, "--bootstrap", addr, "--topic", topic)
	return runClient(ctx, t, stdin, c.command[0], args...)
}

func (c scriptClient) produce(ctx context.Context, t *testing.T, addr, topic string, recs []outRecord) error {
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	_, err := c.run(ctx, t, in.Bytes(), "produce", addr, topic)
	return err
}

func (c scriptClient) consume(ctx context.Context, t *testing.T, addr, topic string) ([]record, error) {
	out, err := c.run(ctx, t, nil, "consume", addr, topic)
	if err != nil {
		return nil, err
	}
	var recs []record
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m scriptRecord
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return recs, fmt.Errorf("parse %s output line %q: %w", c.clientName, sc.Text(), err)
		}
		if m.Key == nil || m.Value == nil {
			return recs, fmt.Errorf("%s read a record without key or value: %s", c.clientName, sc.Text())
		}
		if m.TimestampType != 0 {
			return recs, fmt.Errorf("%s read timestamp type %d, want 0 (CreateTime): %s", c.clientName, m.TimestampType, sc.Text())
		}
		recs = append(recs, record{
			Partition: m.Partition, Offset: m.Offset,
			Key: *m.Key, Value: *m.Value, Headers: m.Headers, Timestamp: m.Timestamp,
		})
	}
	return recs, sc.Err()
}

// pythonInterpreter is the Python that has Debian's python3-kafka.
func pythonInterpreter() string {
	if p := os.Getenv("SILKWORM_TEST_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

func TestKafkaPython(t *testing.T) {
	t.Parallel()
	py := pythonInterpreter()
	var missing error
	if _, err := exec.LookPath(py); err != nil {
		missing = fmt.Errorf("kafka-python: no %s: %w", py, err)
	} else if out, err := exec.Command(py, "-c", "import kafka").CombinedOutput(); err != nil {
		missing = fmt.Errorf("kafka-python: %s cannot import kafka: %w: %s", py, err, out)
	}
	requireClient(t, missing, "apt-get install -y python3-kafka")
	script, err := filepath.Abs(filepath.Join("python", "interop_client.py"))
	if err != nil {
		t.Fatal(err)
	}
	runScenario(t, startBroker(t), scriptClient{"kafka-python", []string{py, script}})
}

func TestKafkaJS(t *testing.T) {
	t.Parallel()
	var missing error
	node, err := exec.LookPath("node")
	if err != nil {
		missing = fmt.Errorf("kafkajs: node not found: %w", err)
	} else if _, err := os.Stat(filepath.Join("js", "node_modules", "kafkajs", "package.json")); err != nil {
		missing = fmt.Errorf("kafkajs: not installed in test/interop/js: %w", err)
	}
	requireClient(t, missing, "apt-get install -y nodejs npm && (cd test/interop/js && npm ci)")
	script, err := filepath.Abs(filepath.Join("js", "interop_client.js"))
	if err != nil {
		t.Fatal(err)
	}
	runScenario(t, startBroker(t), scriptClient{"kafkajs", []string{node, script}})
}
