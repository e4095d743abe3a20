package sasl

import (
	"errors"
	"fmt"
	"strings"
)

// Login module class names of Kafka's built-in mechanisms, as they appear
// in sasl.jaas.config values.
const (
	PlainLoginModule       = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModule       = "org.apache.kafka.common.security.scram.ScramLoginModule"
	OAuthBearerLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

// JAASEntry is the one login module entry of a Kafka sasl.jaas.config
// value: `<LoginModule class> <flag> key="value" ...;`. Flag is one of
// "required", "requisite", "sufficient", "optional" (lower case whatever
// the input's case). A later option with the same key replaces an earlier
// one, as in Kafka. A JAASEntry is a value; nothing here modifies one.
type JAASEntry struct {
	LoginModule string
	Flag        string
	Options     map[string]string
}

// ParseJAAS parses a sasl.jaas.config value with Kafka's rules (JaasConfig,
// which runs java.io.StreamTokenizer): words are letters, digits and
// . - _ $ (starting with a letter, '-', '_' or '$'); values may be quoted
// with " or ' and use Java escapes (\" \\ \n \t \ddd ...); // and /* */
// start comments; an unquoted number is not a value (option1=3 is an
// error, option1="3" is not); the entry ends with ';'. Kafka requires
// exactly one login module in sasl.jaas.config. Errors carry Kafka's text.
//
// Backslash line continuations belong to the .properties format and must
// have been joined by the properties reader before ParseJAAS sees the value.
func ParseJAAS(s string) (JAASEntry, error) {
	t := &jaasTokenizer{src: []rune(s)}
	var entries []JAASEntry
	for {
		tok := t.next()
		if tok.kind == tokEOF {
			break
		}
		e, err := parseJAASEntry(t, tok)
		if err != nil {
			return JAASEntry{}, err
		}
		entries = append(entries, e)
	}
	switch len(entries) {
	case 0:
		return JAASEntry{}, errors.New("Login module not specified in JAAS config")
	case 1:
		return entries[0], nil
	default:
		return JAASEntry{}, fmt.Errorf("JAAS config property contains %d login modules, should be 1 module", len(entries))
	}
}

func parseJAASEntry(t *jaasTokenizer, first jaasToken) (JAASEntry, error) {
	module, ok := first.value()
	if !ok || module == "" {
		return JAASEntry{}, errors.New("Login module name not specified in JAAS config")
	}
	tok := t.next()
	if tok.kind == tokEOF {
		return JAASEntry{}, errors.New("Login module control flag not specified in JAAS config")
	}
	flag, ok := tok.value()
	if !ok {
		return JAASEntry{}, errors.New("Login module control flag is not available in the JAAS config")
	}
	switch strings.ToLower(flag) {
	case "required", "requisite", "sufficient", "optional":
		flag = strings.ToLower(flag)
	default:
		return JAASEntry{}, fmt.Errorf("Invalid login module control flag '%s' in JAAS config", flag)
	}
	options := map[string]string{}
	for {
		tok = t.next()
		if tok.kind == tokEOF || tok.is(';') {
			break
		}
		key, keyOK := tok.value()
		if !keyOK {
			key = "null" // what Kafka prints for a key that is not a word
		}
		if eq := t.next(); !eq.is('=') {
			return JAASEntry{}, fmt.Errorf("Value not specified for key '%s' in JAAS config", key)
		}
		value, ok := t.next().value()
		if !ok {
			return JAASEntry{}, fmt.Errorf("Value not specified for key '%s' in JAAS config", key)
		}
		if !keyOK {
			return JAASEntry{}, fmt.Errorf("Option name not specified for value '%s' in JAAS config", value)
		}
		options[key] = value
	}
	if !tok.is(';') {
		return JAASEntry{}, errors.New("JAAS config entry not terminated by semi-colon")
	}
	return JAASEntry{LoginModule: module, Flag: flag, Options: options}, nil
}

// PlainUsersFromJAAS returns the users of Kafka's default PLAIN callback
// handler: every user_<name>="<password>" option. As in Kafka, only a
// PlainLoginModule entry provides users; any other entry yields none.
func PlainUsersFromJAAS(e JAASEntry) PlainUsers {
	users := PlainUsers{}
	if e.LoginModule != PlainLoginModule {
		return users
	}
	for k, v := range e.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok && name != "" {
			users[name] = v
		}
	}
	return users
}

