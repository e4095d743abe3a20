package sasl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
)

// bearerToken is a token a validator accepted.
type bearerToken struct {
	principal string
	expiry    time.Time
	scope     []string
}

// OAuth error statuses (RFC 6750 §3.1) as Kafka's validators report them.
const (
	statusInvalidToken      = "invalid_token"
	statusInsufficientScope = "insufficient_scope"
)

// tokenError is why a validator refused a token. The client learns only
// the status (and, for insufficient_scope, the required scope) through the
// error token; err is for the broker's log.
type tokenError struct {
	status string
	scope  []string // the required scope, with insufficient_scope
	err    error
}

func (e *tokenError) Error() string { return e.status + ": " + e.err.Error() }

func (e *tokenError) Unwrap() error { return e.err }

// json is the error token, formatted as Kafka formats it
// (OAuthBearerSaslServer.jsonErrorResponse): {"status":"invalid_token"},
// or {"status":"insufficient_scope", "scope":"[a, b]"}.
func (e *tokenError) json() string {
	s := `{"status":"` + e.status + `"`
	if e.status == statusInsufficientScope {
		s += `, "scope":"[` + strings.Join(e.scope, ", ") + `]"`
	}
	return s + "}"
}

func invalidToken(format string, args ...any) *tokenError {
	return &tokenError{status: statusInvalidToken, err: fmt.Errorf(format, args...)}
}

// validate checks a bearer token with the configured validator.
func (m *OAuthBearer) validate(token string) (bearerToken, *tokenError) {
	var tok bearerToken
	var terr *tokenError
	if m.cfg.Unsecured {
		tok, terr = m.validateUnsecured(token)
	} else {
		tok, terr = m.validateSigned(token)
	}
	if terr != nil {
		return tok, terr
	}
	for _, want := range m.cfg.RequiredScope {
		if !slices.Contains(tok.scope, want) {
			return bearerToken{}, &tokenError{status: statusInsufficientScope, scope: m.cfg.RequiredScope,
				err: fmt.Errorf("The provided scope (%v) was missing a required scope (%s).  All required scope elements: %v",
					tok.scope, want, m.cfg.RequiredScope)}
		}
	}
	return tok, nil
}

