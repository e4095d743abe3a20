package sasl

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/silkworm/silkworm/internal/security"
)

// testNow is the clock of the OAUTHBEARER tests.
var testNow = time.Unix(1_700_000_000, 0)

func testClock() time.Time { return testNow }

// claimsAt returns valid claims for sub, issued at testNow, expiring an
// hour later, with extra claims merged in (a nil value deletes a claim).
func claimsAt(sub string, extra map[string]any) map[string]any {
	c := map[string]any{
		"sub": sub,
		"iat": testNow.Unix(),
		"exp": testNow.Add(time.Hour).Unix(),
	}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func b64JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// unsecuredToken is what Kafka's OAuthBearerUnsecuredLoginCallbackHandler
// makes: an unsigned JWS.
func unsecuredToken(t testing.TB, claims map[string]any) string {
	return b64JSON(t, map[string]any{"alg": "none"}) + "." + b64JSON(t, claims) + "."
}

// testIssuer signs tokens with one key.
type testIssuer struct {
	kid string
	alg jose.SignatureAlgorithm
	key crypto.Signer
}

var rsaKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func newIssuer(t testing.TB, kid string, alg jose.SignatureAlgorithm) testIssuer {
	t.Helper()
	var key crypto.Signer
	var err error
	switch alg {
	case jose.RS256, jose.PS256:
		key = rsaKey()
	case jose.ES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.ES384:
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case jose.EdDSA:
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return testIssuer{kid: kid, alg: alg, key: key}
}

func (i testIssuer) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: i.key.Public(), KeyID: i.kid, Algorithm: string(i.alg), Use: "sig"}
}

