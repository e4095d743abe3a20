package offsets

import (
	"bytes"
	"testing"
)

func TestWriteOffsetsGolden(t *testing.T) {
	var b bytes.Buffer
	WriteOffsets(&b, []Line{{"t", 1, 5}, {"a", 0, 0}, {"t", 0, 7}})
	if want := "a:0:0\nt:0:7\nt:1:5\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestFilterAndTime(t *testing.T) {
	f, err := buildFilter("", "", "t:1-3,u:5-,v")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t    string
		p    int32
		want bool
	}{{"t", 0, false}, {"t", 1, true}, {"t", 3, false}, {"u", 9, true}, {"u", 4, false}, {"v", 100, true}, {"w", 0, false}} {
		if got := f(c.t, c.p); got != c.want {
			t.Errorf("filter(%s, %d) = %v", c.t, c.p, got)
		}
	}
	if n, err := parseTime("earliest"); err != nil || n != -2 {
		t.Errorf("earliest: %d %v", n, err)
	}
	if _, err := parseTime("soon"); err == nil {
		t.Error("want an error")
	}
	if _, err := ParseOffsetJSON([]byte(`{"partitions":[{"topic":"t","partition":0,"offset":1},{"topic":"t","partition":0,"offset":2}],"version":1}`)); err == nil {
		t.Error("duplicate partitions: want an error")
	}
}
