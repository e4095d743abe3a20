package sasl

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/scram"
	xdgscram "github.com/xdg-go/scram"

	"github.com/silkworm/silkworm/internal/security"
)

// RFC 7677 §3: the SCRAM-SHA-256 example exchange, user "user", password
// "pencil".
const (
	rfc7677ClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
	rfc7677ServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	rfc7677ServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfc7677ClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfc7677ServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
)

func rfc7677Mechanism(t *testing.T) Mechanism {
	t.Helper()
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	cred, err := NewScramCredential(security.ScramSHA256, "pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewScram(security.ScramSHA256, func(user string) (security.ScramCredential, bool) {
		return cred, user == "user"
	}, withServerNonce(func() string { return rfc7677ServerNonce }))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScramRFC7677Vector(t *testing.T) {
	s := rfc7677Mechanism(t).NewSession()
	out, done, err := s.Step([]byte(rfc7677ClientFirst))
	if err != nil || done || string(out) != rfc7677ServerFirst {
		t.Fatalf("server-first = %q, %v, %v\nwant %q", out, done, err, rfc7677ServerFirst)
	}
	out, done, err = s.Step([]byte(rfc7677ClientFinal))
	if err != nil || !done || string(out) != rfc7677ServerFinal {
		t.Fatalf("server-final = %q, %v, %v\nwant %q", out, done, err, rfc7677ServerFinal)
	}
	if s.Principal() != security.User("user") || !s.Expiry().IsZero() {
		t.Fatalf("Principal %v, Expiry %v", s.Principal(), s.Expiry())
	}
	wantIllegalState(t, s)
}

// franz-go's client, given the RFC's client nonce, sends the RFC's
// messages and accepts the RFC's server signature.
func TestScramRFC7677VectorWithFranzGo(t *testing.T) {
	nonce, _ := base64.RawStdEncoding.DecodeString("rOprNGfwEbeRWgbNEkqO")
	client := scram.Auth{User: "user", Pass: "pencil", Nonce: nonce}.AsSha256Mechanism()
	cs, first, err := client.Authenticate(context.Background(), "b:9092")
	if err != nil || string(first) != rfc7677ClientFirst {
		t.Fatalf("client-first %q, %v", first, err)
	}
	s := rfc7677Mechanism(t).NewSession()
	if err := converse(t, s, client); err != nil {
		t.Fatal(err)
	}
	_, final, err := cs.Challenge([]byte(rfc7677ServerFirst))
	if err != nil || string(final) != rfc7677ClientFinal {
		t.Fatalf("client-final %q, %v", final, err)
	}
}

// scramLookup is a credential store for tests: credentials derived by
// NewScramCredential from user → password.
func scramLookup(t testing.TB, mechanism string, users map[string]string) func(string) (security.ScramCredential, bool) {
	t.Helper()
	creds := map[string]security.ScramCredential{}
	for user, pass := range users {
		c, err := NewScramCredential(mechanism, pass, []byte("salt-of-"+user), MinScramIterations)
		if err != nil {
			t.Fatal(err)
		}
		creds[user] = c
	}
	return func(user string) (security.ScramCredential, bool) {
		c, ok := creds[user]
		return c, ok
	}
}

var scramTestUsers = map[string]string{"alice": "alice-secret", "comma,equals=": "odd name", "bob": "bob-secret"}

