package sasl

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/silkworm/silkworm/internal/security"
)

// OAuthConfig configures OAUTHBEARER: how the broker validates the bearer
// token a client sends. Exactly one of Unsecured and JWKSURL is set. It is
// a value; NewOAuthBearer keeps a copy with the defaults filled in.
type OAuthConfig struct {
	// Unsecured selects Kafka's default validator,
	// OAuthBearerUnsecuredValidatorCallbackHandler, for development:
	// unsigned tokens (alg "none") are accepted; SubClaimName,
	// ScopeClaimName, RequiredScope and ClockSkew are its JAAS options
	// unsecuredValidatorPrincipalClaimName, unsecuredValidatorScopeClaimName,
	// unsecuredValidatorRequiredScope and
	// unsecuredValidatorAllowableClockSkewMs (UnsecuredOAuthConfigFromJAAS
	// reads them).
	Unsecured bool

	// JWKSURL selects Kafka's OAuthBearerValidatorCallbackHandler: the
	// token's signature is checked against the keys of this JWK Set
	// (sasl.oauthbearer.jwks.endpoint.url), alg "none" is refused, exp and
	// iat are required. A file:// URL is read once by NewOAuthBearer; an
	// http(s):// URL is fetched by NewOAuthBearer, then again every
	// JWKSRefresh and soon after a token names a key id the set lacks.
	JWKSURL string
	// JWKSRefresh is sasl.oauthbearer.jwks.endpoint.refresh.ms; zero means
	// Kafka's default, one hour.
	JWKSRefresh time.Duration
	// JWKSRetryBackoff and JWKSRetryBackoffMax are
	// sasl.oauthbearer.jwks.endpoint.retry.backoff.ms and .max.ms: a failed
	// fetch is retried after JWKSRetryBackoff, doubling, until
	// JWKSRetryBackoffMax has passed. Zero means Kafka's defaults, 100ms
	// and 10s.
	JWKSRetryBackoff    time.Duration
	JWKSRetryBackoffMax time.Duration

	// ExpectedAudience is sasl.oauthbearer.expected.audience: the token's
	// aud must contain one of them. When it is empty, a token that has an
	// aud claim is refused, as Kafka (jose4j) does.
	ExpectedAudience []string
	// ExpectedIssuer is sasl.oauthbearer.expected.issuer: when set, the
	// token's iss must equal it.
	ExpectedIssuer string
	// SubClaimName is sasl.oauthbearer.sub.claim.name, the claim holding
	// the principal name; empty means "sub".
	SubClaimName string
	// ScopeClaimName is sasl.oauthbearer.scope.claim.name; empty means
	// "scope". A string claim is split at spaces (RFC 6749), a list claim
	// taken as it is.
	ScopeClaimName string
	// RequiredScope lists scope values the token must all have; otherwise
	// it is refused with status insufficient_scope. Kafka offers this for
	// the unsecured validator only; here it applies to both.
	RequiredScope []string
	// ClockSkew is the tolerance on exp, nbf and iat
	// (sasl.oauthbearer.clock.skew.seconds, whose Kafka default is 30s;
	// unsecuredValidatorAllowableClockSkewMs, default 0). Zero is no
	// tolerance; the caller supplies Kafka's default.
	ClockSkew time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// HTTPClient fetches an http(s) JWKSURL; nil means a client with a
	// 10s timeout.
	HTTPClient *http.Client
}

// Kafka's defaults for the JWKS endpoint.
const (
	DefaultJWKSRefresh         = time.Hour
	DefaultJWKSRetryBackoff    = 100 * time.Millisecond
	DefaultJWKSRetryBackoffMax = 10 * time.Second
)

// Validate checks the configuration as NewOAuthBearer does.
func (c OAuthConfig) Validate() error {
	switch {
	case c.Unsecured && c.JWKSURL != "":
		return errors.New("OAUTHBEARER: the unsecured validator and sasl.oauthbearer.jwks.endpoint.url exclude each other")
	case !c.Unsecured && c.JWKSURL == "":
		return errors.New("OAUTHBEARER: sasl.oauthbearer.jwks.endpoint.url must be set to validate signed tokens (or use the unsecured validator)")
	case c.ClockSkew < 0:
		return fmt.Errorf("OAUTHBEARER: clock skew must not be negative: %v", c.ClockSkew)
	case c.JWKSRefresh < 0 || c.JWKSRetryBackoff < 0 || c.JWKSRetryBackoffMax < 0:
		return errors.New("OAUTHBEARER: JWKS refresh and retry intervals must not be negative")
	}
	if c.JWKSURL != "" {
		u, err := url.Parse(c.JWKSURL)
		if err != nil {
			return fmt.Errorf("OAUTHBEARER: sasl.oauthbearer.jwks.endpoint.url %q: %w", c.JWKSURL, err)
		}
		switch strings.ToLower(u.Scheme) {
		case "file", "http", "https":
		default:
			return fmt.Errorf("OAUTHBEARER: sasl.oauthbearer.jwks.endpoint.url %q: scheme must be file, http or https", c.JWKSURL)
		}
	}
	for _, s := range c.RequiredScope {
		if !isScopeItem(s) {
			return fmt.Errorf("OAUTHBEARER: Invalid scope value: %s", s)
		}
	}
	return nil
}

