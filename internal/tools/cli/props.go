package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Props is a set of Kafka client properties (name to value), as read from a
// properties file or key=value arguments.
type Props map[string]string

// Clone returns a copy of p that can be changed without changing p.
func (p Props) Clone() Props {
	c := make(Props, len(p))
	for k, v := range p {
		c[k] = v
	}
	return c
}

// Merge copies every property of o into p, replacing values p already has,
// and returns p.
func (p Props) Merge(o Props) Props {
	for k, v := range o {
		p[k] = v
	}
	return p
}

// LoadProps reads a Java properties file: key=value, key: value or
// key value per line, # and ! start comments, a trailing backslash continues
// the line, and \t \n \r \f \uXXXX and \<char> are unescaped. An empty path
// gives an empty set.
func LoadProps(path string) (Props, error) {
	p := Props{}
	if path == "" {
		return p, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read properties file: %w", err)
	}
	if err := parsePropsText(string(data), p); err != nil {
		return nil, fmt.Errorf("properties file %s: %w", path, err)
	}
	return p, nil
}

func parsePropsText(text string, p Props) error {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines: an odd number of trailing backslashes.
		for endsWithContinuation(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if endsWithContinuation(line) {
			line = line[:len(line)-1]
		}
		key, value := splitPropLine(line)
		k, err := unescapeProp(key)
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		v, err := unescapeProp(value)
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		p[k] = v
	}
	return nil
}

func endsWithContinuation(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitPropLine splits at the first unescaped '=', ':' or whitespace; the
// separator may be surrounded by whitespace.
func splitPropLine(line string) (key, value string) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	key = line[:end]
	rest := strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

func unescapeProp(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 >= len(s) {
				return "", fmt.Errorf("malformed \\uXXXX escape in %q", s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("malformed \\uXXXX escape in %q", s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// ParseProps reads key=value arguments such as those of --producer-props,
// --producer-property or --property. The value is everything after the first
// '='; an argument without '=' or with an empty key is an error naming it.
func ParseProps(kvs []string) (Props, error) {
	p := Props{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid property %q: expected key=value", kv)
		}
		p[k] = v
	}
	return p, nil
}
