package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/groups"
)

// pageAPI calls a console's JSON API as its pages do: with the CSRF token
// of the session (GET /api/session) on state-changing requests.
type pageAPI struct {
	t    *testing.T
	base string
	csrf string
}

func newPageAPI(t *testing.T, consoleURL string) *pageAPI {
	t.Helper()
	c := &pageAPI{t: t, base: strings.TrimSuffix(consoleURL, "/")}
	var sess struct{ CSRF string }
	if st, msg := c.call("GET", "/api/session", nil, &sess); st != http.StatusOK {
		t.Fatalf("GET /api/session: %d %s", st, msg)
	}
	c.csrf = sess.CSRF
	return c
}

// call sends body as JSON and decodes a 2xx answer into out; it returns the
// status and, for an error status, the {"error"} message.
func (c *pageAPI) call(method, path string, body, out any) (int, string) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != "GET" {
		req.Header.Set("X-Console-CSRF", c.csrf)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		json.Unmarshal(data, &e)
		if e.Error == "" {
			e.Error = string(data)
		}
		return resp.StatusCode, e.Error
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, ""
}

// must is call that fails the test on an error status.
func (c *pageAPI) must(method, path string, body, out any) {
	c.t.Helper()
	if st, msg := c.call(method, path, body, out); st/100 != 2 {
		c.t.Fatalf("%s %s: %d %s", method, path, st, msg)
	}
}

// pollUntil polls cond every 20 ms until it holds, failing the test after
// 20 s.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// toolLags runs `silkworm consumer-groups --describe --group group`
// in-process and returns its LAG column by "topic/partition" (-1 for "-").
func toolLags(t *testing.T, bootstrap, group string) map[string]int64 {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := groups.Run(context.Background(), []string{"--bootstrap-server", bootstrap, "--describe", "--group", group}, &out, &errOut); err != nil {
		t.Fatalf("consumer-groups --describe: %v\n%s%s", err, out.String(), errOut.String())
	}
	lags := map[string]int64{}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != group {
			continue
		}
		lag := int64(-1)
		if f[5] != "-" {
			n, err := strconv.ParseInt(f[5], 10, 64)
			if err != nil {
				t.Fatalf("consumer-groups --describe: bad lag in %q", line)
			}
			lag = n
		}
		lags[f[1]+"/"+f[2]] = lag
	}
	return lags
}

// groupFixture is a topic with records in each partition and a consumer
// group that consumed and committed some of them.
type groupFixture struct {
	adm    *kadm.Client
	member *kgo.Client // the group's one member, until closeMember
}