func newTestScram(t testing.TB, mechanism string, opts ...ScramOption) Mechanism {
	t.Helper()
	m, err := NewScram(mechanism, scramLookup(t, mechanism, scramTestUsers), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScramWithFranzGo(t *testing.T) {
	for _, mech := range []string{security.ScramSHA256, security.ScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			m := newTestScram(t, mech)
			if m.Name() != mech {
				t.Fatalf("Name = %q", m.Name())
			}
			client := func(a scram.Auth) error {
				s := m.NewSession()
				var err error
				if mech == security.ScramSHA256 {
					err = converse(t, s, a.AsSha256Mechanism())
				} else {
					err = converse(t, s, a.AsSha512Mechanism())
				}
				if err == nil && s.Principal() != security.User(a.User) {
					t.Fatalf("Principal = %v, want User:%s", s.Principal(), a.User)
				}
				return err
			}
			if err := client(scram.Auth{User: "alice", Pass: "alice-secret"}); err != nil {
				t.Fatal(err)
			}
			// Names with ',' and '=' travel escaped (=2C, =3D).
			if err := client(scram.Auth{User: "comma,equals=", Pass: "odd name"}); err != nil {
				t.Fatal(err)
			}
			if err := client(scram.Auth{Zid: "bob", User: "bob", Pass: "bob-secret"}); err != nil {
				t.Fatal(err)
			}

			generic := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech
			wrong := wantMessage(t, client(scram.Auth{User: "alice", Pass: "wrong"}), generic)
			unknown := wantMessage(t, client(scram.Auth{User: "mallory", Pass: "alice-secret"}), generic)
			if !wrong.Generic() || !unknown.Generic() {
				t.Fatal("SCRAM credential failures must use Kafka's generic text")
			}
			if got := wrong.Message(true); got != "Authentication failed during re-authentication due to invalid credentials with SASL mechanism "+mech {
				t.Fatalf("Message(true) = %q", got)
			}
			wantMessage(t, client(scram.Auth{Zid: "alice", User: "bob", Pass: "bob-secret"}),
				"Authentication failed: Client requested an authorization id that is different from username")
		})
	}
}

