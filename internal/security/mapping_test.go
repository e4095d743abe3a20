package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/silkworm/silkworm/internal/security/securitytest"
)

// ava is one attribute of a test subject, encoded with the given ASN.1 tag.
type ava struct {
	oid asn1.ObjectIdentifier
	tag int
	val []byte
}

// rawName encodes an RDNSequence from sets of attributes, each set in the
// order given (DER would sort them; certificates in the wild do not always).
func rawName(t *testing.T, rdns ...[]ava) []byte {
	t.Helper()
	mustMarshal := func(v any) []byte {
		b, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var seq []byte
	for _, rdn := range rdns {
		var set []byte
		for _, a := range rdn {
			body := append(mustMarshal(a.oid), mustMarshal(asn1.RawValue{Tag: a.tag, Bytes: a.val})...)
			set = append(set, mustMarshal(asn1.RawValue{Tag: asn1.TagSequence, IsCompound: true, Bytes: body})...)
		}
		seq = append(seq, mustMarshal(asn1.RawValue{Tag: asn1.TagSet, IsCompound: true, Bytes: set})...)
	}
	return mustMarshal(asn1.RawValue{Tag: asn1.TagSequence, IsCompound: true, Bytes: seq})
}

var (
	oidCN     = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidC      = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidL      = asn1.ObjectIdentifier{2, 5, 4, 7}
	oidST     = asn1.ObjectIdentifier{2, 5, 4, 8}
	oidStreet = asn1.ObjectIdentifier{2, 5, 4, 9}
	oidO      = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU     = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidTitle  = asn1.ObjectIdentifier{2, 5, 4, 12}
	oidSerial = asn1.ObjectIdentifier{2, 5, 4, 5}
	oidDC     = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidUID    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEmail  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

func utf8v(oid asn1.ObjectIdentifier, s string) ava { return ava{oid, tagUTF8String, []byte(s)} }
func printv(oid asn1.ObjectIdentifier, s string) ava {
	return ava{oid, tagPrintableString, []byte(s)}
}

func bmpBytes(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}

// The expected strings are what Java 25's X500Principal.getName() returns
// for the same encodings (Java 17 agrees except for BMPString and
// TeletexString, which it decodes wrongly). Some encodings (GeneralString,
// non-string values, invalid UTF-8) are refused by Go's certificate parser,
// so no TLS peer can present them; they are checked on the raw name.
func TestDistinguishedNameMatchesJava(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	issuer := &x509.Certificate{Subject: pkix.Name{CommonName: "issuer"}, PublicKey: key.Public()}
	cases := []struct {
		name string
		rdns [][]ava
		want string
	}{
		{"order is last RDN first",
			[][]ava{{printv(oidC, "US")}, {printv(oidST, "CA")}, {printv(oidL, "Palo Alto")}, {printv(oidO, "Acme")}, {printv(oidOU, "Eng")}, {utf8v(oidCN, "alice")}},
			"CN=alice,OU=Eng,O=Acme,L=Palo Alto,ST=CA,C=US"},
		{"special characters escaped",
			[][]ava{{utf8v(oidCN, `a,b+c"d\e<f>g;h=i#j`)}},
			`CN=a\,b\+c\"d\\e\<f\>g\;h\=i\#j`},
		{"leading and trailing spaces",
			[][]ava{{utf8v(oidCN, " #lead")}, {utf8v(oidOU, "trail  ")}, {utf8v(oidO, "  ")}},
			`O=\ \ ,OU=trail\ \ ,CN=\ \#lead`},
		{"inner space kept, '#' escaped anywhere",
			[][]ava{{utf8v(oidCN, "a #b ")}},
			`CN=a \#b\ `},
		{"already escaped text escaped again",
			[][]ava{{utf8v(oidCN, `Tkac\, Adam`)}},
			`CN=Tkac\\\, Adam`},
		{"multi-valued RDN in encoded order",
			[][]ava{{utf8v(oidOU, "b"), utf8v(oidCN, "a")}, {printv(oidC, "US")}},
			"C=US,OU=b+CN=a"},
		{"UID and CN in one RDN",
			[][]ava{{utf8v(oidCN, "a"), utf8v(oidUID, "42")}},
			"CN=a+UID=42"},
		{"emailAddress as OID and hex",
			[][]ava{{utf8v(oidCN, "bob")}, {{oidEmail, tagIA5String, []byte("bob@example.com")}}},
			"1.2.840.113549.1.9.1=#160f626f62406578616d706c652e636f6d,CN=bob"},
		{"serialNumber and title as OID and hex",
			[][]ava{{printv(oidSerial, "1234")}, {utf8v(oidTitle, "boss")}, {utf8v(oidCN, "x")}},
			"CN=x,2.5.4.12=#0c04626f7373,2.5.4.5=#130431323334"},
		{"DC, UID, STREET keywords",
			[][]ava{{{oidDC, tagIA5String, []byte("com")}}, {{oidDC, tagIA5String, []byte("example")}}, {utf8v(oidUID, "jdoe")}, {printv(oidStreet, "1 Main St")}},
			"STREET=1 Main St,UID=jdoe,DC=example,DC=com"},
		{"unknown OID",
			[][]ava{{utf8v(asn1.ObjectIdentifier{1, 2, 3, 4}, "v")}},
			"1.2.3.4=#0c0176"},
		{"non-ASCII UTF8String as is",
			[][]ava{{utf8v(oidCN, "Zoë 日本")}},
			"CN=Zoë 日本"},
		{"BMPString decoded",
			[][]ava{{{oidCN, tagBMPString, bmpBytes("Ünï 日")}}},
			"CN=Ünï 日"},
		{"TeletexString as Latin-1",
			[][]ava{{{oidCN, tagT61String, []byte{'c', 'a', 'f', 0xe9}}}},
			"CN=café"},
		{"IA5String CN escaped",
			[][]ava{{{oidCN, tagIA5String, []byte("i,a")}}},
			`CN=i\,a`},
		{"GeneralString decoded",
			[][]ava{{{oidCN, tagGeneralString, []byte("gen")}}},
			"CN=gen"},
		{"UniversalString as hex",
			[][]ava{{{oidCN, 28, []byte{0, 0, 0, 'a'}}}},
			"CN=#1c0400000061"},
		{"VisibleString as hex",
			[][]ava{{{oidCN, 26, []byte("vis")}}},
			"CN=#1a03766973"},
		{"non-string value as hex",
			[][]ava{{{oidCN, asn1.TagInteger, []byte{1}}}},
			"CN=#020101"},
		{"NUL as \\00",
			[][]ava{{utf8v(oidCN, "a\x00b")}},
			`CN=a\00b`},
		{"trailing carriage return escaped, tab not",
			[][]ava{{utf8v(oidCN, "x\r")}, {utf8v(oidOU, "\ta b\t")}},
			"OU=\ta b\t,CN=x\\\r"},
		{"other punctuation as is",
			[][]ava{{utf8v(oidCN, "a_b!c@d*e&f")}},
			"CN=a_b!c@d*e&f"},
		{"invalid UTF-8 replaced per byte",
			[][]ava{{{oidCN, tagUTF8String, []byte{'a', 0xff, 0xfe, 'b'}}}},
			"CN=a\ufffd\ufffdb"},
		{"empty subject", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := rawName(t, tc.rdns...)
			if got := distinguishedName(raw); got != tc.want {
				t.Errorf("distinguishedName = %q, want %q", got, tc.want)
			}
			// Through a certificate too, when Go's parser accepts it.
			tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), RawSubject: raw, NotAfter: time.Now().Add(time.Hour)}
			der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), key)
			if err != nil {
				t.Fatal(err)
			}
			if cert, err := x509.ParseCertificate(der); err == nil {
				if got := DistinguishedName(cert); got != tc.want {
					t.Errorf("DistinguishedName = %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestDistinguishedNameOfGoSubject(t *testing.T) {
	ca := securitytest.NewCA(t)
	c := ca.IssueTemplate(t, &x509.Certificate{Subject: pkix.Name{
		CommonName:         "Duke",
		OrganizationalUnit: []string{"ServiceUsers"},
		Organization:       []string{"Org"},
		Country:            []string{"US"},
	}})
	// Go writes C, O, OU, CN; RFC 2253 reverses that.
	if got, want := DistinguishedName(c.Leaf), "CN=Duke,OU=ServiceUsers,O=Org,C=US"; got != want {
		t.Errorf("DistinguishedName = %q, want %q", got, want)
	}
}

// Rules and expectations from Kafka's SslPrincipalMapperTest and its
// documentation of ssl.principal.mapping.rules.
func TestParsePrincipalMappingRulesValidity(t *testing.T) {
	for _, rules := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
		"RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
		"RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
		"RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
	} {
		if _, err := ParsePrincipalMappingRules(rules); err != nil {
			t.Errorf("ParsePrincipalMappingRules(%q): %v", rules, err)
		}
	}
	for _, rules := range []string{
		"default",
		"DEFAUL",
		"DEFAULT/L",
		"DEFAULT/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
		// Refused here, where Kafka fails only when a client connects.
		"RULE:^CN=.*$/$1/",     // a group the pattern does not have
		`RULE:^CN=(.*)$/$1\/`,  // escaped final '/': no closing '/' left
		"RULE:^CN=(.*)$/${x}/", // no such named group
		"RULE:^CN=(.*)$/$/",    // '$' refers to nothing
		// Java-only pattern syntax.
		"RULE:^CN=(?!admin)(.*)$/$1/",
	} {
		if m, err := ParsePrincipalMappingRules(rules); err == nil {
			t.Errorf("ParsePrincipalMappingRules(%q) = %v, want an error", rules, m)
		}
	}
}

func TestParsePrincipalMappingRulesSplitting(t *testing.T) {
	cases := []struct{ rules, want string }{
		{"", "[DEFAULT]"}, // unset: Kafka's default (Kafka itself reads "" as no rules)
		{"  ", "[DEFAULT]"},
		{"DEFAULT", "[DEFAULT]"},
		{"RULE://", "[RULE:/]"},
		{"RULE:/.*/", "[RULE:/.*]"},
		{"RULE:/.*/L", "[RULE:/.*/L]"},
		{"RULE://,DEFAULT", "[RULE:/, DEFAULT]"},
		{"  RULE:// ,  DEFAULT  ", "[RULE:/, DEFAULT]"},
		{"  RULE:   /     / ,  DEFAULT  ", "[RULE:   /     , DEFAULT]"},
		{"  RULE:  /     /U   ,DEFAULT  ", "[RULE:  /     /U, DEFAULT]"},
		{"  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ", "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]"},
		// Empty rules are ignored.
		{",   , , ,      , , ,   ", "[]"},
		{",,RULE://,,,DEFAULT,,", "[RULE:/, DEFAULT]"},
		{",  , RULE: /   /    ,,,   DEFAULT, ,   ", "[RULE: /   , DEFAULT]"},
		{"     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,", "[RULE:   /  /U, DEFAULT]"},
		// Escape sequences.
		{`RULE:\/\\\(\)\n\t/\/\//`, `[RULE:\/\\\(\)\n\t/\/\/]`},
		{`RULE:\**\/+/*/L,RULE:\/*\**/**/`, `[RULE:\**\/+/*/L, RULE:\/*\**/**]`},
		// Rules that look like rules.
		{`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`,
			`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`},
	}
	for _, tc := range cases {
		m, err := ParsePrincipalMappingRules(tc.rules)
		if err != nil {
			t.Errorf("ParsePrincipalMappingRules(%q): %v", tc.rules, err)
			continue
		}
		if got := m.String(); got != tc.want {
			t.Errorf("ParsePrincipalMappingRules(%q) = %s, want %s", tc.rules, got, tc.want)
		}
	}
}

func TestPrincipalMapperName(t *testing.T) {
	kafkaTest := strings.Join([]string{
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
		"DEFAULT",
	}, ", ")
	kafkaDocs := "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,DEFAULT"
	cases := []struct {
		rules, dn, want string
	}{
		{kafkaTest, "CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke"},
		{kafkaTest, "CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"},
		{kafkaTest, "cn=duke,ou=sme,dc=mycp,dc=com", "DUKE@SME"},
		{kafkaTest, "cN=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE"},
		{kafkaTest, "OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"},
		{kafkaDocs, "CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "serviceuser"},
		{kafkaDocs, "CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "adminuser@admin"},
		{"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U",
			"CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "ADMINUSER@ADMIN"},
		{`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`, `CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`, `Tkac\, Adam`},
		{"RULE:^CN=(.*?)(,.*)?$/$1/L", "CN=ÀLICE,O=x", "àlice"},
		// Java's replacement syntax, not Go's: "$1x" is group 1 then "x".
		{"RULE:^CN=(.*?),.*$/$1x/", "CN=a,O=b", "ax"},
		// A group beyond the pattern's is literal text (Kafka's rule).
		{"RULE:^CN=(.*?),.*$/$1-$4/", "CN=a,O=b", "a-$4"},
		// Digits extend a group number only while it stays a group.
		{"RULE:^CN=(.*?),.*$/$12/", "CN=a,O=b", "a2"},
		{"RULE:^CN=(.),O=(.),L=(.),ST=(.),C=(.),OU=(.),DC=(.),DC=(.),UID=(.),STREET=(.)$/$10$1/",
			"CN=a,O=b,L=c,ST=d,C=e,OU=f,DC=g,DC=h,UID=i,STREET=j", "ja"},
		{`RULE:^CN=(.*?),.*$/\$1 is $1/`, "CN=a,O=b", "$1 is a"},
		{"RULE:^CN=(?P<user>[^,]*),.*$/${user}/", "CN=bob,O=b", "bob"},
		{"RULE:^CN=(?<user>[^,]*),.*$/${user}/U", "CN=bob,O=b", "BOB"},
		{"RULE:^CN=(.*?),.*$/$0/", "CN=a,O=b", "CN=a,O=b"},
		// The first rule that matches wins; DEFAULT always matches.
		{"RULE:^O=(.*)$/$1/,RULE:^CN=([^,]*).*$/$1/,DEFAULT", "CN=x,O=y", "x"},
		{"RULE:^CN=admin$/root/", "CN=admin", "root"},
	}
	for _, tc := range cases {
		m, err := ParsePrincipalMappingRules(tc.rules)
		if err != nil {
			t.Errorf("ParsePrincipalMappingRules(%q): %v", tc.rules, err)
			continue
		}
		got, err := m.Name(tc.dn)
		if err != nil || got != tc.want {
			t.Errorf("rules %q: Name(%q) = %q, %v; want %q", tc.rules, tc.dn, got, err, tc.want)
		}
	}
}

func TestPrincipalMapperNoMatch(t *testing.T) {
	for _, tc := range []struct{ rules, dn string }{
		{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", "CN=bob,OU=Humans"},
		{",", "CN=bob"}, // no rules: nothing maps
		{"RULE:^CN=(.*?)$/$1/,DEFAULT", ""},
		{"RULE:^CN=(.*)$/$1/", "CN="}, // an empty name is refused
	} {
		m, err := ParsePrincipalMappingRules(tc.rules)
		if err != nil {
			t.Fatalf("ParsePrincipalMappingRules(%q): %v", tc.rules, err)
		}
		if name, err := m.Name(tc.dn); err == nil {
			t.Errorf("rules %q: Name(%q) = %q, want an error", tc.rules, tc.dn, name)
		}
	}
	// The pattern must match the whole name, not a part of it.
	m, err := ParsePrincipalMappingRules("RULE:CN=([a-z]+)/$1/")
	if err != nil {
		t.Fatal(err)
	}
	if name, err := m.Name("CN=bob,O=x"); err == nil {
		t.Errorf("partial match mapped to %q", name)
	}
}

func TestPrincipalFromCertificate(t *testing.T) {
	ca := securitytest.NewCA(t)
	m, err := ParsePrincipalMappingRules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	svc := ca.IssueTemplate(t, &x509.Certificate{Subject: pkix.Name{CommonName: "Billing", OrganizationalUnit: []string{"ServiceUsers"}, Organization: []string{"Acme"}}})
	if p, err := m.Principal(svc.Leaf); err != nil || p != User("billing") {
		t.Errorf("Principal(service cert) = %v, %v; want User:billing", p, err)
	}
	human := ca.Issue(t, "alice")
	if p, err := m.Principal(human.Leaf); err != nil || p != User("CN=alice") {
		t.Errorf("Principal(alice) = %v, %v; want User:CN=alice", p, err)
	}
	if p, err := m.Principal(nil); err != nil || p != Anonymous {
		t.Errorf("Principal(nil) = %v, %v; want %v", p, err, Anonymous)
	}
	strict, err := ParsePrincipalMappingRules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := strict.Principal(human.Leaf); err == nil {
		t.Errorf("Principal(alice) without a matching rule = %v, want an error", p)
	}
}
