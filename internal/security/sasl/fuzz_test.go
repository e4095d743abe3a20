package sasl

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/security"
)

// Run with e.g. go test -fuzz=FuzzScramStep -fuzztime=30s ./internal/security/sasl/
// Without -fuzz the seeds below run as ordinary tests.

// checkStep asserts what every Step result must satisfy, whatever the
// input: failures are *Error and not done, success has a principal, and an
// ended exchange refuses further tokens.
func checkStep(t *testing.T, s Session, out []byte, done bool, err error) (ended bool) {
	t.Helper()
	switch {
	case err != nil:
		var e *Error
		if !errors.As(err, &e) || e.Error() == "" {
			t.Fatalf("error %v (%T) is not a *sasl.Error with a message", err, err)
		}
		if done {
			t.Fatal("done with an error")
		}
		if s.Principal() != (security.Principal{}) {
			t.Fatalf("principal %v after a failure", s.Principal())
		}
	case done:
		if p := s.Principal(); p.Type != security.UserType || p.Name == "" {
			t.Fatalf("done without a principal: %v", p)
		}
	default:
		if out == nil {
			t.Fatal("exchange continues without a server token")
		}
		return false
	}
	if _, _, err := s.Step([]byte("x")); !errors.Is(err, ErrIllegalState) {
		t.Fatalf("Step after the end: %v", err)
	}
	return true
}

func FuzzPlainStep(f *testing.F) {
	for _, seed := range []string{"\x00alice\x00alice-secret", "admin\x00admin\x00admin-secret", "", "\x00\x00", "a\x00b\x00c\x00d", "\x00al\xffice\x00pw"} {
		f.Add([]byte(seed))
	}
	m := NewPlain(testPlainUsers)
	f.Fuzz(func(t *testing.T, in []byte) {
		s := m.NewSession()
		out, done, err := s.Step(in)
		if !checkStep(t, s, out, done, err) {
			t.Fatal("PLAIN must end after one message")
		}
	})
}

// FuzzScramStep fuzzes both client messages of an exchange whose server
// nonce is fixed, so that the seeds include a complete valid exchange.
func FuzzScramStep(f *testing.F) {
	mech := newTestScram(f, security.ScramSHA256, withServerNonce(func() string { return "SERVERNONCE" }))
	cs, first, err := scram.Auth{User: "alice", Pass: "alice-secret", Nonce: []byte("fixed-client-nonce")}.
		AsSha256Mechanism().Authenticate(context.Background(), "")
	if err != nil {
		f.Fatal(err)
	}
	sf, _, err := mech.NewSession().Step(first)
	if err != nil {
		f.Fatal(err)
	}
	_, final, err := cs.Challenge(sf)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(first, final)
	f.Add([]byte("n,,n=mallory,r=abc"), final)
	f.Add([]byte("n,a=alice,n=alice,r=abc,tokenauth=true"), []byte("c=biws,r=abcSERVERNONCE,p=AAAA"))
	f.Add([]byte("n,,n=a=2Cb=3D,r=x,ext=v=w"), []byte("c=biws,r=xSERVERNONCE,e=1,p=dGVzdA=="))
	f.Add([]byte(""), []byte(""))
	f.Fuzz(func(t *testing.T, first, final []byte) {
		s := mech.NewSession()
		out, done, err := s.Step(first)
		if checkStep(t, s, out, done, err) {
			return
		}
		out, done, err = s.Step(final)
		if !checkStep(t, s, out, done, err) {
			t.Fatal("SCRAM must end after the client-final message")
		}
		if done && (s.Principal() != security.User("alice") || string(out[:2]) != "v=") {
			t.Fatalf("authenticated as %v with %q", s.Principal(), out)
		}
	})
}

// FuzzOAuthBearerStep fuzzes the client initial response and the token
// after it, against the unsecured validator and against signature checks.
func FuzzOAuthBearerStep(f *testing.F) {
	unsecured := newOAuth(f, OAuthConfig{Unsecured: true, RequiredScope: []string{"LOGIN"}})
	iss := newIssuer(f, "k1", jose.ES256)
	signed := newOAuth(f, OAuthConfig{JWKSURL: writeJWKS(f, iss.jwk())})
	msg := func(authz, tok string) []byte { return []byte("n," + authz + ",\x01auth=Bearer " + tok + "\x01\x01") }
	good := unsecuredToken(f, claimsAt("alice", map[string]any{"scope": "LOGIN"}))
	f.Add(msg("", good), []byte{1})
	f.Add(msg("a=alice", good), []byte{1})
	f.Add(msg("", unsecuredToken(f, claimsAt("alice", nil))), []byte{1})
	f.Add(msg("", iss.sign(f, claimsAt("alice", nil))), []byte{1})
	f.Add(msg("", iss.sign(f, claimsAt("alice", map[string]any{"aud": "x"}))), []byte("n,,\x01auth=Bearer x\x01\x01"))
	f.Add([]byte("n,,\x01k=v\x01auth=bearer a.b.c\x01\x01"), []byte{})
	f.Add([]byte("\x01"), []byte{1})
	f.Fuzz(func(t *testing.T, first, second []byte) {
		for _, m := range []*OAuthBearer{unsecured, signed} {
			s := m.NewSession()
			out, done, err := s.Step(first)
			if checkStep(t, s, out, done, err) {
				continue
			}
			if !strings.HasPrefix(string(out), `{"status":"`) {
				t.Fatalf("error token %q", out)
			}
			out, done, err = s.Step(second)
			if err == nil || !checkStep(t, s, out, done, err) {
				t.Fatalf("exchange after an error token = %q, %v, %v", out, done, err)
			}
		}
	})
}

func FuzzParseJAAS(f *testing.F) {
	for _, seed := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`,
		`test.Module optional a='b' "c d"="e\"f\\g\101" // comment` + "\n;",
		"x.Y Required /* c */ k=v;",
		"a required b=3;",
		`a required b="unterminated` + "\n;",
		"- required;",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		e, err := ParseJAAS(in)
		if err != nil {
			return
		}
		switch e.Flag {
		case "required", "requisite", "sufficient", "optional":
		default:
			t.Fatalf("flag %q", e.Flag)
		}
		if e.LoginModule == "" {
			t.Fatal("empty login module")
		}
		// What was parsed renders back to a config that parses the same.
		again, err := ParseJAAS(renderJAAS(e))
		if err != nil {
			t.Fatalf("rendering %q does not parse: %v", renderJAAS(e), err)
		}
		if again.LoginModule != e.LoginModule || again.Flag != e.Flag || len(again.Options) != len(e.Options) {
			t.Fatalf("round trip %+v -> %+v", e, again)
		}
		for k, v := range e.Options {
			if again.Options[k] != v {
				t.Fatalf("round trip of %q: %q -> %q", k, v, again.Options[k])
			}
		}
	})
}

// renderJAAS writes an entry with every name and value quoted.
func renderJAAS(e JAASEntry) string {
	q := func(s string) string {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(s) + `"`
	}
	var b strings.Builder
	b.WriteString(q(e.LoginModule) + " " + e.Flag)
	for k, v := range e.Options {
		b.WriteString(" " + q(k) + "=" + q(v))
	}
	b.WriteString(";")
	return b.String()
}