// UnsecuredOAuthConfigFromJAAS returns the configuration of Kafka's
// unsecured validator from its JAAS entry options:
// unsecuredValidatorPrincipalClaimName, unsecuredValidatorScopeClaimName,
// unsecuredValidatorRequiredScope (space separated) and
// unsecuredValidatorAllowableClockSkewMs (a non-negative integer).
func UnsecuredOAuthConfigFromJAAS(e JAASEntry) (OAuthConfig, error) {
	c := OAuthConfig{Unsecured: true}
	c.SubClaimName = strings.TrimSpace(e.Options["unsecuredValidatorPrincipalClaimName"])
	c.ScopeClaimName = strings.TrimSpace(e.Options["unsecuredValidatorScopeClaimName"])
	for _, s := range strings.Split(strings.TrimSpace(e.Options["unsecuredValidatorRequiredScope"]), " ") {
		if s == "" {
			continue
		}
		if !isScopeItem(s) {
			return OAuthConfig{}, fmt.Errorf("Invalid scope value: %s", s)
		}
		c.RequiredScope = append(c.RequiredScope, s)
	}
	if v := strings.TrimSpace(e.Options["unsecuredValidatorAllowableClockSkewMs"]); v != "" {
		ms, err := strconv.ParseInt(v, 10, 32) // Java's Integer.parseInt
		if err != nil {
			return OAuthConfig{}, fmt.Errorf("For input string: \"%s\"", v)
		}
		if ms < 0 {
			return OAuthConfig{}, fmt.Errorf("Allowable clock skew millis must not be negative: %s", v)
		}
		c.ClockSkew = time.Duration(ms) * time.Millisecond
	}
	return c, nil
}

// isScopeItem is RFC 6749's scope-token: one or more of %x21 / %x23-5B /
// %x5D-7E.
func isScopeItem(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7E || c == 0x22 || c == 0x5C {
			return false
		}
	}
	return true
}

// OAuthBearer is the OAUTHBEARER mechanism (RFC 7628) with Kafka's
// behaviour. It is safe for concurrent use. With an http(s) JWKS it runs
// one goroutine that refreshes the keys; Close stops it.
type OAuthBearer struct {
	cfg  OAuthConfig // defaults filled in
	keys keySource   // nil with the unsecured validator

	closeOnce sync.Once
}

