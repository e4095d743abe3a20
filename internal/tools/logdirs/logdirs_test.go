package logdirs

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func sample() []Broker {
	return []Broker{
		{ID: 3, LogDirs: []LogDir{{Path: "/data/3", Replicas: []Replica{{Topic: "orders", Partition: 0, Size: 1024}}}}},
		{ID: 1, LogDirs: []LogDir{
			{Path: "/data/1a", Replicas: []Replica{
				{Topic: "orders", Partition: 1, Size: 2048, OffsetLag: 0},
				{Topic: "orders", Partition: 0, Size: 1024},
				{Topic: "audit", Partition: 0, Size: 77},
			}},
			{Path: "/data/1b", ErrorCode: kerr.KafkaStorageError.Code},
		}},
		{ID: 2, LogDirs: []LogDir{{Path: "/data/2"}}},
	}
}

func TestJSONGolden(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, sample(), nil); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "all.golden"), out.Bytes())
	// The document is JSON with Kafka's fields.
	var doc struct {
		Version int
		Brokers []struct {
			Broker  int
			LogDirs []struct {
				LogDir     string
				Error      *string
				Partitions []struct {
					Partition string
					Size      int64
					OffsetLag int64
					IsFuture  bool
				}
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != 1 || len(doc.Brokers) != 3 || doc.Brokers[0].Broker != 1 {
		t.Errorf("document %+v", doc)
	}

	out.Reset()
	if err := WriteJSON(&out, sample(), []string{"audit"}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "audit.golden"), out.Bytes())
}

// TestJavaHashOrder checks the order against what java.util.HashMap
// iterates for the same keys.
func TestJavaHashOrder(t *testing.T) {
	keys := []string{"version", "brokers"}
	got := javaHashOrder(keys, javaStringHash)
	if !slices.Equal(got, []string{"brokers", "version"}) {
		t.Errorf("got %v", got)
	}
	keys = []string{"partition", "size", "offsetLag", "isFuture"}
	if got := javaHashOrder(keys, javaStringHash); !slices.Equal(got, keys) {
		t.Errorf("got %v", got)
	}
	if javaStringHash("hello") != 99162322 {
		t.Errorf("hash of hello: %d", javaStringHash("hello"))
	}
	// Integers 0..20 in a HashSet come out ascending, 17 items growing the
	// table to 32.
	var ids []int32
	for i := int32(20); i >= 0; i-- {
		ids = append(ids, i)
	}
	if got := JoinIDs(ids); got != "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20" {
		t.Errorf("JoinIDs: %s", got)
	}
}

func TestUsageErrors(t *testing.T) {
	var out bytes.Buffer
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--describe"}, `missing required argument "[bootstrap-server]"`},
		{[]string{"--bootstrap-server", "x:1"}, `missing required argument "[describe]"`},
		{[]string{"--bootstrap-server", "x:1", "--describe", "--broker-list", "1,x"}, `For input string: "x"`},
	} {
		err := Run(context.Background(), tc.args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}
