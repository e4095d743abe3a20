package sasl

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/silkworm/silkworm/internal/security"
)

var testPlainUsers = PlainUsers{"alice": "alice-secret", "admin": "admin-secret"}

func TestPlainWithFranzGo(t *testing.T) {
	m := NewPlain(testPlainUsers)
	if m.Name() != "PLAIN" {
		t.Fatalf("Name = %q", m.Name())
	}
	s := m.NewSession()
	if err := converse(t, s, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()); err != nil {
		t.Fatal(err)
	}
	if got := s.Principal(); got != security.User("alice") {
		t.Fatalf("Principal = %v", got)
	}
	if !s.Expiry().IsZero() {
		t.Fatalf("Expiry = %v, want zero", s.Expiry())
	}
	wantIllegalState(t, s)

	// An authorization id equal to the username is accepted.
	s = m.NewSession()
	if err := converse(t, s, plain.Auth{Zid: "admin", User: "admin", Pass: "admin-secret"}.AsMechanism()); err != nil {
		t.Fatal(err)
	}
	if got := s.Principal(); got != security.User("admin") {
		t.Fatalf("Principal = %v", got)
	}
}

func TestPlainRefusals(t *testing.T) {
	m := NewPlain(testPlainUsers)
	for _, tc := range []struct {
		name string
		auth plain.Auth
		want string
	}{
		{"wrong password", plain.Auth{User: "alice", Pass: "nope"}, "Authentication failed: Invalid username or password"},
		{"unknown user", plain.Auth{User: "mallory", Pass: "alice-secret"}, "Authentication failed: Invalid username or password"},
		{"other authzid", plain.Auth{Zid: "admin", User: "alice", Pass: "alice-secret"},
			"Authentication failed: Client requested an authorization id that is different from username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := m.NewSession()
			e := wantMessage(t, converse(t, s, tc.auth.AsMechanism()), tc.want)
			if e.Generic() {
				t.Fatal("PLAIN failures carry Kafka's specific text")
			}
			if s.Principal() != (security.Principal{}) {
				t.Fatalf("Principal after failure = %v", s.Principal())
			}
			wantIllegalState(t, s)
		})
	}
}

func TestPlainBadMessages(t *testing.T) {
	m := NewPlain(testPlainUsers)
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
		{"no NUL", "alice", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
		{"one NUL", "alice\x00alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"},
		{"three NULs", "\x00alice\x00alice-secret\x00", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
		{"many NULs", "\x00\x00\x00\x00\x00\x00", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
		{"no username", "\x00\x00alice-secret", "Authentication failed: username not specified"},
		{"no password", "\x00alice\x00", "Authentication failed: password not specified"},
		{"invalid UTF-8 username", "\x00al\xffice\x00alice-secret", "Authentication failed: Invalid username or password"},
		{"invalid UTF-8 password", "\x00alice\x00alice-secret\xc3", "Authentication failed: Invalid username or password"},
		{"too large", "\x00alice\x00" + strings.Repeat("x", MaxPlainMessage),
			"Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := m.NewSession()
			out, done, err := s.Step([]byte(tc.in))
			if done || out != nil {
				t.Fatalf("Step = %q, %v", out, done)
			}
			wantMessage(t, err, tc.want)
			wantIllegalState(t, s)
		})
	}
}

// recordingAuth is a PlainAuthenticator that accepts one pair and records
// what it was asked.
type recordingAuth struct {
	user, pass string
	calls      [][2]string
}

func (a *recordingAuth) Authenticate(user, password string) bool {
	a.calls = append(a.calls, [2]string{user, password})
	return user == a.user && password == a.pass
}

func TestPlainPluggableAuthenticator(t *testing.T) {
	auth := &recordingAuth{user: "bob", pass: "pw\x01with\tcontrol ü"}
	m := NewPlain(auth)
	s := m.NewSession()
	out, done, err := s.Step([]byte("\x00bob\x00pw\x01with\tcontrol ü"))
	if err != nil || !done || out == nil || len(out) != 0 {
		t.Fatalf("Step = %q, %v, %v; want an empty token, done", out, done, err)
	}
	if len(auth.calls) != 1 || auth.calls[0] != [2]string{"bob", "pw\x01with\tcontrol ü"} {
		t.Fatalf("authenticator calls %q", auth.calls)
	}
	// The authenticator is not consulted for a message without a username.
	_, _, err = m.NewSession().Step([]byte("\x00\x00pw"))
	wantMessage(t, err, "Authentication failed: username not specified")
	if len(auth.calls) != 1 {
		t.Fatalf("authenticator called for an empty username: %q", auth.calls)
	}

	// A nil authenticator accepts nobody.
	_, _, err = NewPlain(nil).NewSession().Step([]byte("\x00bob\x00pw"))
	wantMessage(t, err, "Authentication failed: Invalid username or password")
}

func TestPlainUsersAuthenticate(t *testing.T) {
	u := PlainUsers{"alice": "secret", "empty": ""}
	for _, tc := range []struct {
		user, pass string
		want       bool
	}{
		{"alice", "secret", true},
		{"alice", "secret2", false},
		{"alice", "secre", false},
		{"alice", "", false},
		{"bob", "secret", false},
		{"bob", "", false},
		{"empty", "", true}, // PLAIN itself refuses empty passwords first
	} {
		if got := u.Authenticate(tc.user, tc.pass); got != tc.want {
			t.Errorf("Authenticate(%q, %q) = %v, want %v", tc.user, tc.pass, got, tc.want)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	e := genericError("SCRAM-SHA-512", "detail %d", 1)
	if got := e.Error(); got != "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512" {
		t.Fatalf("Error() = %q", got)
	}
	if got := e.Message(true); got != "Authentication failed during re-authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512" {
		t.Fatalf("Message(true) = %q", got)
	}
	if !e.Generic() || e.Reason.Error() != "detail 1" {
		t.Fatalf("Generic %v, Reason %v", e.Generic(), e.Reason)
	}
	c := clientError("PLAIN", "Authentication failed: username not specified")
	if c.Message(true) != c.Error() || c.Generic() {
		t.Fatalf("client error %q / %q", c.Error(), c.Message(true))
	}
	if v := e.LogValue().Resolve(); !strings.Contains(v.String(), "detail 1") {
		t.Fatalf("LogValue %v does not carry the reason", v)
	}
}
