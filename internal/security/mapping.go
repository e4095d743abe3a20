package security

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// DistinguishedName is the subject of cert as Java's
// X500Principal.getName() writes it (RFC 2253), the string Kafka's
// DefaultKafkaPrincipalBuilder hands to ssl.principal.mapping.rules:
//
//   - relative distinguished names last to first, joined by ',';
//     the attributes of a multi-valued one in encoded order, joined by '+';
//   - only CN, C, L, ST, O, OU, STREET, DC and UID by keyword; any other
//     attribute (emailAddress, serialNumber, title...) as its dotted OID
//     with '#' and the hex of its DER value, e.g.
//     1.2.840.113549.1.9.1=#160f626f62406578616d706c652e636f6d;
//   - a value that is not a PrintableString, UTF8String, IA5String,
//     TeletexString, GeneralString or BMPString also as '#' and hex;
//   - in string values a backslash before each of , = + < > # ; " \ and
//     before leading or trailing spaces (and carriage returns), NUL as \00,
//     everything else (non-ASCII included) as it is.
//
// BMPString and TeletexString values are decoded as UTF-16 and Latin-1, as
// recent Java does (Java 17 decodes them wrongly).
func DistinguishedName(cert *x509.Certificate) string {
	return distinguishedName(cert.RawSubject)
}

var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// ASN.1 universal tags of the directory string types Java decodes.
const (
	tagUTF8String      = 12
	tagPrintableString = 19
	tagT61String       = 20
	tagIA5String       = 22
	tagGeneralString   = 27
	tagBMPString       = 30
)

type attributeTypeAndValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// distinguishedName formats a DER Name (RDNSequence). A name Go's parser
// accepted but this one cannot read falls back to the hex of the whole
// name, so that it never maps to another name's principal.
func distinguishedName(raw []byte) string {
	var rdns []asn1.RawValue
	if rest, err := asn1.Unmarshal(raw, &rdns); err != nil || len(rest) > 0 {
		return "#" + hex.EncodeToString(raw)
	}
	parts := make([]string, 0, len(rdns))
	for i := len(rdns) - 1; i >= 0; i-- {
		set := rdns[i]
		if set.Class != asn1.ClassUniversal || set.Tag != asn1.TagSet {
			return "#" + hex.EncodeToString(raw)
		}
		var avas []string
		for rest := set.Bytes; len(rest) > 0; {
			var atv attributeTypeAndValue
			var err error
			if rest, err = asn1.Unmarshal(rest, &atv); err != nil {
				return "#" + hex.EncodeToString(raw)
			}
			avas = append(avas, formatAVA(atv))
		}
		parts = append(parts, strings.Join(avas, "+"))
	}
	return strings.Join(parts, ",")
}

func formatAVA(atv attributeTypeAndValue) string {
	oid := atv.Type.String()
	keyword, ok := rfc2253Keywords[oid]
	if !ok {
		return oid + "=#" + hex.EncodeToString(atv.Value.FullBytes)
	}
	s, ok := directoryString(atv.Value)
	if !ok {
		return keyword + "=#" + hex.EncodeToString(atv.Value.FullBytes)
	}
	return keyword + "=" + escapeRFC2253(s)
}

// directoryString decodes the string types Java's AVA writes as text.
func directoryString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal || v.IsCompound {
		return "", false
	}
	switch v.Tag {
	case tagUTF8String:
		// Each invalid byte becomes U+FFFD, as Java's decoder does.
		var b strings.Builder
		for _, r := range string(v.Bytes) {
			b.WriteRune(r)
		}
		return b.String(), true
	case tagPrintableString, tagIA5String, tagT61String, tagGeneralString:
		// Latin-1: each byte is the code point.
		r := make([]rune, len(v.Bytes))
		for i, c := range v.Bytes {
			r[i] = rune(c)
		}
		return string(r), true
	case tagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(v.Bytes)/2)
		for i := range u {
			u[i] = uint16(v.Bytes[2*i])<<8 | uint16(v.Bytes[2*i+1])
		}
		return string(utf16.Decode(u)), true
	}
	return "", false
}