func (i testIssuer) sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if i.kid != "" {
		opts = opts.WithHeader("kid", i.kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: i.alg, Key: i.key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func jwksJSON(t testing.TB, keys ...jose.JSONWebKey) []byte {
	t.Helper()
	if keys == nil {
		keys = []jose.JSONWebKey{}
	}
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeJWKS(t testing.TB, keys ...jose.JSONWebKey) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwksJSON(t, keys...), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

func newOAuth(t testing.TB, cfg OAuthConfig) *OAuthBearer {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = testClock
	}
	m, err := NewOAuthBearer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ob := m.(*OAuthBearer)
	t.Cleanup(ob.Close)
	return ob
}

// oauthRefused runs an exchange that must be refused with the two steps
// Kafka uses: an error token, then failure at the client's 0x01. It
// returns the error.
func oauthRefused(t *testing.T, m Mechanism, token, wantJSON string) error {
	t.Helper()
	s := m.NewSession()
	err := converse(t, s, oauth.Auth{Token: token}.AsMechanism())
	e := wantMessage(t, err, wantJSON)
	if s.Principal() != (security.Principal{}) {
		t.Fatalf("Principal after failure: %v", s.Principal())
	}
	wantIllegalState(t, s)
	return e
}

const invalidTokenJSON = `{"status":"invalid_token"}`

func TestOAuthUnsecuredWithFranzGo(t *testing.T) {
	m := newOAuth(t, OAuthConfig{Unsecured: true})
	if m.Name() != "OAUTHBEARER" {
		t.Fatalf("Name = %q", m.Name())
	}
	tok := unsecuredToken(t, claimsAt("alice", map[string]any{"scope": []string{"LOGIN", "READ"}}))
	s := m.NewSession()
	ext := map[string]string{"traceId": "abc 123", "logicalCluster": "lkc-1"}
	if err := converse(t, s, oauth.Auth{Token: tok, Extensions: ext}.AsMechanism()); err != nil {
		t.Fatal(err)
	}
	if s.Principal() != security.User("alice") {
		t.Fatalf("Principal = %v", s.Principal())
	}
	if !s.Expiry().Equal(testNow.Add(time.Hour)) {
		t.Fatalf("Expiry = %v, want %v", s.Expiry(), testNow.Add(time.Hour))
	}
	if got := s.(interface{ Extensions() map[string]string }).Extensions(); !maps.Equal(got, ext) {
		t.Fatalf("Extensions = %v", got)
	}
	wantIllegalState(t, s)

	// Authorization id equal to the principal; a fractional exp and the
	// standard base64 alphabet are accepted as Kafka accepts them.
	std := base64.RawStdEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." +
		base64.RawStdEncoding.EncodeToString([]byte(`{"sub":"bob","exp":1700003600.5,"n":">>>"}`)) + "."
	if !strings.ContainsAny(std, "+/") {
		t.Fatalf("test token %q does not use the standard alphabet", std)
	}
	s = m.NewSession()
	if err := converse(t, s, oauth.Auth{Zid: "bob", Token: std}.AsMechanism()); err != nil {
		t.Fatal(err)
	}
	if s.Principal() != security.User("bob") || s.Expiry().UnixMilli() != 1700003600500 {
		t.Fatalf("Principal %v, Expiry %v", s.Principal(), s.Expiry())
	}

	// A different authorization id is refused with Kafka's text.
	wantMessage(t, converse(t, m.NewSession(), oauth.Auth{Zid: "bob", Token: tok}.AsMechanism()),
		"Authentication failed: Client requested an authorization id (bob) that is different from the token's principal name (alice)")
}

func TestOAuthUnsecuredRefusals(t *testing.T) {
	m := newOAuth(t, OAuthConfig{Unsecured: true, ClockSkew: 3 * time.Second})
	signed := newIssuer(t, "k1", jose.ES256).sign(t, claimsAt("alice", nil))
	for _, tc := range []struct {
		name   string
		token  string
		reason string
	}{
		{"expired", unsecuredToken(t, claimsAt("alice", map[string]any{"exp": testNow.Add(-4 * time.Second).Unix()})), "Expiration Time"},
		{"expired at the skew bound", unsecuredToken(t, claimsAt("alice", map[string]any{"exp": testNow.Add(-3 * time.Second).Unix()})), "Expiration Time"},
		{"issued in the future", unsecuredToken(t, claimsAt("alice", map[string]any{"iat": testNow.Add(4 * time.Second).Unix()})), "Issued At"},
		{"exp before iat", unsecuredToken(t, claimsAt("alice", map[string]any{"iat": testNow.Unix(), "exp": testNow.Unix() - 1, "nbf": nil})), "Expiration Time"},
		{"no exp", unsecuredToken(t, claimsAt("alice", map[string]any{"exp": nil})), "No expiration time"},
		{"exp not a number", unsecuredToken(t, claimsAt("alice", map[string]any{"exp": "soon"})), "exp"},
		{"no sub", unsecuredToken(t, claimsAt("alice", map[string]any{"sub": nil})), "No principal name"},
		{"blank sub", unsecuredToken(t, claimsAt(" ", nil)), "No principal name"},
		{"sub not a string", unsecuredToken(t, claimsAt("alice", map[string]any{"sub": 42})), "not of type String"},
		{"signed token", signed, "'none'"},
		{"signature present", strings.TrimSuffix(unsecuredToken(t, claimsAt("alice", nil)), ".") + ".c2ln", "digital signature"},
		{"two parts", b64JSON(t, map[string]any{"alg": "none"}) + "." + b64JSON(t, claimsAt("alice", nil)), "3 dot-separated"},
		{"double dot", "a..b", "'..'"},
		{"header not base64", "a." + b64JSON(t, claimsAt("alice", nil)) + ".", "Base64"},
		{"header not JSON", base64.RawURLEncoding.EncodeToString([]byte("nope")) + "." + b64JSON(t, claimsAt("alice", nil)) + ".", "malformed JSON"},
		{"claims not an object", b64JSON(t, map[string]any{"alg": "none"}) + "." + b64JSON(t, []int{1}) + ".", "malformed JSON"},
		{"claims invalid UTF-8", b64JSON(t, map[string]any{"alg": "none"}) + "." + base64.RawURLEncoding.EncodeToString([]byte("{\"sub\":\"a\xff\"}")) + ".", "UTF-8"},
		{"no alg", b64JSON(t, map[string]any{"typ": "JWT"}) + "." + b64JSON(t, claimsAt("alice", nil)) + ".", "Algorithm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantReason(t, oauthRefused(t, m, tc.token, invalidTokenJSON), tc.reason)
		})
	}
	// Within the clock skew, expiry and issue time are tolerated.
	for _, extra := range []map[string]any{
		{"exp": testNow.Add(-2 * time.Second).Unix(), "iat": nil},
		{"iat": testNow.Add(2 * time.Second).Unix()},
	} {
		tok := unsecuredToken(t, claimsAt("alice", extra))
		if err := converse(t, m.NewSession(), oauth.Auth{Token: tok}.AsMechanism()); err != nil {
			t.Fatalf("claims %v: %v", extra, err)
		}
	}
}

func TestOAuthScope(t *testing.T) {
	m := newOAuth(t, OAuthConfig{Unsecured: true, ScopeClaimName: "scp", SubClaimName: "principal",
		RequiredScope: []string{"LOGIN_TO_KAFKA", "READ"}})
	ok := []map[string]any{
		{"principal": "svc", "scp": []string{"LOGIN_TO_KAFKA", " READ ", "OTHER"}},
		{"principal": "svc", "scp": "READ LOGIN_TO_KAFKA"},
	}
	for _, extra := range ok {
		s := m.NewSession()
		if err := converse(t, s, oauth.Auth{Token: unsecuredToken(t, claimsAt("ignored", extra))}.AsMechanism()); err != nil {
			t.Fatalf("claims %v: %v", extra, err)
		}
		if s.Principal() != security.User("svc") {
			t.Fatalf("Principal %v", s.Principal())
		}
	}
	want := `{"status":"insufficient_scope", "scope":"[LOGIN_TO_KAFKA, READ]"}`
	for _, extra := range []map[string]any{
		{"principal": "svc", "scp": []string{"LOGIN_TO_KAFKA"}},
		{"principal": "svc", "scope": []string{"LOGIN_TO_KAFKA", "READ"}}, // wrong claim name
		{"principal": "svc"},
	} {
		wantReason(t, oauthRefused(t, m, unsecuredToken(t, claimsAt("ignored", extra)), want), "missing a required scope")
	}
}

func TestOAuthSignedJWKSFile(t *testing.T) {
	rs := newIssuer(t, "rsa-1", jose.RS256)
	es := newIssuer(t, "ec-1", jose.ES256)
	ed := newIssuer(t, "ed-1", jose.EdDSA)
	encKey := jose.JSONWebKey{Key: newIssuer(t, "enc", jose.ES256).key.Public(), KeyID: "enc", Use: "enc"}
	url := writeJWKS(t, rs.jwk(), es.jwk(), ed.jwk(), encKey)
	m := newOAuth(t, OAuthConfig{JWKSURL: url, ExpectedAudience: []string{"kafka", "other"}, ExpectedIssuer: "https://issuer.example"})

	good := map[string]any{"aud": "kafka", "iss": "https://issuer.example"}
	for _, iss := range []testIssuer{rs, es, ed} {
		t.Run(string(iss.alg), func(t *testing.T) {
			s := m.NewSession()
			if err := converse(t, s, oauth.Auth{Token: iss.sign(t, claimsAt("alice", good))}.AsMechanism()); err != nil {
				t.Fatal(err)
			}
			if s.Principal() != security.User("alice") || !s.Expiry().Equal(testNow.Add(time.Hour)) {
				t.Fatalf("Principal %v, Expiry %v", s.Principal(), s.Expiry())
			}
		})
	}
	// aud as a list, a token without kid (the key is found by type).
	noKid := es
	noKid.kid = ""
	tok := noKid.sign(t, claimsAt("alice", map[string]any{"aud": []string{"x", "other"}, "iss": "https://issuer.example"}))
	if err := converse(t, m.NewSession(), oauth.Auth{Token: tok}.AsMechanism()); err != nil {
		t.Fatal(err)
	}

	// A key published without kid verifies tokens whatever their kid.
	anon := newIssuer(t, "some-kid", jose.ES384)
	anonKey := anon.jwk()
	anonKey.KeyID = ""
	mAnon := newOAuth(t, OAuthConfig{JWKSURL: writeJWKS(t, anonKey)})
	if err := converse(t, mAnon.NewSession(), oauth.Auth{Token: anon.sign(t, claimsAt("alice", nil))}.AsMechanism()); err != nil {
		t.Fatal(err)
	}

	stranger := newIssuer(t, "ec-1", jose.ES256) // same kid, other key
	unknownKid := newIssuer(t, "ec-2", jose.ES256)
	hdr := b64JSON(t, map[string]any{"alg": "none"})
	for _, tc := range []struct {
		name   string
		token  string
		reason string
	}{
		{"expired", es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka", "iss": "https://issuer.example", "exp": testNow.Unix()})), "no longer valid"},
		{"not yet valid", es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka", "iss": "https://issuer.example", "nbf": testNow.Add(time.Minute).Unix()})), "not yet valid"},
		{"wrong audience", es.sign(t, claimsAt("alice", map[string]any{"aud": "elsewhere", "iss": "https://issuer.example"})), "Audience"},
		{"no audience", es.sign(t, claimsAt("alice", map[string]any{"iss": "https://issuer.example"})), "No Audience"},
		{"wrong issuer", es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka", "iss": "https://evil.example"})), "Issuer (iss) claim value (https://evil.example)"},
		{"no issuer", es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka"})), "No Issuer"},
		{"no iat", es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka", "iss": "https://issuer.example", "iat": nil})), "Issued At"},
		{"no exp", es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka", "iss": "https://issuer.example", "exp": nil})), "Expiration Time"},
		{"blank sub", es.sign(t, claimsAt("  ", good)), "whitespace"},
		{"no sub", es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka", "iss": "https://issuer.example", "sub": nil})), "non-null"},
		{"duplicate scope", es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka", "iss": "https://issuer.example", "scope": []string{"a", "a"}})), "duplicates"},
		{"bad signature", stranger.sign(t, claimsAt("alice", good)), "does not verify"},
		{"unknown kid", unknownKid.sign(t, claimsAt("alice", good)), "Unable to find a suitable verification key"},
		{"encryption key only", newIssuer(t, "enc", jose.ES256).sign(t, claimsAt("alice", good)), "Unable to find a suitable verification key"},
		{"alg none", hdr + "." + b64JSON(t, claimsAt("alice", good)) + ".", `"none" is not allowed`},
		{"alg none with signature", hdr + "." + b64JSON(t, claimsAt("alice", good)) + ".c2ln", `"none" is not allowed`},
		{"tampered payload", func() string {
			p := strings.Split(es.sign(t, claimsAt("alice", good)), ".")
			return p[0] + "." + b64JSON(t, claimsAt("admin", good)) + "." + p[2]
		}(), "does not verify"},
		{"HMAC algorithm", func() string {
			signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")},
				(&jose.SignerOptions{}).WithHeader("kid", "ec-1"))
			payload, _ := json.Marshal(claimsAt("alice", good))
			jws, _ := signer.Sign(payload)
			s, _ := jws.CompactSerialize()
			return s
		}(), "Could not validate"},
		{"not a JWT", "abc", "three sections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantReason(t, oauthRefused(t, m, tc.token, invalidTokenJSON), tc.reason)
		})
	}

	// Without an expected audience, a token with an aud claim is refused,
	// as Kafka (jose4j) refuses it; one without is accepted.
	m2 := newOAuth(t, OAuthConfig{JWKSURL: url, ClockSkew: 30 * time.Second})
	wantReason(t, oauthRefused(t, m2, es.sign(t, claimsAt("alice", map[string]any{"aud": "kafka"})), invalidTokenJSON),
		"no expected audience")
	if err := converse(t, m2.NewSession(), oauth.Auth{Token: es.sign(t, claimsAt("alice", nil))}.AsMechanism()); err != nil {
		t.Fatal(err)
	}
	// The clock skew tolerates a just-expired token.
	tok = es.sign(t, claimsAt("alice", map[string]any{"exp": testNow.Add(-29 * time.Second).Unix()}))
	if err := converse(t, m2.NewSession(), oauth.Auth{Token: tok}.AsMechanism()); err != nil {
		t.Fatalf("token expired within the skew: %v", err)
	}
	// A custom sub claim and scope as a space-separated string.
	m3 := newOAuth(t, OAuthConfig{JWKSURL: url, SubClaimName: "client_id", RequiredScope: []string{"kafka"}})
	s := m3.NewSession()
	tok = rs.sign(t, claimsAt("ignored", map[string]any{"client_id": " svc-1 ", "scope": "openid kafka"}))
	if err := converse(t, s, oauth.Auth{Token: tok}.AsMechanism()); err != nil {
		t.Fatal(err)
	}
	if s.Principal() != security.User("svc-1") {
		t.Fatalf("Principal %v", s.Principal())
	}
	oauthRefused(t, m3, rs.sign(t, claimsAt("ignored", map[string]any{"client_id": "svc-1", "scope": "openid"})),
		`{"status":"insufficient_scope", "scope":"[kafka]"}`)
}

// jwksServer serves a JWKS that the test can replace, counting requests.
type jwksServer struct {
	*httptest.Server
	body     atomic.Pointer[[]byte]
	status   atomic.Int32
	requests atomic.Int32
}

func newJWKSServer(t *testing.T, body []byte) *jwksServer {
	s := &jwksServer{}
	s.set(body)
	s.status.Store(http.StatusOK)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if code := int(s.status.Load()); code != http.StatusOK {
			http.Error(w, "unavailable", code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(*s.body.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(b []byte) { s.body.Store(&b) }

func TestOAuthJWKSOverHTTP(t *testing.T) {
	old := newIssuer(t, "old", jose.RS256)
	next := newIssuer(t, "next", jose.ES256)
	srv := newJWKSServer(t, jwksJSON(t, old.jwk()))
	m := newOAuth(t, OAuthConfig{JWKSURL: srv.URL + "/jwks", HTTPClient: srv.Client(), JWKSRetryBackoff: time.Millisecond})
	if n := srv.requests.Load(); n != 1 {
		t.Fatalf("%d JWKS requests at start, want 1", n)
	}
	if err := converse(t, m.NewSession(), oauth.Auth{Token: old.sign(t, claimsAt("alice", nil))}.AsMechanism()); err != nil {
		t.Fatal(err)
	}

	// The issuer rotates keys: a token with the new kid is refused at
	// first and makes the broker fetch the JWKS again, soon after which
	// the same token is accepted.
	srv.set(jwksJSON(t, old.jwk(), next.jwk()))
	tok := next.sign(t, claimsAt("bob", nil))
	wantReason(t, oauthRefused(t, m, tok, invalidTokenJSON), "Unable to find a suitable verification key")
	waitFor(t, "the JWKS refresh after an unknown kid", func() bool {
		return converse(t, m.NewSession(), oauth.Auth{Token: tok}.AsMechanism()) == nil
	})

	// An unknown kid triggers at most one refresh a minute (the test
	// clock stands still, so repeated tokens with it trigger no more).
	stray := newIssuer(t, "stray", jose.ES256).sign(t, claimsAt("eve", nil))
	before := srv.requests.Load()
	oauthRefused(t, m, stray, invalidTokenJSON)
	waitFor(t, "the refresh for kid stray", func() bool { return srv.requests.Load() > before })
	for range 5 {
		oauthRefused(t, m, stray, invalidTokenJSON)
	}
	rk := m.keys.(*remoteKeys)
	// A refresh goes through the one goroutine; wait until it is idle
	// (nothing pending) before counting.
	waitFor(t, "the refresh goroutine to be idle", func() bool { return len(rk.expedite) == 0 })
	if got := srv.requests.Load(); got != before+1 {
		t.Fatalf("%d refreshes for a repeated unknown kid, want 1", got-before)
	}

	// Close stops the refresh goroutine and sessions still work.
	m.Close()
	select {
	case <-rk.done:
	default:
		t.Fatal("refresh goroutine still running after Close")
	}
	m.Close() // idempotent
	if err := converse(t, m.NewSession(), oauth.Auth{Token: tok}.AsMechanism()); err != nil {
		t.Fatal(err)
	}
}

func TestOAuthJWKSPeriodicRefresh(t *testing.T) {
	iss := newIssuer(t, "k", jose.ES256)
	srv := newJWKSServer(t, jwksJSON(t))
	m := newOAuth(t, OAuthConfig{JWKSURL: srv.URL, HTTPClient: srv.Client(), JWKSRefresh: 10 * time.Millisecond,
		JWKSRetryBackoff: time.Millisecond, JWKSRetryBackoffMax: 5 * time.Millisecond})
	// A failing endpoint keeps the keys the broker has.
	srv.status.Store(http.StatusServiceUnavailable)
	n := srv.requests.Load()
	waitFor(t, "refreshes against a failing endpoint", func() bool { return srv.requests.Load() >= n+3 })
	srv.set(jwksJSON(t, iss.jwk()))
	srv.status.Store(http.StatusOK)
	waitFor(t, "a periodic refresh bringing the new key", func() bool {
		return len(m.keys.keys()) == 1
	})
	if err := converse(t, m.NewSession(), oauth.Auth{Token: iss.sign(t, claimsAt("alice", nil))}.AsMechanism()); err != nil {
		t.Fatal(err)
	}
}

func TestOAuthConfigErrors(t *testing.T) {
	srv := newJWKSServer(t, []byte("not json"))
	missing := "file://" + filepath.Join(t.TempDir(), "missing.json")
	for _, tc := range []struct {
		name string
		cfg  OAuthConfig
	}{
		{"neither validator", OAuthConfig{}},
		{"both validators", OAuthConfig{Unsecured: true, JWKSURL: "file:///x"}},
		{"bad scheme", OAuthConfig{JWKSURL: "ftp://x/jwks"}},
		{"negative skew", OAuthConfig{Unsecured: true, ClockSkew: -time.Second}},
		{"invalid required scope", OAuthConfig{Unsecured: true, RequiredScope: []string{`a"b`}}},
		{"missing file", OAuthConfig{JWKSURL: missing}},
		{"malformed JWKS over HTTP", OAuthConfig{JWKSURL: srv.URL, HTTPClient: srv.Client()}},
		{"unreachable JWKS", OAuthConfig{JWKSURL: "http://127.0.0.1:1/jwks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if m, err := NewOAuthBearer(tc.cfg); err == nil {
				m.(*OAuthBearer).Close()
				t.Fatal("accepted")
			}
		})
	}
	srv.status.Store(http.StatusInternalServerError)
	if _, err := NewOAuthBearer(OAuthConfig{JWKSURL: srv.URL, HTTPClient: srv.Client()}); err == nil {
		t.Fatal("JWKS endpoint answering 500 accepted")
	}
}

func TestParseJWKS(t *testing.T) {
	es := newIssuer(t, "ec", jose.ES256)
	priv := jose.JSONWebKey{Key: es.key, KeyID: "priv"}
	sym := jose.JSONWebKey{Key: []byte("secret-secret-secret"), KeyID: "sym"}
	doc, err := json.Marshal(map[string]any{"keys": []any{
		es.jwk(), priv, sym,
		map[string]any{"kty": "unknown", "kid": "u"},
		map[string]any{"kty": "RSA", "kid": "broken", "n": "!!", "e": "AQAB"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := parseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].KeyID != "ec" || keys[1].KeyID != "priv" || !keys[1].IsPublic() {
		t.Fatalf("keys %+v", keys)
	}
	for _, bad := range []string{"", "[]", `{"keys":{}}`, `{"other":[]}`} {
		if _, err := parseJWKS([]byte(bad)); err == nil {
			t.Errorf("parseJWKS(%q) accepted", bad)
		}
	}
}

func TestOAuthClientFirstMessages(t *testing.T) {
	m := newOAuth(t, OAuthConfig{Unsecured: true})
	tok := unsecuredToken(t, claimsAt("alice", nil))
	generic := "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"
	accept := []string{
		"n,,\x01auth=Bearer " + tok + "\x01\x01",
		"n,,\x01auth=bearer   " + tok + "\x01\x01",
		"n,a=alice,\x01auth=BEARER " + tok + "\x01\x01",
		"n,,\x01k=v v\t\r\n\x01auth=Bearer " + tok + "\x01z=1\x01\x01",
		"n,,\x01auth=Bearer junk\x01auth=Bearer " + tok + "\x01\x01", // the later auth wins
	}
	for _, in := range accept {
		s := m.NewSession()
		if out, done, err := s.Step([]byte(in)); err != nil || !done || len(out) != 0 {
			t.Fatalf("Step(%q) = %q, %v, %v", in, out, done, err)
		}
	}
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"dummy first", "\x01"},
		{"no gs2 header", "\x01auth=Bearer " + tok + "\x01\x01"},
		{"channel binding", "y,,\x01auth=Bearer " + tok + "\x01\x01"},
		{"no final 0x01", "n,,\x01auth=Bearer " + tok + "\x01"},
		{"no auth", "n,,\x01k=v\x01\x01"},
		{"no pairs", "n,,\x01\x01"},
		{"empty pair", "n,,\x01\x01\x01"},
		{"basic scheme", "n,,\x01auth=Basic dXNlcjpwYXNz\x01\x01"},
		{"no token", "n,,\x01auth=Bearer \x01\x01"},
		{"token with space", "n,,\x01auth=Bearer a b\x01\x01"},
		{"padding inside the token", "n,,\x01auth=Bearer YQ==.YQ==.\x01\x01"},
		{"bad key", "n,,\x01k1=v\x01auth=Bearer " + tok + "\x01\x01"},
		{"empty value", "n,,\x01k=\x01auth=Bearer " + tok + "\x01\x01"},
		{"non-ASCII value", "n,,\x01k=é\x01auth=Bearer " + tok + "\x01\x01"},
		{"bad authzid", "n,a=al,ice,\x01auth=Bearer " + tok + "\x01\x01"},
		{"too large", "n,,\x01auth=Bearer " + strings.Repeat("a", MaxOAuthBearerMessage) + "\x01\x01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := m.NewSession()
			out, done, err := s.Step([]byte(tc.in))
			if out != nil || done {
				t.Fatalf("Step = %q, %v", out, done)
			}
			wantMessage(t, err, generic)
			wantIllegalState(t, s)
		})
	}

	// After an error token only 0x01 is expected; anything else ends the
	// exchange the same way.
	s := m.NewSession()
	expired := unsecuredToken(t, claimsAt("alice", map[string]any{"exp": testNow.Unix()}))
	out, done, err := s.Step([]byte("n,,\x01auth=Bearer " + expired + "\x01\x01"))
	if err != nil || done || string(out) != invalidTokenJSON {
		t.Fatalf("first step = %q, %v, %v", out, done, err)
	}
	_, _, err = s.Step([]byte("n,,\x01auth=Bearer " + tok + "\x01\x01"))
	wantMessage(t, err, invalidTokenJSON)
	wantReason(t, err, "instead of 0x01", "Expiration Time")
	wantIllegalState(t, s)
}

// roundTripFunc is an http.RoundTripper without a network, so the JWKS
// refresh can run inside a synctest bubble on its fake clock.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestJWKSRefreshSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		iss := newIssuer(t, "k", jose.ES256)
		body := jwksJSON(t, iss.jwk())
		start := time.Now()
		var mu sync.Mutex
		var fetches []time.Duration
		failing := false
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			fetches = append(fetches, time.Since(start))
			if failing {
				return &http.Response{StatusCode: http.StatusBadGateway, Status: "502 Bad Gateway",
					Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Status: "200 OK",
				Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
		})
		snapshot := func() []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(fetches)
		}
		m, err := NewOAuthBearer(OAuthConfig{JWKSURL: "https://idp.example/jwks", HTTPClient: &http.Client{Transport: rt},
			JWKSRefresh: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		ob := m.(*OAuthBearer)

		// One fetch at start, then one every JWKSRefresh.
		time.Sleep(2*time.Minute + time.Second)
		synctest.Wait()
		if got, want := snapshot(), []time.Duration{0, time.Minute, 2 * time.Minute}; !slices.Equal(got, want) {
			t.Fatalf("fetches at %v, want %v", got, want)
		}

		// A failing endpoint is retried after 100ms, doubling, for up to
		// 10s (Kafka's backoff defaults); the keys are kept meanwhile.
		mu.Lock()
		failing = true
		mu.Unlock()
		time.Sleep(time.Minute + 20*time.Second)
		synctest.Wait()
		var retries []time.Duration
		for _, at := range snapshot()[3:] {
			retries = append(retries, at-3*time.Minute)
		}
		want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond,
			1500 * time.Millisecond, 3100 * time.Millisecond, 6300 * time.Millisecond, 10 * time.Second}
		if !slices.Equal(retries, want) {
			t.Fatalf("retries at %v, want %v", retries, want)
		}
		if len(ob.keys.keys()) != 1 {
			t.Fatal("failed refresh dropped the keys")
		}
		ob.Close()
	})
}

// Unknown key ids are remembered within bounds: at most 16, none longer
// than 1000 bytes, the oldest forgotten first.
func TestJWKSMissingKeyIDBounds(t *testing.T) {
	srv := newJWKSServer(t, jwksJSON(t))
	now := testNow
	m := newOAuth(t, OAuthConfig{JWKSURL: srv.URL, HTTPClient: srv.Client(), Now: func() time.Time { return now }})
	rk := m.keys.(*remoteKeys)
	rk.notFound(strings.Repeat("k", missingKeyIDMaxLen+1))
	for i := range 20 {
		now = now.Add(time.Second)
		rk.notFound(string(rune('a' + i)))
	}
	rk.mu.RLock()
	defer rk.mu.RUnlock()
	if len(rk.missing) != missingKeyIDMax {
		t.Fatalf("%d key ids remembered, want %d", len(rk.missing), missingKeyIDMax)
	}
	for i := range 20 {
		_, ok := rk.missing[string(rune('a'+i))]
		if want := i >= 20-missingKeyIDMax; ok != want {
			t.Fatalf("key id %c remembered %v, want %v", 'a'+i, ok, want)
		}
	}
}
