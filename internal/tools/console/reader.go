package console

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// LineReader is Kafka's LineMessageReader: it turns one input line into a
// record. The zero value is not ready; use NewLineReader.
type LineReader struct {
	ParseKey, ParseHeaders, IgnoreError bool
	KeySeparator                        string
	HeadersDelimiter                    string
	HeadersSeparator                    string
	HeadersKeySeparator                 string
	NullMarker                          string // "" for none
}

// NewLineReader returns Kafka's defaults changed by props. An unknown
// property is an error naming it.
func NewLineReader(props map[string]string) (*LineReader, error) {
	r := &LineReader{KeySeparator: "\t", HeadersDelimiter: "\t", HeadersSeparator: ",", HeadersKeySeparator: ":"}
	for k, v := range props {
		switch k {
		case "parse.key":
			r.ParseKey = strings.EqualFold(strings.TrimSpace(v), "true")
		case "parse.headers":
			r.ParseHeaders = strings.EqualFold(strings.TrimSpace(v), "true")
		case "ignore.error":
			r.IgnoreError = strings.EqualFold(strings.TrimSpace(v), "true")
		case "key.separator":
			r.KeySeparator = unescape(v)
		case "headers.delimiter":
			r.HeadersDelimiter = unescape(v)
		case "headers.separator":
			r.HeadersSeparator = unescape(v)
		case "headers.key.separator":
			r.HeadersKeySeparator = unescape(v)
		case "null.marker":
			r.NullMarker = v
		default:
			return nil, fmt.Errorf("unknown --property %q for the line reader (known: parse.key, key.separator, parse.headers, headers.delimiter, headers.separator, headers.key.separator, null.marker, ignore.error)", k)
		}
	}
	if r.ParseHeaders && r.HeadersSeparator == r.HeadersKeySeparator {
		return nil, fmt.Errorf("headers.separator and headers.key.separator may not be equal")
	}
	if r.NullMarker != "" && (r.NullMarker == r.KeySeparator || r.NullMarker == r.HeadersDelimiter) {
		return nil, fmt.Errorf("null.marker may not equal key.separator or headers.delimiter")
	}
	return r, nil
}

func (r *LineReader) nullable(s string) []byte {
	if r.NullMarker != "" && s == r.NullMarker {
		return nil
	}
	return []byte(s)
}

// Parse turns line number n (from 1, for messages) into a record for topic.
func (r *LineReader) Parse(topic, line string, n int) (*kgo.Record, error) {
	rec := &kgo.Record{Topic: topic}
	rest := line
	if r.ParseHeaders {
		hs, after, ok := strings.Cut(rest, r.HeadersDelimiter)
		if !ok {
			if !r.IgnoreError {
				return nil, fmt.Errorf("no headers delimiter found on line number %d: '%s'", n, line)
			}
		} else {
			rest = after
			if hs != "" && (r.NullMarker == "" || hs != r.NullMarker) {
				for _, h := range strings.Split(hs, r.HeadersSeparator) {
					k, v, ok := strings.Cut(h, r.HeadersKeySeparator)
					if !ok {
						rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h})
						continue
					}
					if r.NullMarker != "" && k == r.NullMarker {
						return nil, fmt.Errorf("header key cannot match null marker '%s' on line number %d", r.NullMarker, n)
					}
					rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: r.nullable(v)})
				}
			}
		}
	}
	if r.ParseKey {
		k, v, ok := strings.Cut(rest, r.KeySeparator)
		if !ok {
			if !r.IgnoreError {
				return nil, fmt.Errorf("no key separator found on line number %d: '%s'", n, line)
			}
			rec.Value = r.nullable(rest)
			return rec, nil
		}
		rec.Key, rest = r.nullable(k), v
	}
	rec.Value = r.nullable(rest)
	return rec, nil
}
