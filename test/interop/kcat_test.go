package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// kcat is librdkafka through the kcat command line tool (Debian kcat). It
// cannot set headers per record, so every record gets the same -H headers.
type kcat struct{}

func (kcat) name() string { return "kcat" }

func (kcat) headers(int) []header {
	return []header{{"client", "kcat"}, {"origin", "silkworm-interop"}}
}

func (k kcat) produce(ctx context.Context, t *testing.T, addr, topic string, recs []outRecord) error {
	var in bytes.Buffer
	for _, r := range recs {
		if strings.ContainsAny(r.Key, ":\n") || strings.Contains(r.Value, "\n") {
			return fmt.Errorf("record %q cannot be written as a kcat -K: line", r.Key)
		}
		fmt.Fprintf(&in, "%s:%s\n", r.Key, r.Value)
	}
	args := []string{"-P", "-b", addr, "-t", topic, "-K", ":"}
	for _, h := range k.headers(0) {
		args = append(args, "-H", h.Key+"="+h.Value)
	}
	// Fail instead of retrying forever if the broker goes away.
	args = append(args, "-X", "message.timeout.ms=60000")
	_, err := runClient(ctx, t, in.Bytes(), "kcat", args...)
	return err
}

// kcatMessage is one line of kcat -C -J output.
type kcatMessage struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	TsType    string   `json:"tstype"`
	Ts        int64    `json:"ts"`
	Headers   []string `json:"headers"` // key, value, key, value...
	Key       *string  `json:"key"`
	Payload   *string  `json:"payload"`
}

func (kcat) consume(ctx context.Context, t *testing.T, addr, topic string) ([]record, error) {
	out, err := runClient(ctx, t, nil, "kcat", "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-J", "-q")
	if err != nil {
		return nil, err
	}
	var recs []record
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m kcatMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return recs, fmt.Errorf("parse kcat output line %q: %w", sc.Text(), err)
		}
		if m.Key == nil || m.Payload == nil {
			return recs, fmt.Errorf("kcat read a record without key or value: %s", sc.Text())
		}
		if m.TsType != "create" {
			return recs, fmt.Errorf("kcat read timestamp type %q, want create: %s", m.TsType, sc.Text())
		}
		if len(m.Headers)%2 != 0 {
			return recs, fmt.Errorf("kcat printed an odd header list: %s", sc.Text())
		}
		hs := []header{}
		for i := 0; i < len(m.Headers); i += 2 {
			hs = append(hs, header{m.Headers[i], m.Headers[i+1]})
		}
		recs = append(recs, record{
			Partition: m.Partition, Offset: m.Offset,
			Key: *m.Key, Value: *m.Payload, Headers: hs, Timestamp: m.Ts,
		})
	}
	return recs, sc.Err()
}

func TestKcat(t *testing.T) {
	t.Parallel()
	_, err := exec.LookPath("kcat")
	requireClient(t, err, "apt-get install -y kcat")
	runScenario(t, startBroker(t), kcat{})
}