// An unknown user gets a server-first message like a real one (stable
// salt, Kafka-like shape, 4096 iterations) and fails only after the proof,
// with the text of a wrong password.
func TestScramUnknownUserLooksLikeWrongPassword(t *testing.T) {
	m := newTestScram(t, security.ScramSHA512)
	serverFirst := func(user string) string {
		s := m.NewSession()
		out, done, err := s.Step([]byte("n,,n=" + user + ",r=abc"))
		if err != nil || done {
			t.Fatalf("client-first for %s: %v, %v", user, done, err)
		}
		return string(out)
	}
	salt := func(sf string) string {
		_, rest, _ := strings.Cut(sf, ",s=")
		s, iters, _ := strings.Cut(rest, ",")
		if iters != "i=4096" {
			t.Fatalf("server-first %q: iterations", sf)
		}
		return s
	}
	a, b, other := serverFirst("mallory"), serverFirst("mallory"), serverFirst("trent")
	if salt(a) != salt(b) {
		t.Fatalf("unknown user's salt changes between attempts: %q vs %q", a, b)
	}
	if salt(a) == salt(other) {
		t.Fatalf("two unknown users share a salt: %q", a)
	}
	raw, err := base64.StdEncoding.DecodeString(salt(a))
	if err != nil || len(raw) < 20 || len(raw) > 27 || strings.Trim(string(raw), "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		t.Fatalf("made-up salt %q is not like Kafka's (base 36 text of 130 bits)", raw)
	}

	// The unknown user fails at the same step and with the same text as
	// a wrong password.
	for _, a := range []scram.Auth{{User: "alice", Pass: "bad"}, {User: "mallory", Pass: "bad"}} {
		s := m.NewSession()
		cs, first, _ := a.AsSha512Mechanism().Authenticate(context.Background(), "")
		sf, done, err := s.Step(first)
		if err != nil || done {
			t.Fatalf("%s: client-first refused: %v", a.User, err)
		}
		_, cf, err := cs.Challenge(sf)
		if err != nil {
			t.Fatalf("%s: client refuses server-first %q: %v", a.User, sf, err)
		}
		out, done, err := s.Step(cf)
		if out != nil || done {
			t.Fatalf("%s: client-final accepted", a.User)
		}
		wantMessage(t, err, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512")
		wantIllegalState(t, s)
	}
}

// scramToFinal runs client-first for alice with franz-go's client and
// returns the session, waiting for client-final, and the client-final
// message the client computed with pass.
func scramToFinal(t *testing.T, m Mechanism, pass string) (Session, []byte) {
	t.Helper()
	s := m.NewSession()
	cs, first, err := scram.Auth{User: "alice", Pass: pass}.AsSha256Mechanism().Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	sf, _, err := s.Step(first)
	if err != nil {
		t.Fatal(err)
	}
	_, cf, err := cs.Challenge(sf)
	if err != nil {
		t.Fatal(err)
	}
	return s, cf
}

func TestScramWrongProof(t *testing.T) {
	m := newTestScram(t, security.ScramSHA256)
	s, cf := scramToFinal(t, m, "alice-secret")
	i := bytes.LastIndex(cf, []byte(",p="))
	proof, _ := base64.StdEncoding.DecodeString(string(cf[i+3:]))
	proof[0] ^= 1
	bad := append(append([]byte{}, cf[:i+3]...), base64.StdEncoding.EncodeToString(proof)...)
	_, done, err := s.Step(bad)
	if done {
		t.Fatal("wrong proof accepted")
	}
	wantMessage(t, err, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
	wantReason(t, err, "proof")
	if s.Principal() != (security.Principal{}) {
		t.Fatalf("Principal after failure: %v", s.Principal())
	}
}

// A client-final message from another exchange carries that exchange's
// nonce and must not be accepted, even for the right user and password.
func TestScramReplayedNonce(t *testing.T) {
	m := newTestScram(t, security.ScramSHA256)
	_, cfA := scramToFinal(t, m, "alice-secret")
	sB, _ := scramToFinal(t, m, "alice-secret")
	_, done, err := sB.Step(cfA)
	if done {
		t.Fatal("client-final of another exchange accepted")
	}
	wantMessage(t, err, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
	wantReason(t, err, "nonce")

	// The same message replayed on the exchange it belongs to, after
	// that exchange completed, is refused too.
	sA, cf := scramToFinal(t, m, "alice-secret")
	if _, done, err := sA.Step(cf); err != nil || !done {
		t.Fatalf("genuine client-final: %v", err)
	}
	if _, _, err := sA.Step(cf); !errors.Is(err, ErrIllegalState) {
		t.Fatalf("replay after completion: %v", err)
	}
}

// Kafka's server nonce is fresh for every exchange.
func TestScramServerNonceFresh(t *testing.T) {
	m := newTestScram(t, security.ScramSHA256)
	seen := map[string]bool{}
	for range 20 {
		out, _, err := m.NewSession().Step([]byte("n,,n=alice,r=fixed"))
		if err != nil {
			t.Fatal(err)
		}
		nonce, _, _ := strings.Cut(strings.TrimPrefix(string(out), "r=fixed"), ",")
		if len(nonce) < 20 || seen[nonce] {
			t.Fatalf("server nonce %q short or repeated", nonce)
		}
		seen[nonce] = true
	}
}

func TestScramBadClientFirst(t *testing.T) {
	m := newTestScram(t, security.ScramSHA256)
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"no nonce", "n,,n=alice"},
		{"empty nonce", "n,,n=alice,r="},
		{"nonce with space", "n,,n=alice,r=a b"},
		{"channel binding y", "y,,n=alice,r=abc"},
		{"channel binding p", "p=tls-unique,,n=alice,r=abc"},
		{"empty username", "n,,n=,r=abc"},
		{"bad escape", "n,,n=al=2Xice,r=abc"},
		{"raw =", "n,,n=al=ice,r=abc"},
		{"non-ASCII username", "n,,n=alïce,r=abc"},
		{"invalid UTF-8", "n,,n=al\xffice,r=abc"},
		{"NUL", "n,,n=al\x00ice,r=abc"},
		{"reserved m", "n,,m=ext,n=alice,r=abc"},
		{"bad authzid", "n,b=alice,n=alice,r=abc"},
		{"bad extension", "n,,n=alice,r=abc,1x=2"},
		{"empty extension value", "n,,n=alice,r=abc,tokenauth="},
		{"trailing comma", "n,,n=alice,r=abc,"},
		{"attributes swapped", "n,,r=abc,n=alice"},
		{"oversized username", "n,,n=" + strings.Repeat("a", MaxScramMessage) + ",r=abc"},
		{"oversized nonce", "n,,n=alice,r=" + strings.Repeat("x", MaxScramMessage)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := m.NewSession()
			out, done, err := s.Step([]byte(tc.in))
			if out != nil || done {
				t.Fatalf("Step = %q, %v", out, done)
			}
			wantMessage(t, err, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
			wantIllegalState(t, s)
		})
	}
}

func TestScramBadClientFinal(t *testing.T) {
	m := newTestScram(t, security.ScramSHA256)
	for _, tc := range []struct {
		name string
		edit func(cf string) string
	}{
		{"empty", func(string) string { return "" }},
		{"second client-first", func(string) string { return "n,,n=alice,r=abc" }},
		{"no proof", func(cf string) string { return cf[:strings.LastIndex(cf, ",p=")] }},
		{"empty proof", func(cf string) string { return cf[:strings.LastIndex(cf, ",p=")+3] }},
		{"proof not base64", func(cf string) string { return cf[:strings.LastIndex(cf, ",p=")+3] + "!!!!" }},
		{"short proof", func(cf string) string { return cf[:strings.LastIndex(cf, ",p=")+3] + "AAAA" }},
		{"channel binding changed", func(cf string) string { return "c=eSws" + cf[len("c=biws"):] }},
		{"channel binding with newline", func(cf string) string { return "c=bi\nws" + cf[len("c=biws"):] }},
		{"nonce prefixed", func(cf string) string { return "c=biws,r=X" + cf[len("c=biws,r="):] }},
		{"nonce truncated", func(cf string) string {
			i := strings.LastIndex(cf, ",p=")
			return cf[:i-1] + cf[i:]
		}},
		{"attribute order", func(cf string) string {
			i := strings.LastIndex(cf, ",p=")
			return cf[i+1:] + "," + cf[:i]
		}},
		{"non-ASCII", func(cf string) string { return cf + "é" }},
		{"oversized", func(cf string) string { return cf + strings.Repeat("A", MaxScramMessage) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cf := scramToFinal(t, m, "alice-secret")
			out, done, err := s.Step([]byte(tc.edit(string(cf))))
			if out != nil || done {
				t.Fatalf("Step = %q, %v", out, done)
			}
			wantMessage(t, err, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
			wantIllegalState(t, s)
		})
	}
	// Extensions in client-final are part of the signed message: the
	// grammar allows them, the proof then does not match.
	s, cf := scramToFinal(t, m, "alice-secret")
	i := strings.LastIndex(string(cf), ",p=")
	withExt := string(cf[:i]) + ",ext=1" + string(cf[i:])
	if _, _, err := s.Step([]byte(withExt)); err == nil {
		t.Fatal("client-final altered with an extension accepted")
	}
}

func TestScramExtensionsAndDelegationTokens(t *testing.T) {
	tokenCred, err := NewScramCredential(security.ScramSHA256, "token-hmac", []byte("tsalt"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	expiry := time.UnixMilli(1_900_000_000_000)
	tokens := func(id string) (DelegationToken, bool) {
		return DelegationToken{Owner: security.User("alice"), Credential: tokenCred, Expiry: expiry}, id == "token1"
	}
	m := newTestScram(t, security.ScramSHA256, WithDelegationTokens(tokens))

	s := m.NewSession()
	if err := converse(t, s, scram.Auth{User: "token1", Pass: "token-hmac", IsToken: true}.AsSha256Mechanism()); err != nil {
		t.Fatal(err)
	}
	if s.Principal() != security.User("alice") || !s.Expiry().Equal(expiry) {
		t.Fatalf("token principal %v, expiry %v", s.Principal(), s.Expiry())
	}
	if ta, ok := s.(interface{ TokenAuthenticated() bool }); !ok || !ta.TokenAuthenticated() {
		t.Fatal("session not marked token-authenticated")
	}

	// An unknown token fails at once, as in Kafka.
	s = m.NewSession()
	_, _, err = s.Step([]byte("n,,n=token2,r=abc,tokenauth=true"))
	wantMessage(t, err, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
	wantReason(t, err, "Invalid tokenId")

	// Without delegation tokens, tokenauth=true (any case) fails; other
	// extensions are ignored.
	plainM := newTestScram(t, security.ScramSHA256)
	_, _, err = plainM.NewSession().Step([]byte("n,,n=alice,r=abc,tokenauth=TRUE"))
	wantReason(t, err, "Invalid tokenId")
	out, _, err := plainM.NewSession().Step([]byte("n,,n=alice,r=abc,tokenauth=false,foo=bar=baz"))
	if err != nil || !bytes.HasPrefix(out, []byte("r=abc")) {
		t.Fatalf("extensions not ignored: %q, %v", out, err)
	}
	s = plainM.NewSession()
	if err := converse(t, s, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()); err != nil {
		t.Fatal(err)
	}
	if ta := s.(interface{ TokenAuthenticated() bool }); ta.TokenAuthenticated() {
		t.Fatal("password login marked token-authenticated")
	}
}

func TestScramStoredCredentialChecks(t *testing.T) {
	good, err := NewScramCredential(security.ScramSHA256, "pw", []byte("s"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	weak := good
	weak.Iterations = 4095
	truncated := good
	truncated.StoredKey = good.StoredKey[:10]
	other := good
	other.Mechanism = security.ScramSHA512
	for _, tc := range []struct {
		name   string
		cred   security.ScramCredential
		reason string
	}{
		{"too few iterations", weak, "Iterations 4095 is less than the minimum 4096 for SCRAM-SHA-256"},
		{"malformed keys", truncated, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewScram(security.ScramSHA256, func(string) (security.ScramCredential, bool) { return tc.cred, true })
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = m.NewSession().Step([]byte("n,,n=u,r=abc"))
			wantMessage(t, err, "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
			wantReason(t, err, tc.reason)
		})
	}
	// A credential of another mechanism is as good as none: the exchange
	// goes on and fails after the proof.
	m, _ := NewScram(security.ScramSHA256, func(string) (security.ScramCredential, bool) { return other, true })
	s := m.NewSession()
	wantMessage(t, converse(t, s, scram.Auth{User: "u", Pass: "pw"}.AsSha256Mechanism()),
		"Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")

	if _, err := NewScram("SCRAM-SHA-1", func(string) (security.ScramCredential, bool) { return good, true }); !errors.Is(err, ErrUnknownScramMechanism) {
		t.Fatalf("NewScram(SCRAM-SHA-1) error %v", err)
	}
	if _, err := NewScram(security.ScramSHA256, nil); err == nil {
		t.Fatal("NewScram without lookup accepted")
	}
}

func TestScramCredentials(t *testing.T) {
	for _, mech := range []string{security.ScramSHA256, security.ScramSHA512} {
		salt := []byte("0123456789abcdef")
		cred, err := NewScramCredential(mech, "pässword", salt, 8192)
		if err != nil {
			t.Fatal(err)
		}
		salted, err := SaltedPassword(mech, "pässword", salt, 8192)
		if err != nil {
			t.Fatal(err)
		}
		fromSalted, err := ScramCredentialFromSalted(mech, salt, salted, 8192)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cred.StoredKey, fromSalted.StoredKey) || !bytes.Equal(cred.ServerKey, fromSalted.ServerKey) ||
			cred.Mechanism != mech || cred.Iterations != 8192 || !bytes.Equal(cred.Salt, salt) {
			t.Fatalf("%s: NewScramCredential %+v != ScramCredentialFromSalted %+v", mech, cred, fromSalted)
		}
		// xdg-go/scram's client derives the same keys independently.
		hash := xdgscram.SHA256
		if mech == security.ScramSHA512 {
			hash = xdgscram.SHA512
		}
		c, err := hash.NewClientUnprepped("u", "pässword", "")
		if err != nil {
			t.Fatal(err)
		}
		want := c.GetStoredCredentials(xdgscram.KeyFactors{Salt: string(salt), Iters: 8192})
		if !bytes.Equal(cred.StoredKey, want.StoredKey) || !bytes.Equal(cred.ServerKey, want.ServerKey) {
			t.Fatalf("%s: keys differ from xdg-go/scram's", mech)
		}
	}

	for _, tc := range []struct {
		name string
		err  error
		call func() error
	}{
		{"too few", ErrTooFewIterations, func() error {
			_, err := NewScramCredential(security.ScramSHA256, "pw", []byte("s"), 4095)
			return err
		}},
		{"too many", ErrTooManyIterations, func() error {
			_, err := ScramCredentialFromSalted(security.ScramSHA512, []byte("s"), []byte("salted"), 16385)
			return err
		}},
		{"unknown mechanism", ErrUnknownScramMechanism, func() error {
			_, err := SaltedPassword("PLAIN", "pw", []byte("s"), 4096)
			return err
		}},
	} {
		if err := tc.call(); !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.err)
		}
	}
	if ErrTooFewIterations.Error() != "Too few iterations" || ErrTooManyIterations.Error() != "Too many iterations" {
		t.Fatal("iteration errors must carry Kafka's UNACCEPTABLE_CREDENTIAL texts")
	}
	if _, err := SaltedPassword(security.ScramSHA256, "", []byte("s"), 4096); err == nil {
		t.Fatal("empty password accepted")
	}
	if _, err := ScramCredentialFromSalted(security.ScramSHA256, []byte("s"), nil, 4096); err == nil {
		t.Fatal("empty salted password accepted")
	}
	if _, err := NewScramCredential(security.ScramSHA256, "pw", []byte("s"), 16384); err != nil {
		t.Fatalf("16384 iterations refused: %v", err)
	}
}
