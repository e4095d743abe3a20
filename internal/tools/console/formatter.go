package console

import (
	"io"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Formatter is Kafka's DefaultMessageFormatter. The zero value is not
// ready; use NewFormatter. Not safe for concurrent use.
type Formatter struct {
	PrintTimestamp, PrintKey, PrintValue bool
	PrintPartition, PrintOffset          bool
	PrintHeaders                         bool
	KeySeparator, LineSeparator          []byte
	HeadersSeparator, NullLiteral        []byte
}

// NewFormatter returns Kafka's defaults (value only, tab between fields)
// changed by props (print.key=true, key.separator=..., ...). Unknown
// properties are ignored, as Kafka's formatter ignores them.
func NewFormatter(props map[string]string) *Formatter {
	f := &Formatter{PrintValue: true, KeySeparator: []byte("\t"), LineSeparator: []byte("\n"),
		HeadersSeparator: []byte(","), NullLiteral: []byte("null")}
	boolProp := func(name string, dst *bool) {
		if v, ok := props[name]; ok {
			*dst = strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	boolProp("print.timestamp", &f.PrintTimestamp)
	boolProp("print.key", &f.PrintKey)
	boolProp("print.offset", &f.PrintOffset)
	boolProp("print.partition", &f.PrintPartition)
	boolProp("print.headers", &f.PrintHeaders)
	boolProp("print.value", &f.PrintValue)
	bytesProp := func(name string, dst *[]byte) {
		if v, ok := props[name]; ok {
			*dst = []byte(unescape(v))
		}
	}
	bytesProp("key.separator", &f.KeySeparator)
	bytesProp("line.separator", &f.LineSeparator)
	bytesProp("headers.separator", &f.HeadersSeparator)
	bytesProp("null.literal", &f.NullLiteral)
	return f
}

// unescape turns the \t, \n and \r a shell user types into the characters,
// as the Java tools do for separators.
func unescape(s string) string {
	return strings.NewReplacer(`\t`, "\t", `\n`, "\n", `\r`, "\r").Replace(s)
}

func (f *Formatter) orNull(b []byte) []byte {
	if b == nil {
		return f.NullLiteral
	}
	return b
}

// Write prints one record.
func (f *Formatter) Write(w io.Writer, r *kgo.Record) error {
	var b []byte
	sep := func(more bool) {
		if more {
			b = append(b, f.KeySeparator...)
		} else {
			b = append(b, f.LineSeparator...)
		}
	}
	if f.PrintTimestamp {
		if r.Timestamp.IsZero() || r.Timestamp.UnixMilli() < 0 {
			b = append(b, "NO_TIMESTAMP"...)
		} else {
			if r.Attrs.TimestampType() == 1 {
				b = append(b, "LogAppendTime:"...)
			} else {
				b = append(b, "CreateTime:"...)
			}
			b = strconv.AppendInt(b, r.Timestamp.UnixMilli(), 10)
		}
		sep(f.PrintOffset || f.PrintPartition || f.PrintHeaders || f.PrintKey || f.PrintValue)
	}
	if f.PrintPartition {
		b = append(b, "Partition:"...)
		b = strconv.AppendInt(b, int64(r.Partition), 10)
		sep(f.PrintOffset || f.PrintHeaders || f.PrintKey || f.PrintValue)
	}
	if f.PrintOffset {
		b = append(b, "Offset:"...)
		b = strconv.AppendInt(b, r.Offset, 10)
		sep(f.PrintHeaders || f.PrintKey || f.PrintValue)
	}
	if f.PrintHeaders {
		if len(r.Headers) == 0 {
			b = append(b, "NO_HEADERS"...)
		}
		for i, h := range r.Headers {
			b = append(b, h.Key...)
			b = append(b, ':')
			b = append(b, f.orNull(h.Value)...)
			if i < len(r.Headers)-1 {
				b = append(b, f.HeadersSeparator...)
			}
		}
		sep(f.PrintKey || f.PrintValue)
	}
	if f.PrintKey {
		b = append(b, f.orNull(r.Key)...)
		sep(f.PrintValue)
	}
	if f.PrintValue {
		b = append(b, f.orNull(r.Value)...)
		b = append(b, f.LineSeparator...)
	}
	_, err := w.Write(b)
	return err
}
