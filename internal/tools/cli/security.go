package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	kafkasasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/javafmt"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/sasl"
)

// Security protocols, Kafka's security.protocol values.
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SASLPlaintext = "SASL_PLAINTEXT"
	SASLSSL       = "SASL_SSL"
)

// SASL mechanisms a tool can log in with (sasl.mechanism).
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
)

// unsecuredLoginHandler is the Java class of Kafka's default (unsecured)
// OAUTHBEARER login callback handler, the one this package implements.
const unsecuredLoginHandler = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"

// unsupportedSecurityProps are client properties that replace a part of
// the Java client (a class) or fetch tokens over HTTP; the tools cannot
// honour them, so they are refused when the protocol would use them.
var unsupportedSecurityProps = map[string]bool{
	"sasl.client.callback.handler.class":  true,
	"sasl.login.class":                    true,
	"sasl.oauthbearer.token.endpoint.url": true,
	"ssl.engine.factory.class":            true,
}

// securityOpts turns security.protocol and the ssl.* and sasl.* properties
// into kgo options. PLAINTEXT ignores ssl.* and sasl.*, SSL ignores
// sasl.*, as the Java client does.
func securityOpts(p Props) ([]kgo.Opt, error) {
	protocol := Plaintext
	if v, ok := p["security.protocol"]; ok {
		protocol = strings.ToUpper(strings.TrimSpace(v))
	}
	useTLS := protocol == SSL || protocol == SASLSSL
	useSASL := protocol == SASLPlaintext || protocol == SASLSSL
	for name := range p {
		if unsupportedSecurityProps[name] && ((useTLS && strings.HasPrefix(name, "ssl.")) || (useSASL && strings.HasPrefix(name, "sasl."))) {
			return nil, fmt.Errorf("property %s is not supported by Silkworm's tools", name)
		}
	}
	var opts []kgo.Opt
	if useTLS {
		cfg, err := security.NewClientTLS(func(key string) (string, bool) { v, ok := p[key]; return v, ok })
		if err != nil {
			return nil, fmt.Errorf("%s client TLS settings: %w", protocol, err)
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if useSASL {
		m, err := saslMechanism(p)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// saslMechanism builds the login of sasl.mechanism from sasl.jaas.config,
// the only place the tools read SASL credentials from (there is no JVM-wide
// JAAS file).
func saslMechanism(p Props) (kafkasasl.Mechanism, error) {
	mech := "GSSAPI" // Kafka's default
	if v, ok := p["sasl.mechanism"]; ok {
		mech = strings.TrimSpace(v)
	}
	switch mech {
	case MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer:
	default:
		return nil, fmt.Errorf("SASL mechanism %s is not supported; set sasl.mechanism to one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER", mech)
	}
	text, ok := p["sasl.jaas.config"]
	if !ok || strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("SASL mechanism %s needs the login module and credentials in sasl.jaas.config", mech)
	}
	entry, err := sasl.ParseJAAS(text)
	if err != nil {
		return nil, fmt.Errorf("invalid value for configuration sasl.jaas.config: %w", err)
	}
	if mech == MechanismOAuthBearer {
		if entry.LoginModule != sasl.OAuthBearerLoginModule {
			return nil, fmt.Errorf("SASL mechanism OAUTHBEARER needs %s in sasl.jaas.config, not %s", sasl.OAuthBearerLoginModule, entry.LoginModule)
		}
		if h, ok := p["sasl.login.callback.handler.class"]; ok && strings.TrimSpace(h) != "" && strings.TrimSpace(h) != unsecuredLoginHandler {
			return nil, fmt.Errorf("sasl.login.callback.handler.class %s is not supported; the tools build Kafka's unsecured OAUTHBEARER tokens only", h)
		}
		login, err := NewUnsecuredLogin(entry.Options)
		if err != nil {
			return nil, err
		}
		return oauth.Oauth(func(context.Context) (oauth.Auth, error) { return login.Auth(time.Now()) }), nil
	}
	// PlainLoginModule and ScramLoginModule both hand the username and the
	// password to whichever of PLAIN and SCRAM is in use, as in Java.
	if entry.LoginModule != sasl.PlainLoginModule && entry.LoginModule != sasl.ScramLoginModule {
		return nil, fmt.Errorf("SASL mechanism %s needs %s or %s in sasl.jaas.config, not %s", mech, sasl.PlainLoginModule, sasl.ScramLoginModule, entry.LoginModule)
	}
	user, hasUser := entry.Options["username"]
	pass, hasPass := entry.Options["password"]
	if !hasUser || !hasPass {
		return nil, fmt.Errorf("%s in sasl.jaas.config needs username and password", entry.LoginModule)
	}
	switch mech {
	case MechanismPlain:
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case MechanismScramSHA256:
		return scramAuth(user, pass, entry.Options).AsSha256Mechanism(), nil
	default:
		return scramAuth(user, pass, entry.Options).AsSha512Mechanism(), nil
	}
}

// scramAuth is a SCRAM login; tokenauth="true" logs in with a delegation
// token (its id as username, its HMAC as password), as Kafka's
// ScramLoginModule does.
func scramAuth(user, pass string, opts map[string]string) scram.Auth {
	return scram.Auth{User: user, Pass: pass, IsToken: strings.EqualFold(opts["tokenauth"], "true")}
}

// UnsecuredLogin makes the unsigned JWTs (alg "none") that Kafka's
// OAuthBearerUnsecuredLoginCallbackHandler makes from the options of an
// OAuthBearerLoginModule entry:
//
//	unsecuredLoginStringClaim_<name>="value"     a string claim (sub for the principal)
//	unsecuredLoginNumberClaim_<name>="1.5"       a number claim
//	unsecuredLoginListClaim_<name>=",a,b"        a list claim; the first character separates
//	unsecuredLoginExtension_<name>="value"       a SASL extension
//	unsecuredLoginPrincipalClaimName="sub"       the claim naming the principal
//	unsecuredLoginLifetimeSeconds="3600"         exp is iat plus this
//
// It is a value, safe for concurrent use; Auth makes a fresh token for
// each connection, so that none expires while a tool runs.
type UnsecuredLogin struct {
	claims     []string // "name":value JSON members other than exp and iat, sorted
	lifetime   time.Duration
	extensions map[string]string
}

var (
	extensionName  = regexp.MustCompile(`^[A-Za-z]+$`)
	extensionValue = regexp.MustCompile(`^[\x21-\x7E \t\r\n]+$`)
)

// NewUnsecuredLogin reads the options of an OAuthBearerLoginModule entry.
// Like Kafka it refuses options that make no token, a token without a
// principal, the reserved claims exp and iat, numbers and lifetimes that do
// not parse, and extensions that RFC 7628 does not allow.
func NewUnsecuredLogin(options map[string]string) (UnsecuredLogin, error) {
	const (
		prefix       = "unsecuredLogin"
		stringPrefix = prefix + "StringClaim_"
		numberPrefix = prefix + "NumberClaim_"
		listPrefix   = prefix + "ListClaim_"
		extPrefix    = prefix + "Extension_"
	)
	var l UnsecuredLogin
	if len(options) == 0 {
		return l, errors.New("OAuthBearerLoginModule in sasl.jaas.config has no options: no token to log in with")
	}
	onlyExtensions := true
	for k := range options {
		onlyExtensions = onlyExtensions && strings.HasPrefix(k, extPrefix)
	}
	if onlyExtensions {
		return l, errors.New("Extensions provided in login context without a token")
	}
	principalClaim := strings.TrimSpace(options[prefix+"PrincipalClaimName"])
	if principalClaim == "" {
		principalClaim = "sub"
	}
	lifetime := "3600"
	if v, ok := options[prefix+"LifetimeSeconds"]; ok {
		lifetime = v
	}
	secs, err := strconv.ParseInt(lifetime, 10, 64)
	if err != nil {
		return l, fmt.Errorf("unsecuredLoginLifetimeSeconds: not a number: %q", lifetime)
	}
	l.lifetime = time.Duration(secs) * time.Second

	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	reserved := func(name string) error {
		if name == "iat" || name == "exp" {
			return fmt.Errorf("Cannot explicitly set the '%s' claim", name)
		}
		return nil
	}
	principal := ""
	for _, k := range keys {
		v := options[k]
		switch {
		case strings.HasPrefix(k, stringPrefix) && len(k) > len(stringPrefix):
			name := k[len(stringPrefix):]
			if err := reserved(name); err != nil {
				return l, err
			}
			l.claims = append(l.claims, jsonString(name)+":"+jsonString(v))
			if name == principalClaim {
				principal = v
			}
		case strings.HasPrefix(k, numberPrefix) && len(k) > len(numberPrefix):
			name := k[len(numberPrefix):]
			if err := reserved(name); err != nil {
				return l, err
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return l, fmt.Errorf("%s: not a number: %q", k, v)
			}
			l.claims = append(l.claims, jsonString(name)+":"+javafmt.Double(f))
		case strings.HasPrefix(k, listPrefix) && len(k) > len(listPrefix):
			name := k[len(listPrefix):]
			if err := reserved(name); err != nil {
				return l, err
			}
			l.claims = append(l.claims, jsonString(name)+":"+jsonList(v))
		case strings.HasPrefix(k, extPrefix):
			name := k[len(extPrefix):]
			if !extensionName.MatchString(name) || name == "auth" {
				return l, fmt.Errorf("Extension name %s is invalid", name)
			}
			if !extensionValue.MatchString(v) {
				return l, fmt.Errorf("Extension value (%s) for extension %s is invalid", v, name)
			}
			if l.extensions == nil {
				l.extensions = map[string]string{}
			}
			l.extensions[name] = v
		}
	}
	if strings.TrimSpace(principal) == "" {
		return l, fmt.Errorf("no principal: the unsecured OAUTHBEARER token needs a non-empty '%s' claim (unsecuredLoginStringClaim_%s)", principalClaim, principalClaim)
	}
	return l, nil
}

// Token returns the unsigned JWT issued at now:
// base64url({"alg":"none"}) "." base64url(claims) ".", with exp and iat in
// seconds as Kafka writes them (Java doubles).
func (l UnsecuredLogin) Token(now time.Time) string {
	iat := float64(now.UnixMilli()) / 1000
	claims := "{" + jsonString("exp") + ":" + javafmt.Double(iat+l.lifetime.Seconds()) + "," + jsonString("iat") + ":" + javafmt.Double(iat)
	for _, c := range l.claims {
		claims += "," + c
	}
	claims += "}"
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString([]byte(claims)) + "."
}

// Auth is the OAUTHBEARER login for a connection made at now.
func (l UnsecuredLogin) Auth(now time.Time) (oauth.Auth, error) {
	return oauth.Auth{Token: l.Token(now), Extensions: l.extensions}, nil
}

// jsonString quotes s escaping only '\' and '"', as Kafka's handler means
// to (Kafka escapes the quotes first and so doubles the backslash it adds,
// which breaks the JSON; this does not).
func jsonString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + s + `"`
}

// jsonList is Kafka's listJsonText: the first character of v separates
// the elements of the rest; an empty element anywhere adds one "" at the
// end, as Java's split then Kafka's fix-up do.
func jsonList(v string) string {
	if len(v) <= 1 {
		return "[]"
	}
	sep, rest := v[:1], v[1:]
	elems := strings.Split(rest, sep)
	// Java's split drops trailing empty strings.
	for len(elems) > 1 && elems[len(elems)-1] == "" {
		elems = elems[:len(elems)-1]
	}
	var b strings.Builder
	for i, e := range elems {
		if i == 0 {
			b.WriteByte('[')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(e))
	}
	if strings.HasPrefix(rest, sep) || strings.HasSuffix(rest, sep) || strings.Contains(rest, sep+sep) {
		b.WriteString(`,""`)
	}
	b.WriteByte(']')
	return b.String()
}