// validateUnsecured is Kafka's OAuthBearerUnsecuredJws and
// OAuthBearerUnsecuredValidatorCallbackHandler: three dot-separated parts
// with an empty signature and alg "none"; exp required, iat optional and
// not after now (plus skew), exp after iat and after now (minus skew); the
// principal claim a non-blank string. nbf is ignored, as in Kafka.
func (m *OAuthBearer) validateUnsecured(token string) (bearerToken, *tokenError) {
	if strings.Contains(token, "..") {
		return bearerToken{}, invalidToken("Malformed compact serialization contains '..'")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return bearerToken{}, invalidToken("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
	}
	header, err := decodeJSONSegment(parts[0])
	if err != nil {
		return bearerToken{}, invalidToken("JWS header: %v", err)
	}
	claims, err := decodeJSONSegment(parts[1])
	if err != nil {
		return bearerToken{}, invalidToken("JWT claims: %v", err)
	}
	if alg, ok := header["alg"].(string); !ok {
		return bearerToken{}, invalidToken("JWS header must have an Algorithm value")
	} else if alg != "none" {
		return bearerToken{}, invalidToken("Unsecured JWS must have 'none' for an algorithm")
	}
	if parts[2] != "" {
		return bearerToken{}, invalidToken("Unsecured JWS must not contain a digital signature")
	}
	scope := unsecuredScope(claims[m.cfg.ScopeClaimName])
	exp, ok, err := numberClaim(claims, "exp")
	if err != nil {
		return bearerToken{}, invalidToken("%v", err)
	}
	if !ok {
		return bearerToken{}, invalidToken("No expiration time in JWT")
	}
	name := m.cfg.SubClaimName
	principal, isString := claims[name].(string)
	if _, present := claims[name]; present && !isString {
		return bearerToken{}, invalidToken("The '%s' claim was not of type String: %s", name, jsonType(claims[name]))
	}
	if strings.TrimSpace(principal) == "" {
		return bearerToken{}, invalidToken("No principal name in JWT claim: %s", name)
	}
	iat, hasIat, err := numberClaim(claims, "iat")
	if err != nil {
		return bearerToken{}, invalidToken("%v", err)
	}
	nowMs := m.cfg.Now().UnixMilli()
	skewMs := m.cfg.ClockSkew.Milliseconds()
	if hasIat && 1000*iat > float64(nowMs+skewMs) {
		return bearerToken{}, invalidToken("The Issued At value (%f seconds) was after the indicated time (%d ms) plus allowable clock skew (%d ms)",
			iat, nowMs, skewMs)
	}
	if float64(nowMs-skewMs) >= 1000*exp {
		return bearerToken{}, invalidToken("The indicated time (%d ms) minus allowable clock skew (%d ms) was on or after the Expiration Time value (%f seconds)",
			nowMs, skewMs, exp)
	}
	if hasIat && exp <= iat {
		return bearerToken{}, invalidToken("The Expiration Time time (%f seconds) was not after the Issued At time (%f seconds)", exp, iat)
	}
	return bearerToken{principal: principal, expiry: time.UnixMilli(int64(math.Round(exp * 1000))), scope: scope}, nil
}

// unsecuredScope is the unsecured validator's scope: a string claim split
// at spaces, a list claim's non-blank items trimmed, nothing otherwise.
func unsecuredScope(v any) []string {
	var scope []string
	switch v := v.(type) {
	case string:
		scope = strings.Fields(v)
	case []any:
		for _, item := range v {
			s := strings.TrimSpace(jsonText(item))
			if s != "" && !slices.Contains(scope, s) {
				scope = append(scope, s)
			}
		}
	}
	return scope
}

// signatureAlgorithms are the JWS algorithms a signed token may use:
// every asymmetric one go-jose verifies. HMAC algorithms are left out (a
// JWKS publishes public keys) and "none" is refused.
var signatureAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// validateSigned is Kafka's ValidatorAccessTokenValidator (jose4j's
// JwtConsumer): the signature must verify with a key of the JWKS (chosen
// by kid, key type and alg); exp and iat are required; exp and nbf are
// checked with the clock skew; iss and aud against the expectations; the
// sub claim (SubClaimName) is a non-blank string; the scope claim has no
// blank or duplicate values.
func (m *OAuthBearer) validateSigned(token string) (bearerToken, *tokenError) {
	token = strings.TrimSpace(token)
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return bearerToken{}, invalidToken("Malformed JWT provided; expected three sections (header, payload, and signature), but %d sections provided", len(parts))
	}
	header, err := decodeJSONSegment(parts[0])
	if err != nil {
		return bearerToken{}, invalidToken("JWS header: %v", err)
	}
	if alg, _ := header["alg"].(string); strings.EqualFold(alg, "none") {
		return bearerToken{}, invalidToken(`JWS algorithm "none" is not allowed: tokens must be signed (sasl.oauthbearer.jwks.endpoint.url is set)`)
	}
	for i, name := range []string{"header", "payload", "signature"} {
		if parts[i] == "" {
			return bearerToken{}, invalidToken("Malformed JWT provided; expected at least three sections (header, payload, and signature), but %s section missing", name)
		}
	}
	jws, err := jose.ParseSignedCompact(token, signatureAlgorithms)
	if err != nil {
		return bearerToken{}, invalidToken("Could not validate the access token: %v", err)
	}
	h := jws.Signatures[0].Header
	keys := candidateKeys(m.keys.keys(), h.KeyID, h.Algorithm)
	if len(keys) == 0 {
		m.keys.notFound(h.KeyID)
		return bearerToken{}, invalidToken("Unable to find a suitable verification key for JWS with kid %q and alg %s in the JWKS from %s",
			h.KeyID, h.Algorithm, m.cfg.JWKSURL)
	}
	var payload []byte
	for _, k := range keys {
		if p, err := jws.Verify(k); err == nil {
			payload = p
			break
		}
	}
	if payload == nil {
		return bearerToken{}, invalidToken("JWS signature (kid %q, alg %s) does not verify with the %d candidate keys of %s",
			h.KeyID, h.Algorithm, len(keys), m.cfg.JWKSURL)
	}
	claims, err := parseJSONObject(payload)
	if err != nil {
		return bearerToken{}, invalidToken("JWT claims: %v", err)
	}
	return m.checkClaims(claims)
}

