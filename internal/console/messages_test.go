package console_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type browsed struct {
	Messages []struct {
		Partition int32           `json:"partition"`
		Offset    int64           `json:"offset"`
		Timestamp int64           `json:"timestamp"`
		Key       []byte          `json:"key"`
		Value     []byte          `json:"value"`
		Headers   json.RawMessage `json:"headers"`
	} `json:"messages"`
	Complete bool `json:"complete"`
}

// TestBrowseMessagesAPI reads a partition's records the four ways the
// message browser offers, with and without a filter, and produces one.
func TestBrowseMessagesAPI(t *testing.T) {
	u, bootstrap := startConsole(t)
	cl, adm := kafkaClient(t, bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := testCtx(t)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "browse"); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 30 {
		r := &kgo.Record{Topic: "browse", Partition: int32(i % 2), Key: fmt.Appendf(nil, "key-%02d", i), Value: fmt.Appendf(nil, `{"i":%d}`, i),
			Timestamp: base.Add(time.Duration(i) * time.Second)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	a := newAPIClient(t, u)
	read := func(q string) browsed {
		t.Helper()
		var b browsed
		a.must("GET", "/api/topics/browse/messages?"+q, nil, &b)
		return b
	}
	keys := func(b browsed) (out []string) {
		for _, m := range b.Messages {
			out = append(out, string(m.Key))
		}
		return out
	}

	// Partition 0 holds key-00, key-02, ... key-28 at offsets 0..14.
	if got := keys(read("partition=0&mode=newest&limit=3")); fmt.Sprint(got) != "[key-24 key-26 key-28]" {
		t.Errorf("newest 3 of partition 0: %v", got)
	}
	if got := keys(read("partition=0&mode=oldest&limit=2")); fmt.Sprint(got) != "[key-00 key-02]" {
		t.Errorf("oldest 2 of partition 0: %v", got)
	}
	if got := keys(read("partition=0&mode=offset&offset=13&limit=10")); fmt.Sprint(got) != "[key-26 key-28]" {
		t.Errorf("partition 0 from offset 13: %v", got)
	}
	ts := base.Add(25 * time.Second).UnixMilli()
	if got := keys(read("partition=1&mode=timestamp&limit=10&timestamp=" + strconv.FormatInt(ts, 10))); fmt.Sprint(got) != "[key-25 key-27 key-29]" {
		t.Errorf("partition 1 from time +25s: %v", got)
	}
	if got := keys(read("mode=newest&limit=4")); fmt.Sprint(got) != "[key-26 key-27 key-28 key-29]" {
		t.Errorf("newest 4 of all partitions: %v", got)
	}
	if got := keys(read("mode=newest&limit=10&filter=" + `"i":1`)); fmt.Sprint(got) != "[key-01 key-10 key-11 key-12 key-13 key-14 key-15 key-16 key-17 key-18]" &&
		fmt.Sprint(got) != "[key-10 key-11 key-12 key-13 key-14 key-15 key-16 key-17 key-18 key-19]" {
		t.Errorf("filter on value: %v", got)
	}
	if got := keys(read("mode=oldest&limit=10&filter=key-2")); fmt.Sprint(got) != "[key-20 key-21 key-22 key-23 key-24 key-25 key-26 key-27 key-28 key-29]" {
		t.Errorf("filter on key: %v", got)
	}
	if b := read("partition=0&mode=offset&offset=15"); len(b.Messages) != 0 || !b.Complete {
		t.Errorf("from the end offset: %+v", b)
	}
	if code, _ := a.do("GET", "/api/topics/browse/messages?mode=sideways", nil, nil); code != 400 {
		t.Errorf("unknown mode: %d, want 400", code)
	}
	if code, _ := a.do("GET", "/api/topics/browse/messages?partition=7", nil, nil); code != 404 {
		t.Errorf("unknown partition: %d, want 404", code)
	}

	var produced struct {
		Partition int32 `json:"partition"`
		Offset    int64 `json:"offset"`
	}
	a.must("POST", "/api/topics/browse/messages", map[string]any{"partition": 0, "key": nil, "value": "tomb?", "headers": []map[string]string{{"key": "h", "value": "v"}}}, &produced)
	if produced.Partition != 0 || produced.Offset != 15 {
		t.Fatalf("produced at %d/%d, want 0/15", produced.Partition, produced.Offset)
	}
	b := read("partition=0&mode=newest&limit=1")
	if len(b.Messages) != 1 || b.Messages[0].Key != nil || string(b.Messages[0].Value) != "tomb?" || string(b.Messages[0].Headers) != `[{"key":"h","value":"dg=="}]` {
		t.Fatalf("the produced record reads back as %+v", b.Messages)
	}
}

// TestTopicAdminAPI creates a topic, edits and resets a config, adds
// partitions and deletes the topic through the API.
func TestTopicAdminAPI(t *testing.T) {
	u, bootstrap := startConsole(t)
	_, adm := kafkaClient(t, bootstrap)
	a := newAPIClient(t, u)
	a.must("POST", "/api/topics", map[string]any{"name": "admin-api", "partitions": 2, "configs": map[string]string{"retention.ms": "3600000"}}, nil)
	if code, _ := a.do("POST", "/api/topics", map[string]any{"name": "admin-api"}, nil); code != 409 {
		t.Errorf("creating it again: %d, want 409", code)
	}
	config := func(name string) (value, source string) {
		var c struct {
			Configs []struct {
				Name   string  `json:"name"`
				Value  *string `json:"value"`
				Source string  `json:"source"`
			} `json:"configs"`
		}
		a.must("GET", "/api/topics/admin-api/configs", nil, &c)
		for _, e := range c.Configs {
			if e.Name == name && e.Value != nil {
				return *e.Value, e.Source
			}
		}
		return "", ""
	}
	if v, src := config("retention.ms"); v != "3600000" || src != "DYNAMIC_TOPIC_CONFIG" {
		t.Errorf("retention.ms = %q from %s", v, src)
	}
	a.must("PATCH", "/api/topics/admin-api/configs", map[string]any{"set": map[string]string{"cleanup.policy": "compact"}, "delete": []string{"retention.ms"}}, nil)
	if v, src := config("cleanup.policy"); v != "compact" || src != "DYNAMIC_TOPIC_CONFIG" {
		t.Errorf("cleanup.policy = %q from %s after the edit", v, src)
	}
	if _, src := config("retention.ms"); src == "DYNAMIC_TOPIC_CONFIG" {
		t.Errorf("retention.ms still set on the topic after its reset")
	}
	if code, _ := a.do("PATCH", "/api/topics/admin-api/configs", map[string]any{"set": map[string]string{"cleanup.policy": "sideways"}}, nil); code != 400 {
		t.Errorf("an invalid config value: %d, want 400", code)
	}
	a.must("POST", "/api/topics/admin-api/partitions", map[string]int{"count": 5}, nil)
	if code, _ := a.do("POST", "/api/topics/admin-api/partitions", map[string]int{"count": 3}, nil); code != 400 {
		t.Errorf("shrinking partitions: %d, want 400", code)
	}
	td, err := adm.ListTopics(testCtx(t), "admin-api")
	if err != nil || len(td["admin-api"].Partitions) != 5 {
		t.Fatalf("after adding partitions: %v %+v", err, td["admin-api"])
	}
	a.must("DELETE", "/api/topics/admin-api", nil, nil)
	if code, _ := a.do("GET", "/api/topics/admin-api", nil, nil); code != 404 {
		t.Errorf("the deleted topic: %d, want 404", code)
	}
}