// NewOAuthBearer returns the OAUTHBEARER mechanism, an *OAuthBearer. With
// a JWKSURL it loads the keys first and fails if it cannot, as a Kafka
// broker fails to start; with an http(s) JWKSURL the caller must Close the
// mechanism (it implements interface{ Close() }) to stop the refresh.
func NewOAuthBearer(cfg OAuthConfig) (Mechanism, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.SubClaimName == "" {
		cfg.SubClaimName = "sub"
	}
	if cfg.ScopeClaimName == "" {
		cfg.ScopeClaimName = "scope"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.JWKSRefresh == 0 {
		cfg.JWKSRefresh = DefaultJWKSRefresh
	}
	if cfg.JWKSRetryBackoff == 0 {
		cfg.JWKSRetryBackoff = DefaultJWKSRetryBackoff
	}
	if cfg.JWKSRetryBackoffMax == 0 {
		cfg.JWKSRetryBackoffMax = DefaultJWKSRetryBackoffMax
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	m := &OAuthBearer{cfg: cfg}
	if !cfg.Unsecured {
		keys, err := newKeySource(cfg)
		if err != nil {
			return nil, err
		}
		m.keys = keys
	}
	return m, nil
}

var _ Mechanism = (*OAuthBearer)(nil)

// Name is "OAUTHBEARER".
func (m *OAuthBearer) Name() string { return OAuthBearerName }

// NewSession starts an exchange.
func (m *OAuthBearer) NewSession() Session { return &oauthSession{m: m} }

// Close stops the JWKS refresh goroutine, if there is one, and waits for
// it. Sessions keep working with the keys last loaded. Close is idempotent.
func (m *OAuthBearer) Close() {
	m.closeOnce.Do(func() {
		if m.keys != nil {
			m.keys.close()
		}
	})
}

// oauthSession is one OAUTHBEARER exchange. A valid token completes it in
// one step. An invalid one is answered with an error token (a JSON object
// with status invalid_token or insufficient_scope), the client sends the
// dummy 0x01 (RFC 7628 §3.2.3) and the exchange fails with that JSON as
// the error message, as in Kafka.
type oauthSession struct {
	m          *OAuthBearer
	state      sessionState
	refusal    *Error // the failure to report at the client's 0x01
	principal  security.Principal
	expiry     time.Time
	extensions map[string]string
}

func (s *oauthSession) Step(in []byte) ([]byte, bool, error) {
	switch s.state {
	case stateFirst:
		out, err := s.first(in)
		if err != nil {
			s.state = stateFailed
			return nil, false, err
		}
		if out != nil {
			s.state = stateFinal
			return out, false, nil
		}
		s.state = stateComplete
		return []byte{}, true, nil
	case stateFinal:
		s.state = stateFailed
		err := s.refusal
		s.refusal = nil
		if len(in) != 1 || in[0] != 0x01 {
			err = &Error{Mechanism: OAuthBearerName, custom: err.custom,
				Reason: fmt.Errorf("client answered the error token with %d bytes instead of 0x01: %w", len(in), err.Reason)}
		}
		return nil, false, err
	default:
		return nil, false, illegalState(OAuthBearerName, s.state)
	}
}

// first handles the client initial response. It returns a nil token and
// nil error on success, an error token to send when the token is refused,
// or an error when the message itself is wrong.
func (s *oauthSession) first(in []byte) ([]byte, error) {
	if len(in) > MaxOAuthBearerMessage {
		return nil, tooLarge(OAuthBearerName, len(in), MaxOAuthBearerMessage)
	}
	msg, err := parseOAuthClientFirst(in)
	if err != nil {
		return nil, genericError(OAuthBearerName, "%w", err)
	}
	tok, terr := s.m.validate(msg.token)
	if terr != nil {
		body := terr.json()
		s.refusal = &Error{Mechanism: OAuthBearerName, custom: body, Reason: terr}
		return []byte(body), nil
	}
	if msg.authzid != "" && msg.authzid != tok.principal {
		return nil, clientErrorf(OAuthBearerName,
			"Authentication failed: Client requested an authorization id (%s) that is different from the token's principal name (%s)",
			msg.authzid, tok.principal)
	}
	// Kafka's default validators accept every extension.
	s.extensions = msg.extensions
	s.principal = security.User(tok.principal)
	s.expiry = tok.expiry
	return nil, nil
}

func (s *oauthSession) Principal() security.Principal { return s.principal }

func (s *oauthSession) Expiry() time.Time { return s.expiry }

// Extensions returns the SASL extensions the client sent with its token
// (RFC 7628 key=value pairs other than auth), valid once Step reported
// done.
func (s *oauthSession) Extensions() map[string]string { return s.extensions }

// oauthClientFirst is what Kafka reads of the client initial response.
type oauthClientFirst struct {
	authzid    string // as sent: Kafka does not decode =2C/=3D here
	token      string
	extensions map[string]string
}

// parseOAuthClientFirst checks the client initial response against
// Kafka's grammar (OAuthBearerClientInitialResponse):
//
//	"n," ["a=" saslname] "," 0x01 *(key "=" value 0x01) 0x01
//
// with key [A-Za-z]+, value [\x21-\x7E \t\r\n]+, a mandatory
// auth="Bearer <token>" pair (scheme case-insensitive, token b64token) and
// the other pairs extensions (a later duplicate wins).
func parseOAuthClientFirst(in []byte) (oauthClientFirst, error) {
	var msg oauthClientFirst
	bad := errors.New("Invalid OAUTHBEARER client first message")
	s := string(in)
	rest, ok := strings.CutPrefix(s, "n,")
	if !ok {
		return msg, bad
	}
	authz, rest, ok := strings.Cut(rest, ",")
	if !ok {
		return msg, bad
	}
	if authz != "" {
		v, ok := strings.CutPrefix(authz, "a=")
		if !ok || !isSaslName(v) {
			return msg, bad
		}
		msg.authzid = v
	}
	// rest is 0x01 pairs 0x01, each pair ending in 0x01.
	if len(rest) < 2 || rest[0] != 0x01 || !strings.HasSuffix(rest, "\x01\x01") {
		return msg, bad
	}
	body := rest[1 : len(rest)-1] // the pairs, each with its 0x01
	props := map[string]string{}
	for body != "" {
		pair, tail, ok := strings.Cut(body, "\x01")
		if !ok {
			return msg, bad
		}
		body = tail
		k, v, ok := strings.Cut(pair, "=")
		if !ok || !isAlpha(k) || !isOAuthValue(v) {
			return msg, bad
		}
		props[k] = v
	}
	auth, ok := props["auth"]
	if !ok {
		return msg, errors.New("Invalid OAUTHBEARER client first message: 'auth' not specified")
	}
	delete(props, "auth")
	scheme, token, ok := strings.Cut(auth, " ")
	token = strings.TrimLeft(token, " ")
	if !ok || !isWordChars(scheme) || !isB64Token(token) {
		return msg, errors.New("Invalid OAUTHBEARER client first message: invalid 'auth' format")
	}
	if !strings.EqualFold(scheme, "bearer") {
		return msg, fmt.Errorf("Invalid scheme in OAUTHBEARER client first message: %s", scheme)
	}
	msg.token = token
	msg.extensions = props
	return msg, nil
}

// isOAuthValue: one or more of 0x21-0x7E, space, tab, CR, LF.
func isOAuthValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x21 || c > 0x7E) && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// isWordChars: one or more of Java's \w, [a-zA-Z_0-9].
func isWordChars(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// isB64Token is RFC 6750's b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" /
// "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') &&
			!strings.ContainsRune("-._~+/", rune(c)) {
			return false
		}
	}
	return true
}