func (m *OAuthBearer) checkClaims(claims map[string]any) (bearerToken, *tokenError) {
	exp, ok, err := numericDate(claims, "exp")
	if err != nil {
		return bearerToken{}, invalidToken("%v", err)
	}
	if !ok {
		return bearerToken{}, invalidToken("No Expiration Time (exp) claim present.")
	}
	iat, ok, err := numericDate(claims, "iat")
	if err != nil {
		return bearerToken{}, invalidToken("%v", err)
	}
	if !ok {
		return bearerToken{}, invalidToken("No Issued At (iat) claim present.")
	}
	nbf, hasNbf, err := numericDate(claims, "nbf")
	if err != nil {
		return bearerToken{}, invalidToken("%v", err)
	}
	now, skew := m.cfg.Now(), m.cfg.ClockSkew
	if !now.Before(exp.Add(skew)) {
		return bearerToken{}, invalidToken("The JWT is no longer valid - the evaluation time %s is on or after the Expiration Time (exp=%s) claim value (even when providing %v of leeway to account for clock skew).",
			now.UTC().Format(time.RFC3339), exp.UTC().Format(time.RFC3339), skew)
	}
	if hasNbf && now.Add(skew).Before(nbf) {
		return bearerToken{}, invalidToken("The JWT is not yet valid as the evaluation time %s is before the Not Before (nbf=%s) claim time (even when providing %v of leeway to account for clock skew).",
			now.UTC().Format(time.RFC3339), nbf.UTC().Format(time.RFC3339), skew)
	}
	if want := m.cfg.ExpectedIssuer; want != "" {
		iss, ok := claims["iss"].(string)
		if !ok {
			return bearerToken{}, invalidToken("No Issuer (iss) claim present but was expecting %s", want)
		}
		if iss != want {
			return bearerToken{}, invalidToken("Issuer (iss) claim value (%s) doesn't match expected value of %s", iss, want)
		}
	}
	aud, err := audienceClaim(claims)
	if err != nil {
		return bearerToken{}, invalidToken("%v", err)
	}
	switch want := m.cfg.ExpectedAudience; {
	case len(want) == 0 && len(aud) > 0:
		return bearerToken{}, invalidToken("Audience (aud) claim %v present in the JWT but no expected audience value(s) were provided (sasl.oauthbearer.expected.audience)", aud)
	case len(want) > 0 && len(aud) == 0:
		return bearerToken{}, invalidToken("No Audience (aud) claim present; expected one of %v", want)
	case len(want) > 0 && !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(want, a) }):
		return bearerToken{}, invalidToken("Audience (aud) claim %v doesn't contain an acceptable identifier. Expected one of %v as an aud value.", aud, want)
	}
	subName := m.cfg.SubClaimName
	rawSub, present := claims[subName]
	sub, isString := rawSub.(string)
	switch {
	case present && !isString:
		return bearerToken{}, invalidToken("Could not extract the '%s' claim from the access token: it is a %s", subName, jsonType(rawSub))
	case !present:
		return bearerToken{}, invalidToken("%s value must be non-null", subName)
	case sub == "":
		return bearerToken{}, invalidToken("%s value must be non-empty", subName)
	case strings.TrimSpace(sub) == "":
		return bearerToken{}, invalidToken("%s value must not contain only whitespace", subName)
	}
	scope, err := signedScope(m.cfg.ScopeClaimName, claims[m.cfg.ScopeClaimName])
	if err != nil {
		return bearerToken{}, invalidToken("%v", err)
	}
	if exp.Before(time.Unix(0, 0)) {
		return bearerToken{}, invalidToken("exp value must be non-negative; value given was \"%d\"", exp.UnixMilli())
	}
	if iat.Before(time.Unix(0, 0)) {
		return bearerToken{}, invalidToken("iat value must be null or non-negative; value given was \"%d\"", iat.UnixMilli())
	}
	return bearerToken{principal: strings.TrimSpace(sub), expiry: exp, scope: scope}, nil
}

