package configs

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func strp(s string) *string { return &s }

func TestDescribeGolden(t *testing.T) {
	var b bytes.Buffer
	WriteDescription(&b, "topics", "orders", false, []Entry{
		{Name: "retention.ms", Value: strp("1000"), Synonyms: []Synonym{
			{"DYNAMIC_TOPIC_CONFIG", "retention.ms", strp("1000")},
			{"DEFAULT_CONFIG", "log.retention.ms", nil},
		}},
	})
	WriteDescription(&b, "brokers", "1", true, []Entry{{Name: "ssl.key.password", Sensitive: true}})
	WriteDescription(&b, "brokers", "", false, nil)
	checkGolden(t, "describe", b.Bytes())
}

func TestParseAddConfig(t *testing.T) {
	got, err := ParseAddConfig("k1=v1,k2=[a,b,c], k3 = v3 ")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"k1": "v1", "k2": "a,b,c", "k3": "v3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := ParseAddConfig("novalue"); err == nil {
		t.Error("want an error")
	}
}
