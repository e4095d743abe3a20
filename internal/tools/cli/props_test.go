package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadProps(t *testing.T) {
	text := "# a comment\n" +
		"! another comment\n" +
		"bootstrap.servers=127.0.0.1:9092\n" +
		"  acks : all\n" +
		"client.id perf\n" +
		"linger.ms=\\\n   5\n" +
		"weird\\=key=tab\\there\n" +
		"unicode=\\u0041B\n" +
		"empty=\n" +
		"\r\n"
	path := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProps(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Props{
		"bootstrap.servers": "127.0.0.1:9092",
		"acks":              "all",
		"client.id":         "perf",
		"linger.ms":         "5",
		"weird=key":         "tab\there",
		"unicode":           "AB",
		"empty":             "",
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("LoadProps = %q\nwant %q", p, want)
	}
	if _, err := LoadProps(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file: want error")
	}
	if p, err := LoadProps(""); err != nil || len(p) != 0 {
		t.Errorf("LoadProps(\"\") = %v, %v", p, err)
	}
}

func TestParseProps(t *testing.T) {
	p, err := ParseProps([]string{"acks=1", "sasl.jaas.config=a=b;", "empty="})
	if err != nil {
		t.Fatal(err)
	}
	want := Props{"acks": "1", "sasl.jaas.config": "a=b;", "empty": ""}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("ParseProps = %q, want %q", p, want)
	}
	for _, bad := range []string{"novalue", "=x"} {
		if _, err := ParseProps([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseProps(%q) = %v, want error naming it", bad, err)
		}
	}
	merged := Props{"a": "1", "b": "2"}.Clone().Merge(Props{"b": "3"})
	if !reflect.DeepEqual(merged, Props{"a": "1", "b": "3"}) {
		t.Errorf("Merge = %v", merged)
	}
}