// signedScope is the secured validator's scope: a string claim split at
// spaces, a list claim of strings; values must not be blank or repeated.
func signedScope(name string, v any) ([]string, error) {
	var items []string
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(v) == "" {
			items = []string{v}
		} else {
			items = strings.Fields(v)
		}
	case []any:
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("%s value must contain strings, found a %s", name, jsonType(item))
			}
			items = append(items, s)
		}
	default:
		return nil, nil
	}
	scope := make([]string, 0, len(items))
	for _, s := range items {
		switch {
		case s == "":
			return nil, fmt.Errorf("%s value must be non-empty", name)
		case strings.TrimSpace(s) == "":
			return nil, fmt.Errorf("%s value must not contain only whitespace", name)
		}
		s = strings.TrimSpace(s)
		if slices.Contains(scope, s) {
			return nil, fmt.Errorf("%s value must not contain duplicates - %s already present", name, s)
		}
		scope = append(scope, s)
	}
	return scope, nil
}

// audienceClaim is aud as a list: absent, a string, or a list of strings.
func audienceClaim(claims map[string]any) ([]string, error) {
	switch v := claims["aud"].(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		aud := make([]string, 0, len(v))
		for _, a := range v {
			s, ok := a.(string)
			if !ok {
				return nil, fmt.Errorf("The value of the 'aud' claim is not the expected type (an array containing a %s)", jsonType(a))
			}
			aud = append(aud, s)
		}
		return aud, nil
	default:
		return nil, fmt.Errorf("The value of the 'aud' claim is not the expected type (%s)", jsonType(v))
	}
}

// numberClaim is a claim that must be a JSON number when present.
func numberClaim(claims map[string]any, name string) (float64, bool, error) {
	v, ok := claims[name]
	if !ok {
		return 0, false, nil
	}
	n, isNumber := v.(json.Number)
	if !isNumber {
		return 0, false, fmt.Errorf("The '%s' claim was not of type Number: %s", name, jsonType(v))
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
		return 0, false, fmt.Errorf("The '%s' claim is out of range: %s", name, n)
	}
	return f, true, nil
}

// numericDate is an RFC 7519 NumericDate claim in whole seconds, as jose4j
// reads it (a fraction is dropped).
func numericDate(claims map[string]any, name string) (time.Time, bool, error) {
	f, ok, err := numberClaim(claims, name)
	if err != nil || !ok {
		return time.Time{}, ok, err
	}
	return time.Unix(int64(f), 0), true, nil
}

// decodeJSONSegment decodes one part of a compact JWS: base64url, padded
// or not (Kafka's unsecured validator also takes the standard alphabet),
// holding a JSON object.
func decodeJSONSegment(s string) (map[string]any, error) {
	raw := strings.TrimRight(s, "=")
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(raw); err != nil {
			return nil, errors.New("malformed Base64 URL encoded value")
		}
	}
	return parseJSONObject(b)
}

// parseJSONObject parses exactly one JSON object, keeping numbers as
// json.Number. Invalid UTF-8 is refused rather than replaced.
func parseJSONObject(b []byte) (map[string]any, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("malformed JSON: invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if obj == nil {
		return nil, errors.New("malformed JSON: not an object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("malformed JSON: data after the object")
	}
	return obj, nil
}

// jsonType names a decoded JSON value's type for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "String"
	case json.Number:
		return "Number"
	case bool:
		return "Boolean"
	case []any:
		return "List"
	default:
		return "Object"
	}
}

// jsonText is a scalar's text, as Jackson's asText gives it.
func jsonText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return fmt.Sprint(v)
	}
	return ""
}