type jaasTokenKind int

const (
	tokEOF      jaasTokenKind = iota
	tokWord                   // unquoted word
	tokQuoted                 // "..." or '...'
	tokNumber                 // unquoted number: has no string value
	tokOrdinary               // any other single character, e.g. = ;
)

type jaasToken struct {
	kind jaasTokenKind
	text string // tokWord, tokQuoted
	char rune   // tokOrdinary
}

// value is the token's string value (StreamTokenizer's sval): words and
// quoted strings have one, numbers and single characters do not.
func (t jaasToken) value() (string, bool) {
	return t.text, t.kind == tokWord || t.kind == tokQuoted
}

func (t jaasToken) is(c rune) bool { return t.kind == tokOrdinary && t.char == c }

// jaasTokenizer splits a JAAS config the way java.io.StreamTokenizer does
// with the syntax Kafka's JaasConfig sets up: the default syntax
// (whitespace 0-32, letters and 160-255 and everything above 255 are word
// characters, digits . - parse as numbers, " and ' quote, / comments to
// end of line) plus slash-slash and slash-star comments and - _ $ as
// word characters. Not safe for concurrent use.
type jaasTokenizer struct {
	src []rune
	pos int
}

const eof = -1

func (t *jaasTokenizer) read() rune {
	if t.pos >= len(t.src) {
		t.pos = len(t.src) + 1 // reading past the end stays at EOF
		return eof
	}
	r := t.src[t.pos]
	t.pos++
	return r
}

// unread steps back over the last read, which must not have been EOF.
func (t *jaasTokenizer) unread() { t.pos-- }

func jaasWhitespace(r rune) bool { return r >= 0 && r <= ' ' }

func jaasAlpha(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 160 ||
		r == '-' || r == '_' || r == '$'
}

func jaasDigit(r rune) bool { return r >= '0' && r <= '9' || r == '.' || r == '-' }

func (t *jaasTokenizer) next() jaasToken {
	for {
		c := t.read()
		for jaasWhitespace(c) {
			c = t.read()
		}
		switch {
		case c == eof:
			return jaasToken{kind: tokEOF}
		case jaasDigit(c):
			// '-' is both a digit and a word character; the number rule
			// comes first, and a '-' not followed by a number stands alone.
			if c == '-' {
				d := t.read()
				if d != '.' && (d < '0' || d > '9') {
					if d != eof {
						t.unread()
					}
					return jaasToken{kind: tokOrdinary, char: '-'}
				}
				t.unread()
			} else {
				t.unread()
			}
			seenDot := false
			for {
				d := t.read()
				if d == '.' && !seenDot {
					seenDot = true
				} else if d < '0' || d > '9' {
					if d != eof {
						t.unread()
					}
					break
				}
			}
			return jaasToken{kind: tokNumber}
		case jaasAlpha(c):
			start := t.pos - 1
			for {
				d := t.read()
				if d == eof {
					break
				}
				if !jaasAlpha(d) && !jaasDigit(d) {
					t.unread()
					break
				}
			}
			return jaasToken{kind: tokWord, text: string(t.src[start:min(t.pos, len(t.src))])}
		case c == '"' || c == '\'':
			return jaasToken{kind: tokQuoted, text: t.quoted(c)}
		case c == '/':
			if !t.comment() {
				return jaasToken{kind: tokEOF}
			}
			// comment skipped: go on with the next token
		default:
			return jaasToken{kind: tokOrdinary, char: c}
		}
	}
}

