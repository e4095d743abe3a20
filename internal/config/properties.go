package config

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseProperties reads a Java .properties document the way
// java.util.Properties.load does, which is how Kafka reads server.properties:
//
//   - a line whose first non-blank character is '#' or '!' is a comment;
//   - "key=value", "key: value" and "key value" all work; blanks (space, tab,
//     form feed) before the key and around the separator are skipped;
//   - a line ending in an odd number of backslashes continues on the next line,
//     whose leading blanks are skipped;
//   - \t \n \r \f and \uXXXX are escapes, and a backslash before any other
//     character stands for that character (so "a\=b" is a key with '=').
//
// Values keep trailing blanks, as Java does; the config parser trims them, as
// Kafka's ConfigDef does. A later duplicate key wins. The only error is a
// malformed \uXXXX escape or a read error.
func ParseProperties(r io.Reader) (map[string]string, error) {
	props := make(map[string]string)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	sc.Split(scanPropertyLines)
	lineNo := 0
	var logical strings.Builder
	startLine := 0
	continuing := false
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if continuing {
			line = strings.TrimLeft(line, " \t\f")
		} else {
			trimmed := strings.TrimLeft(line, " \t\f")
			if trimmed == "" || trimmed[0] == '#' || trimmed[0] == '!' {
				continue
			}
			line = trimmed
			startLine = lineNo
			logical.Reset()
		}
		if endsWithOddBackslashes(line) {
			logical.WriteString(line[:len(line)-1])
			continuing = true
			continue
		}
		logical.WriteString(line)
		continuing = false
		key, value, err := splitProperty(logical.String())
		if err != nil {
			return nil, fmt.Errorf("properties line %d: %w", startLine, err)
		}
		props[key] = value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read properties: %w", err)
	}
	if continuing {
		// Java treats a continuation at end of input as the end of the line.
		key, value, err := splitProperty(logical.String())
		if err != nil {
			return nil, fmt.Errorf("properties line %d: %w", startLine, err)
		}
		props[key] = value
	}
	return props, nil
}

// LoadPropertiesFile opens path and parses it with ParseProperties.
func LoadPropertiesFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open config file: %w", err)
	}
	defer f.Close()
	props, err := ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return props, nil
}

// scanPropertyLines splits on \n, \r and \r\n, as Java's LineReader does.
func scanPropertyLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	for i, c := range data {
		switch c {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // need one more byte to tell \r from \r\n
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func isPropBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// splitProperty splits one logical line (leading blanks already removed) into
// its unescaped key and value.
func splitProperty(line string) (string, string, error) {
	keyEnd := len(line)
	valueStart := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++ // skip the escaped character
			continue
		}
		if c == '=' || c == ':' {
			keyEnd, valueStart = i, i+1
			break
		}
		if isPropBlank(c) {
			keyEnd = i
			j := i
			for j < len(line) && isPropBlank(line[j]) {
				j++
			}
			if j < len(line) && (line[j] == '=' || line[j] == ':') {
				j++
			}
			valueStart = j
			break
		}
	}
	for valueStart < len(line) && isPropBlank(line[valueStart]) {
		valueStart++
	}
	key, err := unescapeProperty(line[:keyEnd])
	if err != nil {
		return "", "", err
	}
	value, err := unescapeProperty(line[valueStart:])
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break // a lone trailing backslash is dropped, as in Java
		}
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return "", fmt.Errorf("malformed \\uxxxx encoding in %q", s)
			}
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(s)+1 && strings.HasPrefix(s[i+1:], `\u`) {
				if r2, ok := hex4(s, i+3); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// hex4 decodes the four hex digits of a \uXXXX escape starting at s[at].
func hex4(s string, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, h := range []byte(s[at : at+4]) {
		var v byte
		switch {
		case h >= '0' && h <= '9':
			v = h - '0'
		case h >= 'a' && h <= 'f':
			v = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			v = h - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
