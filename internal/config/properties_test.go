package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"equals", "a=b\n", map[string]string{"a": "b"}},
		{"colon", "a: b", map[string]string{"a": "b"}},
		{"space separator", "a   b c", map[string]string{"a": "b c"}},
		{"blanks around separator", "  a \t = \f b", map[string]string{"a": "b"}},
		{"trailing blanks kept", "a=b  ", map[string]string{"a": "b  "}},
		{"comments", "# c\n  ! c2\na=1\n#b=2", map[string]string{"a": "1"}},
		{"blank lines", "\n\n  \t\na=1\n\n", map[string]string{"a": "1"}},
		{"key only", "flag", map[string]string{"flag": ""}},
		{"empty value", "a=", map[string]string{"a": ""}},
		{"value with separators", "a=b=c:d", map[string]string{"a": "b=c:d"}},
		{"escaped separator in key", `a\=b\:c\ d=e`, map[string]string{"a=b:c d": "e"}},
		{"escapes", `a=tab\there\nnl\\back\q`, map[string]string{"a": "tab\there\nnl\\backq"}},
		{"unicode", `a=caf\u00e9 \u20AC`, map[string]string{"a": "café €"}},
		{"surrogate pair", `a=\uD83D\uDE00`, map[string]string{"a": "😀"}},
		{"continuation", "a=one,\\\n    two,\\\n\tthree\nb=2", map[string]string{"a": "one,two,three", "b": "2"}},
		{"continuation line starting with #", "a=x\\\n  #y", map[string]string{"a": "x#y"}},
		{"even backslashes do not continue", "a=x\\\\\nb=y", map[string]string{"a": `x\`, "b": "y"}},
		{"continuation at EOF", "a=x\\", map[string]string{"a": "x"}},
		{"CRLF and CR", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"later wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"listeners", "listeners=PLAINTEXT://:9092,CONTROLLER://:9093", map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProperties(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ParseProperties: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParsePropertiesMalformedUnicode(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uZZZZ`, "x=1\nb=\\u00g1"} {
		_, err := ParseProperties(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("%q: err = %v, want malformed \\uxxxx error", in, err)
		}
	}
	_, err := ParseProperties(strings.NewReader("x=1\nb=\\u00g1"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want it to name line 2", err)
	}
}