// comment skips a comment whose '/' was just read. It returns false when
// the input ended inside a /* comment (StreamTokenizer then reports EOF).
func (t *jaasTokenizer) comment() bool {
	c := t.read()
	switch c {
	case '*':
		prev := rune(0)
		for {
			c = t.read()
			if c == '/' && prev == '*' {
				return true
			}
			// StreamTokenizer consumes one extra character after a line
			// end before it looks for the closing "*/" again.
			if c == '\r' {
				c = t.read()
				if c == '\n' {
					c = t.read()
				}
			} else if c == '\n' {
				c = t.read()
			}
			if c == eof {
				return false
			}
			prev = c
		}
	case '/':
		t.skipLine()
		return true
	case eof:
		return false
	default:
		// A lone '/' is the default comment character: the rest of the
		// line after the character already read is a comment (so if that
		// character was a line end, the comment runs to the end of the
		// next line, as in StreamTokenizer).
		t.skipLine()
		return true
	}
}

func (t *jaasTokenizer) skipLine() {
	for {
		c := t.read()
		if c == eof {
			return
		}
		if c == '\n' || c == '\r' {
			t.unread()
			return
		}
	}
}

// quoted reads a quoted string whose opening quote q was just read. The
// string ends at the matching quote, or unterminated at a line end or the
// end of input, as in StreamTokenizer.
func (t *jaasTokenizer) quoted(q rune) string {
	var b strings.Builder
	for {
		d := t.read()
		switch {
		case d == eof:
			return b.String()
		case d == q:
			return b.String()
		case d == '\n' || d == '\r':
			t.unread()
			return b.String()
		case d != '\\':
			b.WriteRune(d)
			continue
		}
		c := t.read()
		switch {
		case c == eof:
			return b.String()
		case c >= '0' && c <= '7':
			// Octal escape: up to three digits, the first at most 3.
			first := c
			v := c - '0'
			if d2 := t.read(); d2 >= '0' && d2 <= '7' {
				v = v<<3 + d2 - '0'
				if d3 := t.read(); d3 >= '0' && d3 <= '7' && first <= '3' {
					v = v<<3 + d3 - '0'
				} else if d3 != eof {
					t.unread()
				}
			} else if d2 != eof {
				t.unread()
			}
			b.WriteRune(v)
		default:
			switch c {
			case 'a':
				c = 0x7
			case 'b':
				c = '\b'
			case 'f':
				c = 0xC
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'v':
				c = 0xB
			}
			b.WriteRune(c)
		}
	}
}

// ParseJAASFile parses a JAAS configuration file, the one a JVM reads from
// -Djava.security.auth.login.config (Kafka's brokers take it from
// KAFKA_OPTS): sections `Name { entry; ... };` whose entries are written
// as in sasl.jaas.config. It returns the entries of each section by name.
func ParseJAASFile(s string) (map[string][]JAASEntry, error) {
	t := &jaasTokenizer{src: []rune(s)}
	out := map[string][]JAASEntry{}
	for {
		tok := t.next()
		if tok.kind == tokEOF {
			return out, nil
		}
		name, ok := tok.value()
		if !ok {
			return nil, errors.New("JAAS file: a section name was expected")
		}
		if !t.next().is('{') {
			return nil, fmt.Errorf("JAAS file: '{' expected after %s", name)
		}
		for {
			tok = t.next()
			if tok.is('}') {
				break
			}
			if tok.kind == tokEOF {
				return nil, fmt.Errorf("JAAS file: section %s is not closed by '}'", name)
			}
			e, err := parseJAASEntry(t, tok)
			if err != nil {
				return nil, fmt.Errorf("JAAS file section %s: %w", name, err)
			}
			out[name] = append(out[name], e)
		}
		if !t.next().is(';') {
			return nil, fmt.Errorf("JAAS file: ';' expected after section %s", name)
		}
	}
}

// JAASFileFromOpts is the path of -Djava.security.auth.login.config in
// opts (KAFKA_OPTS, JVM options separated by spaces), "" when absent.
func JAASFileFromOpts(opts string) string {
	for _, f := range strings.Fields(opts) {
		if v, ok := strings.CutPrefix(f, "-Djava.security.auth.login.config="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