// newGroupFixture creates topic with 3 partitions and 10 records in each,
// lets a consumer of group (a KIP-848 consumer group when serverSide)
// consume and commit them all, then produces extra[p] more records to
// partition p, so that partition p lags by extra[p]. The member stays in
// the group.
func newGroupFixture(t *testing.T, bootstrap, topic, group string, serverSide bool, extra [3]int) *groupFixture {
	t.Helper()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	produce := func(counts [3]int) {
		var recs []*kgo.Record
		for p, n := range counts {
			for i := range n {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: fmt.Appendf(nil, "v%d", i)})
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	produce([3]int{10, 10, 10})
	opts := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ClientID("console-test-member"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if serverSide {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	member, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(member.Close)
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	for got := 0; got < 30; {
		fs := member.PollFetches(pctx)
		if pctx.Err() != nil {
			t.Fatalf("consumed %d of 30 records: %v", got, pctx.Err())
		}
		got += fs.NumRecords()
	}
	cancel()
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	produce(extra)
	return &groupFixture{adm: adm, member: member}
}

// committed is the group's committed offsets by "topic/partition".
func (f *groupFixture) committed(t *testing.T, group string) map[string]int64 {
	t.Helper()
	resps, err := f.adm.FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	out := map[string]int64{}
	resps.Each(func(r kadm.OffsetResponse) {
		if r.Err == nil && r.At >= 0 {
			out[fmt.Sprintf("%s/%d", r.Topic, r.Partition)] = r.At
		}
	})
	return out
}

// closeMember closes the member (it leaves the group) and waits until the
// group is Empty.
func (f *groupFixture) closeMember(t *testing.T, group string) {
	t.Helper()
	f.member.Close()
	pollUntil(t, "group "+group+" empty", func() bool {
		gs, err := f.adm.ListGroups(context.Background())
		return err == nil && gs[group].State == "Empty"
	})
}

type apiGroupView struct {
	Group, Type, State, Protocol string
	Coordinator                  struct{ ID int32 }
	Members                      []struct {
		MemberID, ClientID, Host string
		Assignments              []struct {
			Topic      string
			Partitions []int32
		}
	}
	Offsets []struct {
		Topic                  string
		Partition              int32
		Committed, LogEnd, Lag int64
		MemberID, ClientID     string
	}
	TotalLag int64
}

func (g *apiGroupView) lags() map[string]int64 {
	out := map[string]int64{}
	for _, o := range g.Offsets {
		out[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] = o.Lag
	}
	return out
}

func sameLags(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

type apiResetRow struct {
	Topic              string
	Partition          int32
	Current, NewOffset int64
}

func TestGroupsAPI(t *testing.T) {
	u, bootstrap := startConsole(t, "group.consumer.min.heartbeat.interval.ms=50", "group.consumer.heartbeat.interval.ms=100")
	api := newPageAPI(t, u)

	for _, tc := range []struct {
		name       string
		serverSide bool
		wantType   string
	}{{"classic", false, "classic"}, {"consumer", true, "consumer"}} {
		t.Run(tc.name, func(t *testing.T) {
			api := *api
			api.t = t
			topic, group := "gapi-"+tc.name, "gapi-g-"+tc.name
			f := newGroupFixture(t, bootstrap, topic, group, tc.serverSide, [3]int{5, 2, 0})
			path := "/api/groups/" + url.PathEscape(group)

			// The page's numbers are the tool's: lag 5, 2, 0 and the member.
			var g apiGroupView
			pollUntil(t, "the group stable with its member owning 3 partitions", func() bool {
				g = apiGroupView{}
				if st, _ := api.call("GET", path, nil, &g); st != http.StatusOK {
					return false
				}
				return g.State == "Stable" && len(g.Members) == 1 && len(g.Members[0].Assignments) == 1 && len(g.Members[0].Assignments[0].Partitions) == 3
			})
			if g.Type != tc.wantType || g.TotalLag != 7 || g.Members[0].ClientID != "console-test-member" {
				t.Fatalf("group %+v: want type %s, total lag 7, client id console-test-member", g, tc.wantType)
			}
			want := map[string]int64{topic + "/0": 5, topic + "/1": 2, topic + "/2": 0}
			if got := g.lags(); !sameLags(got, want) {
				t.Fatalf("lags %v, want %v", got, want)
			}
			if tool := toolLags(t, bootstrap, group); !sameLags(tool, g.lags()) {
				t.Fatalf("console lags %v, consumer-groups --describe %v", g.lags(), tool)
			}
			for _, o := range g.Offsets {
				if o.Committed != 10 || o.LogEnd != 10+want[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] || o.MemberID != g.Members[0].MemberID {
					t.Fatalf("offset row %+v", o)
				}
			}

			// The list shows it with its type, member count and lag.
			var list struct {
				Total  int
				Groups []struct {
					Group, Type, State string
					Members            int
					Lag                int64
				}
			}
			api.must("GET", "/api/groups?q="+url.QueryEscape(group), nil, &list)
			if list.Total != 1 || list.Groups[0].Group != group || list.Groups[0].Type != tc.wantType || list.Groups[0].Members != 1 || list.Groups[0].Lag != 7 {
				t.Fatalf("list: %+v", list)
			}

			// Resetting a group with members is refused, as the tool does.
			st, msg := api.call("POST", path+"/reset-offsets", map[string]any{"to": "earliest"}, nil)
			if st != http.StatusConflict || !strings.Contains(msg, "inactive") {
				t.Fatalf("reset of an active group: %d %q", st, msg)
			}

			f.closeMember(t, group)

			// Dry run: nothing moves.
			var plan struct {
				Executed bool
				Rows     []apiResetRow
			}
			api.must("POST", path+"/reset-offsets", map[string]any{"to": "earliest"}, &plan)
			if plan.Executed || len(plan.Rows) != 3 {
				t.Fatalf("dry run: %+v", plan)
			}
			for _, r := range plan.Rows {
				if r.Current != 10 || r.NewOffset != 0 {
					t.Fatalf("dry run row %+v", r)
				}
			}
			if c := f.committed(t, group); c[topic+"/0"] != 10 {
				t.Fatalf("a dry run moved the offsets: %v", c)
			}

			// To an offset: clamped to the log end.
			api.must("POST", path+"/reset-offsets", map[string]any{"to": "offset", "offset": 12, "topic": topic}, &plan)
			for _, r := range plan.Rows {
				if want := min(12, 10+want[fmt.Sprintf("%s/%d", r.Topic, r.Partition)]); r.NewOffset != want {
					t.Fatalf("to offset 12: row %+v, want %d", r, want)
				}
			}
			// To a timestamp after every record: the log end offsets.
			future := time.Now().Add(time.Hour).UnixMilli()
			api.must("POST", path+"/reset-offsets", map[string]any{"to": "timestamp", "timestamp": future}, &plan)
			for _, r := range plan.Rows {
				if end := 10 + want[fmt.Sprintf("%s/%d", r.Topic, r.Partition)]; r.NewOffset != end {
					t.Fatalf("to a future timestamp: row %+v, want %d", r, end)
				}
			}
			// ... and before every record: the first ones.
			api.must("POST", path+"/reset-offsets", map[string]any{"to": "timestamp", "timestamp": 0}, &plan)
			for _, r := range plan.Rows {
				if r.NewOffset != 0 {
					t.Fatalf("to timestamp 0: row %+v", r)
				}
			}

			// Execute to latest: committed moves, lag is 0.
			api.must("POST", path+"/reset-offsets", map[string]any{"to": "latest", "execute": true}, &plan)
			if !plan.Executed {
				t.Fatalf("execute: %+v", plan)
			}
			c := f.committed(t, group)
			if c[topic+"/0"] != 15 || c[topic+"/1"] != 12 || c[topic+"/2"] != 10 {
				t.Fatalf("committed after reset to latest: %v", c)
			}
			api.must("GET", path, nil, &g)
			if g.TotalLag != 0 || g.State != "Empty" || len(g.Members) != 0 {
				t.Fatalf("after reset to latest: %+v", g)
			}

			// Bad requests.
			for _, body := range []map[string]any{{"to": "somewhere"}, {"to": "offset"}, {"to": "timestamp"}, {"to": "offset", "offset": -1}} {
				if st, msg := api.call("POST", path+"/reset-offsets", body, nil); st != http.StatusBadRequest {
					t.Fatalf("reset %v: %d %s, want 400", body, st, msg)
				}
			}

			// Delete, then it is gone.
			api.must("DELETE", path, nil, nil)
			if st, msg := api.call("GET", path, nil, nil); st != http.StatusNotFound {
				t.Fatalf("GET a deleted group: %d %s", st, msg)
			}
		})
	}

	t.Run("share", func(t *testing.T) {
		api := *api
		api.t = t
		const topic, group = "gapi-share", "gapi-g-share"
		ctx := context.Background()
		cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
		if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("set share.auto.offset.reset: %v %+v", err, resp)
		}
		member, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID("console-share-member"))
		if err != nil {
			t.Fatal(err)
		}
		defer member.Close()
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for got := 0; got < 10; {
			fs := member.PollFetches(pctx)
			if pctx.Err() != nil {
				t.Fatalf("share-consumed %d of 10 records", got)
			}
			fs.EachRecord(func(r *kgo.Record) { r.Ack(kgo.AckAccept); got++ })
		}
		// The accepted records move the share-partition start offset to 10:
		// nothing lags.
		path := "/api/groups/" + group
		var g apiGroupView
		pollUntil(t, "the share group with its member and start offset 10", func() bool {
			g = apiGroupView{}
			if st, _ := api.call("GET", path, nil, &g); st != http.StatusOK {
				return false
			}
			return len(g.Members) == 1 && len(g.Offsets) == 1 && g.Offsets[0].Committed == 10
		})
		if g.Type != "share" || g.Members[0].ClientID != "console-share-member" || g.Offsets[0].LogEnd != 10 || g.Offsets[0].Lag != 0 || g.TotalLag != 0 {
			t.Fatalf("share group %+v", g)
		}
		var list struct {
			Total  int
			Groups []struct{ Group, Type string }
		}
		api.must("GET", "/api/groups?type=share&q="+group, nil, &list)
		if list.Total != 1 || list.Groups[0].Type != "share" {
			t.Fatalf("share groups listed: %+v", list)
		}
		if st, msg := api.call("POST", path+"/reset-offsets", map[string]any{"to": "earliest"}, nil); st/100 == 2 {
			t.Fatalf("reset of a share group: %d %s", st, msg)
		}
	})

	t.Run("paging", func(t *testing.T) {
		api := *api
		api.t = t
		cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		ctx := context.Background()
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, "gapi-paging"); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			os := kadm.Offsets{}
			os.Add(kadm.Offset{Topic: "gapi-paging", Partition: 0, At: 0, LeaderEpoch: -1})
			if err := adm.CommitAllOffsets(ctx, fmt.Sprintf("gapi-page-%d", i), os); err != nil {
				t.Fatal(err)
			}
		}
		var list struct {
			Total  int
			Groups []struct{ Group, Type string }
		}
		api.must("GET", "/api/groups?q=GAPI-PAGE&limit=2", nil, &list)
		if list.Total != 3 || len(list.Groups) != 2 || list.Groups[0].Group != "gapi-page-0" || list.Groups[1].Group != "gapi-page-1" {
			t.Fatalf("first page: %+v", list)
		}
		api.must("GET", "/api/groups?q=gapi-page&limit=2&offset=2", nil, &list)
		if list.Total != 3 || len(list.Groups) != 1 || list.Groups[0].Group != "gapi-page-2" || list.Groups[0].Type != "classic" {
			t.Fatalf("second page: %+v", list)
		}
		api.must("GET", "/api/groups?q=gapi-page&type=share", nil, &list)
		if list.Total != 0 || len(list.Groups) != 0 {
			t.Fatalf("share groups: %+v", list)
		}
		if st, _ := api.call("GET", "/api/groups?limit=0", nil, nil); st != http.StatusBadRequest {
			t.Fatalf("limit=0: %d, want 400", st)
		}
		if st, _ := api.call("GET", "/api/groups/no-such-group", nil, nil); st != http.StatusNotFound {
			t.Fatalf("unknown group: %d, want 404", st)
		}
	})
}
