package console_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/silkworm/silkworm/internal/console"
)

// TestPagingTenThousandPartitions pages a topic with 10,000 partitions
// and a list of many topics through the API (httptest, no browser, an
// in-memory kfake cluster): each page has the right items, and offsets
// and sizes are asked for the page only.
func TestPagingTenThousandPartitions(t *testing.T) {
	var small []string
	for i := range 120 {
		small = append(small, fmt.Sprintf("small-%03d", i))
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(10000, "big"), kfake.SeedTopics(1, small...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	srv, err := console.New(console.Config{Listener: "127.0.0.1:0", Bootstrap: kc.ListenAddrs()[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	checkPaging(t, hs.URL, 0)
}

// TestMeasureTenThousandPartitions measures, by hand, the API and browser
// load times of the topic list and of a topic's page with 10,000
// partitions: on franz-go's in-memory kfake (the console's own cost) and
// on a real broker (SILKWORM_CONSOLE_MEASURE_PARTITIONS partitions,
// default 10,000; the broker keeps 3 files open per partition, so the
// file descriptor limit must allow it):
//
//	SILKWORM_CONSOLE_MEASURE=1 go test -run TestMeasureTenThousandPartitions -v -timeout 30m ./internal/console/
func TestMeasureTenThousandPartitions(t *testing.T) {
	if os.Getenv("SILKWORM_CONSOLE_MEASURE") != "1" {
		t.Skip("set SILKWORM_CONSOLE_MEASURE=1 to measure")
	}
	t.Run("kfake", func(t *testing.T) {
		kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(10000, "big"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(kc.Close)
		srv, err := console.New(console.Config{Listener: "127.0.0.1:0", Bootstrap: kc.ListenAddrs()[0]})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		measure(t, srv.URL())
	})
	t.Run("broker", func(t *testing.T) {
		n := 10000
		if v := os.Getenv("SILKWORM_CONSOLE_MEASURE_PARTITIONS"); v != "" {
			fmt.Sscan(v, &n)
		}
		cb, err := startBroker(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cb.close)
		_, adm := kafkaClient(t, cb.bootstrap)
		adm.SetTimeoutMillis(600000)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		start := time.Now()
		if r, err := adm.CreateTopic(ctx, int32(n), 1, nil, "big"); err != nil || r.Err != nil {
			t.Fatalf("create a topic with %d partitions: %v %v", n, err, r.Err)
		}
		t.Logf("created a topic with %d partitions in %v", n, time.Since(start))
		measure(t, cb.url)
	})
}

// measure logs the API times and the browser load times (navigation to
// ready) of the pages that matter with a big topic "big".
func measure(t *testing.T, u string) {
	a := newAPIClient(t, u)
	for _, path := range []string{"/api/topics?offset=0&limit=50", "/api/topics/big", "/api/topics/big/partitions?offset=0&limit=100",
		"/api/topics/big/partitions?offset=9900&limit=100", "/api/topics/big/configs", "/api/cluster",
		"/api/topics?limit=1000&internal=false&sizes=false", "/api/topics/big/messages?partition=0&mode=newest&limit=50"} {
		var out map[string]any
		took := timed(func() { a.must("GET", path, nil, &out) })
		t.Logf("API %s: %v", path, took)
	}
	ctx := newBrowser(t)
	loadPage(t, ctx, u+"/#/overview")
	for _, hash := range []string{"#/topics", "#/topics/big", "#/topics/big/configs", "#/messages/big", "#/overview"} {
		took := timed(func() { loadPage(t, ctx, u+"/"+hash) })
		t.Logf("browser load %s: %v", hash, took)
	}
}

// checkPaging checks the paged API on a cluster with the topic "big"
// (10,000 empty partitions led by broker leader) and topics small-000 to
// small-119, logging the API times.
func checkPaging(t *testing.T, url string, leader int32) {
	a := newAPIClient(t, url)
	var parts struct {
		Total      int `json:"total"`
		Offset     int `json:"offset"`
		Partitions []struct {
			Partition      int32 `json:"partition"`
			Leader         int32 `json:"leader"`
			HighWatermark  int64 `json:"highWatermark"`
			LogStartOffset int64 `json:"logStartOffset"`
			Size           int64 `json:"size"`
		} `json:"partitions"`
	}
	took := timed(func() { a.must("GET", "/api/topics/big/partitions?offset=9950&limit=100", nil, &parts) })
	if parts.Total != 10000 || parts.Offset != 9950 || len(parts.Partitions) != 50 {
		t.Fatalf("last page: total %d offset %d, %d partitions; want 10000, 9950, 50", parts.Total, parts.Offset, len(parts.Partitions))
	}
	for i, p := range parts.Partitions {
		if p.Partition != int32(9950+i) || p.Leader != leader || p.HighWatermark != 0 || p.LogStartOffset != 0 || p.Size != 0 {
			t.Fatalf("partition row %d: %+v", i, p)
		}
	}
	t.Logf("GET /api/topics/big/partitions (a page of 100 of 10,000): %v", took)

	var topic struct {
		Partitions int `json:"partitions"`
	}
	took = timed(func() { a.must("GET", "/api/topics/big", nil, &topic) })
	if topic.Partitions != 10000 {
		t.Fatalf("topic big has %d partitions, want 10000", topic.Partitions)
	}
	t.Logf("GET /api/topics/big: %v", took)

	var list struct {
		Total  int `json:"total"`
		Topics []struct {
			Name       string `json:"name"`
			Partitions int    `json:"partitions"`
		} `json:"topics"`
	}
	took = timed(func() { a.must("GET", "/api/topics?offset=0&limit=50", nil, &list) })
	if list.Total != 121 || len(list.Topics) != 50 || list.Topics[0].Name != "big" || list.Topics[0].Partitions != 10000 || list.Topics[1].Name != "small-000" {
		t.Fatalf("first page of topics: total %d, %d topics, first %+v", list.Total, len(list.Topics), list.Topics[:min(2, len(list.Topics))])
	}
	t.Logf("GET /api/topics (first page of 50 of 121, one with 10,000 partitions): %v", took)
	a.must("GET", "/api/topics?offset=100&limit=50&q=small-1", nil, &list)
	if list.Total != 20 || len(list.Topics) != 0 {
		t.Fatalf("search small-1 from offset 100: total %d, %d topics; want 20, 0", list.Total, len(list.Topics))
	}
	a.must("GET", "/api/topics?offset=10&limit=5&q=SMALL-1", nil, &list)
	if list.Total != 20 || len(list.Topics) != 5 || list.Topics[0].Name != "small-110" {
		t.Fatalf("search SMALL-1 from offset 10: total %d, topics %+v", list.Total, list.Topics)
	}
	if code, _ := a.do("GET", "/api/topics/big/messages", nil, nil); code != 400 {
		t.Fatalf("browsing all 10,000 partitions at once: %d, want 400", code)
	}
	if code, _ := a.do("GET", "/api/topics/nope/partitions", nil, nil); code != 404 {
		t.Fatalf("partitions of an unknown topic: %d, want 404", code)
	}
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}