// escapeRFC2253 escapes a value the way Java's AVA.toRFC2253String does.
func escapeRFC2253(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case strings.ContainsRune(`,=+<>#;"\`, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == 0:
			b.WriteString(`\00`)
		default:
			b.WriteRune(r)
		}
	}
	e := b.String()
	isSpace := func(c byte) bool { return c == ' ' || c == '\r' }
	lead := 0
	for lead < len(e) && isSpace(e[lead]) {
		lead++
	}
	trail := len(e)
	for trail > lead && isSpace(e[trail-1]) {
		trail--
	}
	if lead == 0 && trail == len(e) {
		return e
	}
	b.Reset()
	for i := 0; i < len(e); i++ {
		if i < lead || i >= trail {
			b.WriteByte('\\')
		}
		b.WriteByte(e[i])
	}
	return b.String()
}

// DefaultPrincipalMappingRules is the default of
// ssl.principal.mapping.rules: the distinguished name as it is.
const DefaultPrincipalMappingRules = "DEFAULT"

// PrincipalMapper turns the subject of an mTLS client's certificate into
// its principal, applying ssl.principal.mapping.rules as Kafka's
// SslPrincipalMapper does: the first rule whose pattern matches the whole
// distinguished name gives the name; DEFAULT gives the name unchanged. It
// is immutable and safe for concurrent use: the broker parses the rules of
// a listener once and calls Principal for each authenticated connection.
type PrincipalMapper struct {
	rules []mappingRule
}

type mappingRule struct {
	isDefault   bool
	text        string         // as Kafka's toString shows it
	pattern     *regexp.Regexp // the rule's pattern, unanchored (for replacing)
	whole       *regexp.Regexp // the pattern anchored at both ends (for matching)
	replacement string
	lower       bool
	upper       bool
}

// The grammar of Kafka's rules, as Kafka's SslPrincipalMapper writes it:
// DEFAULT, or RULE:pattern/replacement/ with an optional L or U flag, where
// pattern and replacement may escape '/' with '\'. Go's regexp chooses the
// same match as Java's backtracking one for these expressions.
const rulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	ruleSplitter = regexp.MustCompile(`\s*(` + rulePattern + `)\s*(,\s*|$)`)
	ruleParser   = regexp.MustCompile(`^(?:` + rulePattern + `)`)
)

// ParsePrincipalMappingRules parses ssl.principal.mapping.rules (one per
// TLS listener, with listener.name.<name>. resolved by the caller): a comma
// separated list of DEFAULT and RULE:pattern/replacement/[L|U], e.g.
//
//	RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,
//	RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,
//	DEFAULT
//
// An empty (or blank) string is Kafka's default, DEFAULT, so that callers
// can pass an unset key as it is; a list of only empty rules (",") has no
// rules and refuses every name, as in Kafka. Patterns are Go regular expressions
// (RE2): Java-only constructs such as look-around, back-references in the
// pattern and possessive quantifiers are refused here. Replacements use
// Java's syntax: $n and ${name} refer to groups, '\' makes the next
// character literal; a $n beyond the pattern's groups is literal text, as
// Kafka makes it. Errors Kafka would raise only when a client connects (a
// group reference in a pattern without groups, a dangling '\' or '$') are
// refused here.
func ParsePrincipalMappingRules(rules string) (*PrincipalMapper, error) {
	rules = strings.TrimFunc(rules, func(r rune) bool { return r <= ' ' }) // Java's String.trim
	if rules == "" {
		rules = DefaultPrincipalMappingRules
	}
	m := &PrincipalMapper{}
	for _, split := range ruleSplitter.FindAllStringSubmatch(rules, -1) {
		text := split[1]
		g := ruleParser.FindStringSubmatchIndex(text)
		if g == nil {
			return nil, fmt.Errorf("ssl.principal.mapping.rules: invalid rule %q", text)
		}
		if g[1] != len(text) {
			return nil, fmt.Errorf("ssl.principal.mapping.rules: invalid rule %q: unexpected %q", text, text[g[1]:])
		}
		group := func(i int) (string, bool) {
			if g[2*i] < 0 {
				return "", false
			}
			return text[g[2*i]:g[2*i+1]], true
		}
		if _, ok := group(1); ok {
			m.rules = append(m.rules, mappingRule{isDefault: true, text: "DEFAULT"})
			continue
		}
		pattern, ok := group(2)
		if !ok {
			continue // an empty rule, as ",," leaves: ignored
		}
		replacement, _ := group(4)
		flag, _ := group(6)
		r, err := newMappingRule(pattern, replacement, flag)
		if err != nil {
			return nil, fmt.Errorf("ssl.principal.mapping.rules: rule %q: %w", text, err)
		}
		m.rules = append(m.rules, r)
	}
	return m, nil
}

func newMappingRule(pattern, replacement, flag string) (mappingRule, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return mappingRule{}, fmt.Errorf("pattern: %w", err)
	}
	whole, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return mappingRule{}, fmt.Errorf("pattern: %w", err)
	}
	r := mappingRule{
		text:        "RULE:" + pattern + "/" + replacement,
		pattern:     re,
		whole:       whole,
		replacement: replacement,
		lower:       flag == "L",
		upper:       flag == "U",
	}
	if flag != "" {
		r.text += "/" + flag
	}
	// Expand against a match of nothing to find reference errors now.
	if _, err := r.expand("", make([]int, 2*(re.NumSubexp()+1))); err != nil {
		return mappingRule{}, fmt.Errorf("replacement %q: %w", replacement, err)
	}
	return r, nil
}

// apply returns the name the rule gives dn, or false when it does not
// match.
func (r mappingRule) apply(dn string) (string, bool, error) {
	if r.isDefault {
		return dn, true, nil
	}
	if !r.whole.MatchString(dn) {
		return "", false, nil
	}
	// Java's String.replaceAll: every match replaced. (Go, unlike Java,
	// skips an empty match right after a match, which only a pattern
	// such as ".*" without anchors produces.)
	var b strings.Builder
	last := 0
	for _, loc := range r.pattern.FindAllStringSubmatchIndex(dn, -1) {
		b.WriteString(dn[last:loc[0]])
		s, err := r.expand(dn, loc)
		if err != nil {
			return "", false, err
		}
		b.WriteString(s)
		last = loc[1]
	}
	b.WriteString(dn[last:])
	name := b.String()
	switch {
	case r.lower:
		name = strings.ToLower(name)
	case r.upper:
		name = strings.ToUpper(name)
	}
	return name, true, nil
}

// expand writes the replacement for one match with Java's
// Matcher.appendReplacement syntax, and Kafka's rule that a reference to
// a group the pattern does not have is literal text.
func (r mappingRule) expand(s string, loc []int) (string, error) {
	groups := r.pattern.NumSubexp()
	text := func(i int) string {
		if loc[2*i] < 0 {
			return ""
		}
		return s[loc[2*i]:loc[2*i+1]]
	}
	repl := r.replacement
	var b strings.Builder
	for i := 0; i < len(repl); {
		c := repl[i]
		switch {
		case c == '\\':
			if i+1 == len(repl) {
				return "", errors.New("'\\' at the end escapes nothing")
			}
			_, size := utf8.DecodeRuneInString(repl[i+1:])
			b.WriteString(repl[i+1 : i+1+size])
			i += 1 + size
		case c == '$':
			if i+1 == len(repl) {
				return "", errors.New("'$' at the end refers to no group")
			}
			if repl[i+1] == '{' {
				end := strings.IndexByte(repl[i+2:], '}')
				if end < 0 {
					return "", errors.New("'${' without '}'")
				}
				name := repl[i+2 : i+2+end]
				idx := r.pattern.SubexpIndex(name)
				if idx < 0 {
					return "", fmt.Errorf("no group named %q", name)
				}
				b.WriteString(text(idx))
				i += 2 + end + 1
				continue
			}
			d := repl[i+1]
			if d < '0' || d > '9' {
				return "", fmt.Errorf("'$' must be followed by a group number or {name}, not %q", d)
			}
			ref := int(d - '0')
			if ref > groups {
				if groups == 0 {
					return "", fmt.Errorf("$%d refers to a group, but the pattern has none", ref)
				}
				b.WriteByte('$') // Kafka makes it literal
				i++
				continue
			}
			i += 2
			// Java takes further digits while the number stays a group.
			for i < len(repl) && repl[i] >= '0' && repl[i] <= '9' {
				next := ref*10 + int(repl[i]-'0')
				if next > groups {
					break
				}
				ref = next
				i++
			}
			b.WriteString(text(ref))
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// Name maps a distinguished name (as DistinguishedName writes it) with the
// rules. It is an error when no rule applies or a rule gives an empty name.
func (m *PrincipalMapper) Name(dn string) (string, error) {
	for _, r := range m.rules {
		name, ok, err := r.apply(dn)
		if err != nil {
			return "", fmt.Errorf("map %q with %s: %w", dn, r.text, err)
		}
		if !ok {
			continue
		}
		if name == "" {
			return "", fmt.Errorf("principal mapping rule %s maps %q to an empty name", r.text, dn)
		}
		return name, nil
	}
	return "", fmt.Errorf("no principal mapping rule applies to %q (rules %s)", dn, m)
}

// Principal is the principal of an mTLS client whose verified leaf
// certificate is cert: User:<name> with the name the rules give its
// subject's distinguished name. A nil cert (a client that sent none under
// ssl.client.auth=requested) is Anonymous, as in Kafka. An error means the
// connection must not be authenticated.
func (m *PrincipalMapper) Principal(cert *x509.Certificate) (Principal, error) {
	if cert == nil {
		return Anonymous, nil
	}
	name, err := m.Name(DistinguishedName(cert))
	if err != nil {
		return Principal{}, err
	}
	return User(name), nil
}

// String lists the rules as Kafka's SslPrincipalMapper.toString does,
// e.g. "[RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT]".
func (m *PrincipalMapper) String() string {
	texts := make([]string, len(m.rules))
	for i, r := range m.rules {
		texts[i] = r.text
	}
	return "[" + strings.Join(texts, ", ") + "]"
}
