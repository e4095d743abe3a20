package broker

// Security wiring: what each listener needs to authenticate its
// connections (TLS, SASL mechanisms), the ACL authorizer and the client
// quota manager fed from the metadata image, and the check every handler
// makes (authorize).

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/quota"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/acl"
	"github.com/silkworm/silkworm/internal/security/sasl"
)

// Security protocols of a listener.
const (
	protoPlaintext     = "PLAINTEXT"
	protoSSL           = "SSL"
	protoSASLPlaintext = "SASL_PLAINTEXT"
	protoSASLSSL       = "SASL_SSL"
)

// Option configures a Broker beyond its config.Broker: things a
// properties file cannot say, such as Go callbacks.
type Option func(*Broker)

// WithPlainAuthenticator checks PLAIN passwords with a instead of the
// user_<name> entries of the listeners' JAAS configs: the pluggable store
// for PLAIN (what Kafka's sasl.server.callback.handler.class is for).
// a is called from connection goroutines and must be safe for concurrent
// use.
func WithPlainAuthenticator(a sasl.PlainAuthenticator) Option {
	return func(b *Broker) { b.plainAuth = a }
}

// WithJAASFile gives the broker the sections of a JAAS file (Kafka's
// -Djava.security.auth.login.config, which `silkworm server` takes from
// KAFKA_OPTS as Kafka's start script passes it to the JVM). A listener's
// mechanism without listener.name.<l>.<mechanism>.sasl.jaas.config takes
// its entry from the section <listener>.KafkaServer, else KafkaServer, as
// Kafka's JaasContext.loadServerContext does.
func WithJAASFile(sections map[string][]sasl.JAASEntry) Option {
	return func(b *Broker) { b.jaasFile = sections }
}

// jaasFileEntry is the JAAS file entry of mechanism on listener: the login
// module of the mechanism in the listener's KafkaServer section.
func (b *Broker) jaasFileEntry(listener, mechanism string) (sasl.JAASEntry, bool) {
	module := map[string]string{"PLAIN": sasl.PlainLoginModule, security.ScramSHA256: sasl.ScramLoginModule,
		security.ScramSHA512: sasl.ScramLoginModule, "OAUTHBEARER": sasl.OAuthBearerLoginModule}[mechanism]
	section, ok := b.jaasFile[strings.ToLower(listener)+".KafkaServer"]
	if !ok {
		section = b.jaasFile["KafkaServer"]
	}
	for _, e := range section {
		if e.LoginModule == module {
			return e, true
		}
	}
	return sasl.JAASEntry{}, false
}

// listenerSec is how one listener authenticates its connections. It is
// built at start; its TLS settings are swapped when they change
// dynamically (refreshListenerTLS) and reloaded when their files change.
// Connections keep the certificates they were accepted with.
type listenerSec struct {
	name     string // listener name, upper case
	protocol string // PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL

	tlsMu    sync.Mutex                         // serialises swaps of tls
	tls      atomic.Pointer[security.ServerTLS] // nil without TLS
	tlsSeen  string                             // the ssl.* settings tls was built from (tlsMu)
	tlsWatch func()                             // stops tls's file watch (tlsMu)
	mapper   *security.PrincipalMapper          // ssl.principal.mapping.rules
	mechs    map[string]sasl.Mechanism          // enabled SASL mechanisms; nil without SASL
	names    []string                           // enabled mechanism names, in config order
	closer   []func()                           // stops background work (JWKS refresh, file watch)

	maxReceive int32                    // sasl.server.max.receive.size: frame bound before authentication
	reauth     time.Duration            // connections.max.reauth.ms; 0 = no re-authentication
	reauthMech map[string]time.Duration // listener.name.<l>.<mechanism>.connections.max.reauth.ms
}

// reauthFor is connections.max.reauth.ms for a mechanism.
func (ls *listenerSec) reauthFor(mech string) time.Duration {
	if d, ok := ls.reauthMech[mech]; ok {
		return d
	}
	return ls.reauth
}

func (ls *listenerSec) usesTLS() bool {
	return ls.protocol == protoSSL || ls.protocol == protoSASLSSL
}

func (ls *listenerSec) usesSASL() bool {
	return ls.protocol == protoSASLPlaintext || ls.protocol == protoSASLSSL
}

func (ls *listenerSec) close() {
	for _, c := range ls.closer {
		c()
	}
	ls.tlsMu.Lock()
	defer ls.tlsMu.Unlock()
	if ls.tlsWatch != nil {
		ls.tlsWatch()
		ls.tlsWatch = nil
	}
}

// tlsFileCheck is how often a TLS listener checks whether its keystore or
// truststore files changed, to reload them (a renewed certificate written
// over the old file needs no restart and no AlterConfigs).
const tlsFileCheck = 10 * time.Second

// sslSettings is the canonical text of a listener's ssl.* settings, to
// tell when they changed.
func sslSettings(get func(string) (string, bool)) string {
	var sb strings.Builder
	for _, k := range config.SSLKeys() {
		v, _ := get(k)
		sb.WriteString(k + "=" + v + "\n")
	}
	return sb.String()
}

// setTLS builds the listener's TLS from get and swaps it in, unless the
// settings are the ones it already runs with. On error the old TLS stays.
func (ls *listenerSec) setTLS(b *Broker, get func(string) (string, bool)) error {
	seen := sslSettings(get)
	ls.tlsMu.Lock()
	defer ls.tlsMu.Unlock()
	if ls.tls.Load() != nil && seen == ls.tlsSeen {
		return nil
	}
	t, err := security.NewServerTLS(get, security.WithLogger(b.log.With("listener", ls.name)))
	if err != nil {
		return fmt.Errorf("listener %s: %w", ls.name, err)
	}
	rules, _ := get("ssl.principal.mapping.rules")
	mapper, err := security.ParsePrincipalMappingRules(rules)
	if err != nil {
		return fmt.Errorf("listener %s: %w", ls.name, err)
	}
	if ls.tlsWatch != nil {
		ls.tlsWatch()
	}
	ls.mapper = mapper
	ls.tls.Store(t)
	ls.tlsSeen = seen
	ls.tlsWatch = t.WatchFiles(tlsFileCheck)
	return nil
}

// newListenerSec builds a listener's security from the broker config.
func (b *Broker) newListenerSec(l config.Listener) (*listenerSec, error) {
	cfg := b.cfg
	get := func(key string) (string, bool) { return cfg.ListenerValue(l.Name, key) }
	ls := &listenerSec{name: l.Name, protocol: l.SecurityProtocol}
	switch ls.protocol {
	case protoPlaintext, protoSSL, protoSASLPlaintext, protoSASLSSL:
	default:
		return nil, fmt.Errorf("listener %s: unknown security protocol %q (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", l.Name, ls.protocol)
	}
	ls.maxReceive = int32(listenerInt(get, "sasl.server.max.receive.size", 524288))
	ls.reauth = time.Duration(listenerInt(get, "connections.max.reauth.ms", 0)) * time.Millisecond
	if ls.usesTLS() {
		if err := ls.setTLS(b, get); err != nil {
			return nil, err
		}
	}
	if ls.usesSASL() {
		if err := b.saslMechanisms(ls, get); err != nil {
			ls.close()
			return nil, fmt.Errorf("listener %s: %w", l.Name, err)
		}
	}
	return ls, nil
}

func listenerInt(get func(string) (string, bool), key string, def int64) int64 {
	if v, ok := get(key); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n
		}
	}
	return def
}

// saslMechanisms sets up the listener's sasl.enabled.mechanisms.
func (b *Broker) saslMechanisms(ls *listenerSec, get func(string) (string, bool)) error {
	v, _ := get("sasl.enabled.mechanisms")
	ls.mechs = map[string]sasl.Mechanism{}
	for _, name := range strings.Split(v, ",") {
		name = strings.ToUpper(strings.TrimSpace(name))
		if name == "" || ls.mechs[name] != nil {
			continue
		}
		if name == "GSSAPI" {
			// Listed next to others, as in many Kafka configs: those are
			// served, and a client asking for GSSAPI gets
			// UNSUPPORTED_SASL_MECHANISM with the list.
			b.log.Warn("GSSAPI (Kerberos) is not supported; the listener serves its other SASL mechanisms", "listener", ls.name)
			continue
		}
		m, stop, err := b.saslMechanism(ls.name, name)
		if err != nil {
			return err
		}
		if v, ok := b.cfg.ListenerMechanismValue(ls.name, name, "connections.max.reauth.ms"); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				if ls.reauthMech == nil {
					ls.reauthMech = map[string]time.Duration{}
				}
				ls.reauthMech[name] = time.Duration(n) * time.Millisecond
			}
		}
		ls.mechs[name] = m
		ls.names = append(ls.names, name)
		if stop != nil {
			ls.closer = append(ls.closer, stop)
		}
	}
	if len(ls.names) == 0 {
		return fmt.Errorf("sasl.enabled.mechanisms is %q: a SASL listener needs at least one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER "+
			"(GSSAPI, Kafka's default, is not supported)", v)
	}
	return nil
}

// saslMechanism builds one server-side mechanism for a listener.
func (b *Broker) saslMechanism(listener, name string) (sasl.Mechanism, func(), error) {
	cfg := b.cfg
	jaas := func() (sasl.JAASEntry, bool, error) {
		v, ok := cfg.ListenerMechanismValue(listener, name, "sasl.jaas.config")
		if !ok || strings.TrimSpace(v) == "" {
			e, ok := b.jaasFileEntry(listener, name)
			return e, ok, nil
		}
		e, err := sasl.ParseJAAS(v)
		if err != nil {
			return e, false, fmt.Errorf("listener.name.%s.%s.sasl.jaas.config: %w", strings.ToLower(listener), strings.ToLower(name), err)
		}
		return e, true, nil
	}
	switch name {
	case "PLAIN":
		if b.plainAuth != nil {
			return sasl.NewPlain(b.plainAuth), nil, nil
		}
		e, ok, err := jaas()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, fmt.Errorf("PLAIN is enabled but listener.name.%s.plain.sasl.jaas.config is not set: "+
				`give it org.apache.kafka.common.security.plain.PlainLoginModule required user_<name>="<password>" ...;`, strings.ToLower(listener))
		}
		return sasl.NewPlain(sasl.PlainUsersFromJAAS(e)), nil, nil
	case security.ScramSHA256, security.ScramSHA512:
		m, err := sasl.NewScram(name, func(user string) (security.ScramCredential, bool) {
			return scramCredential(b.meta.Image(), user, name)
		})
		return m, nil, err
	case "OAUTHBEARER":
		return b.oauthMechanism(listener, jaas)
	}
	return nil, nil, fmt.Errorf("unknown SASL mechanism %q in sasl.enabled.mechanisms", name)
}

// oauthMechanism is OAUTHBEARER with Kafka's two validators: signatures
// checked against a JWKS when sasl.oauthbearer.jwks.endpoint.url is set
// (OAuthBearerValidatorCallbackHandler), else the unsecured validator
// configured by the JAAS options (Kafka's default, for development).
func (b *Broker) oauthMechanism(listener string, jaas func() (sasl.JAASEntry, bool, error)) (sasl.Mechanism, func(), error) {
	get := func(key string) string {
		v, _ := b.cfg.ListenerMechanismValue(listener, "OAUTHBEARER", key)
		return strings.TrimSpace(v)
	}
	oc := sasl.OAuthConfig{
		JWKSURL:        get("sasl.oauthbearer.jwks.endpoint.url"),
		ExpectedIssuer: get("sasl.oauthbearer.expected.issuer"),
		SubClaimName:   get("sasl.oauthbearer.sub.claim.name"),
		ScopeClaimName: get("sasl.oauthbearer.scope.claim.name"),
	}
	if v := get("sasl.oauthbearer.expected.audience"); v != "" {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				oc.ExpectedAudience = append(oc.ExpectedAudience, a)
			}
		}
	}
	if n, err := strconv.ParseInt(get("sasl.oauthbearer.clock.skew.seconds"), 10, 64); err == nil {
		oc.ClockSkew = time.Duration(n) * time.Second
	}
	if n, err := strconv.ParseInt(get("sasl.oauthbearer.jwks.endpoint.refresh.ms"), 10, 64); err == nil {
		oc.JWKSRefresh = time.Duration(n) * time.Millisecond
	}
	if oc.JWKSURL == "" {
		// Kafka's default validator: unsigned tokens, configured only by
		// the JAAS options.
		e, _, err := jaas()
		if err != nil {
			return nil, nil, err
		}
		if oc, err = sasl.UnsecuredOAuthConfigFromJAAS(e); err != nil {
			return nil, nil, err
		}
	}
	m, err := sasl.NewOAuthBearer(oc)
	if err != nil {
		return nil, nil, err
	}
	var stop func()
	if c, ok := m.(interface{ Close() }); ok {
		stop = c.Close
	}
	return m, stop, nil
}

// scramCredential finds a user's credential for a mechanism in the image.
func scramCredential(im *metadata.Image, user, mechanism string) (security.ScramCredential, bool) {
	for _, c := range im.Scram[user] {
		if c.Mechanism == mechanism {
			return c, true
		}
	}
	return security.ScramCredential{}, false
}

// tlsPrincipal is the principal of an SSL connection: from the client
// certificate's subject when it sent one (mapped by
// ssl.principal.mapping.rules), else ANONYMOUS.
func (ls *listenerSec) tlsPrincipal(peers []*x509.Certificate) (security.Principal, error) {
	ls.tlsMu.Lock()
	mapper := ls.mapper
	ls.tlsMu.Unlock()
	if len(peers) == 0 || mapper == nil {
		return security.Anonymous, nil
	}
	return mapper.Principal(peers[0])
}

// refreshListenerTLS applies dynamic ssl.* changes (Kafka's way to rotate
// certificates: AlterConfigs of listener.name.<l>.ssl.keystore.location,
// even to the same path) to the listeners. force reloads the files even
// when the settings are unchanged. Errors are logged; the old TLS stays.
func (b *Broker) refreshListenerTLS(im *metadata.Image, force bool) {
	b.mu.RLock()
	srv := b.srv
	b.mu.RUnlock()
	if srv == nil {
		return
	}
	dc := b.dynamicConfig(im)
	for _, bl := range srv.lns {
		ls := bl.sec
		if !ls.usesTLS() {
			continue
		}
		get := func(key string) (string, bool) { return dc.ListenerValue(ls.name, key) }
		err := ls.setTLS(b, get)
		if err == nil && force {
			err = ls.tls.Load().Reload()
		}
		if err != nil {
			b.log.Error("TLS settings not applied; the listener keeps its current certificates", "listener", ls.name, "err", err)
		}
	}
}

// authz is the broker's authorizer and quota state. The authorizer is nil
// when authorizer.class.name is empty: every request is allowed, as in
// Kafka without an authorizer.
type authz struct {
	acl    *acl.Authorizer
	quotas *quota.Manager
	// version of the image the state was last fed from, to skip
	// re-indexing when an image changes nothing of it.
	aclsSeen, quotasSeen atomic.Pointer[metadata.Image]
}

// kafkaAuthorizers are the class names Kafka users set; any of them turns
// on Silkworm's authorizer (StandardAuthorizer semantics).
var kafkaAuthorizers = []string{
	"org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"kafka.security.authorizer.AclAuthorizer",
	"kafka.security.auth.SimpleAclAuthorizer",
	"silkworm",
}

// newAuthz reads authorizer.class.name, super.users,
// allow.everyone.if.no.acl.found and the quota windows.
func newAuthz(cfg *config.Broker) (*authz, error) {
	a := &authz{}
	if cls, _ := cfg.Value("authorizer.class.name"); strings.TrimSpace(cls) != "" {
		if !slices.Contains(kafkaAuthorizers, strings.TrimSpace(cls)) {
			return nil, fmt.Errorf("invalid value %q for configuration authorizer.class.name: Silkworm's authorizer implements Kafka's StandardAuthorizer; use org.apache.kafka.metadata.authorizer.StandardAuthorizer (or leave it empty for no authorization)", cls)
		}
		var supers []string
		if v, _ := cfg.Value("super.users"); v != "" {
			for _, s := range strings.Split(v, ";") {
				if s = strings.TrimSpace(s); s != "" {
					supers = append(supers, s)
				}
			}
		}
		var err error
		a.acl, err = acl.New(acl.Config{
			SuperUsers:                supers,
			AllowEveryoneIfNoACLFound: boolConfig(cfg, "allow.everyone.if.no.acl.found", false),
		})
		if err != nil {
			return nil, fmt.Errorf("super.users: %w", err)
		}
	}
	a.quotas = quota.NewManager(quota.Config{
		WindowNum:            int(intConfig(cfg, "quota.window.num", 11)),
		WindowSize:           time.Duration(intConfig(cfg, "quota.window.size.seconds", 1)) * time.Second,
		ControllerWindowNum:  int(intConfig(cfg, "controller.quota.window.num", 11)),
		ControllerWindowSize: time.Duration(intConfig(cfg, "controller.quota.window.size.seconds", 1)) * time.Second,
		NumIOThreads:         cfg.NumIOThreads,
	})
	return a, nil
}

// apply feeds the ACLs and quotas of a new image. Called from applyImage.
func (a *authz) apply(im *metadata.Image) {
	if prev := a.aclsSeen.Load(); a.acl != nil && (prev == nil || !sameSlice(prev.ACLs, im.ACLs)) {
		a.acl.SetBindings(im.ACLs)
	}
	a.aclsSeen.Store(im)
	if prev := a.quotasSeen.Load(); prev == nil || !sameSlice(prev.ClientQuotas, im.ClientQuotas) {
		a.quotas.SetQuotas(im.ClientQuotas)
	}
	a.quotasSeen.Store(im)
}

// sameSlice reports whether two slices share their backing array and
// length: images share unchanged slices, so this spots "no change" cheaply.
func sameSlice[T any](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// authorize reports whether the request's principal may do op on a
// resource. Always true without an authorizer.
func (b *Broker) authorize(r *request, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	if b.authz.acl == nil {
		return true
	}
	return b.authz.acl.Authorize(r.principal, r.c.host, op, rt, name)
}

// authorizeCluster is authorize on the cluster resource.
func (b *Broker) authorizeCluster(r *request, op kmsg.ACLOperation) bool {
	return b.authorize(r, op, kmsg.ACLResourceTypeCluster, clusterResourceName)
}

// clusterResourceName is the name of Kafka's only cluster resource.
const clusterResourceName = "kafka-cluster"

// authorizedOperations is the KIP-430 bitfield for a resource, or Kafka's
// "not requested" value (INT32_MIN) when the client did not ask for it.
// Without an authorizer it is every operation the resource supports.
func (b *Broker) authorizedOperations(r *request, include bool, rt kmsg.ACLResourceType, name string) int32 {
	if !include {
		return -2147483648
	}
	if rt == kmsg.ACLResourceTypeCluster && !b.authorizeCluster(r, kmsg.ACLOperationDescribe) {
		return 0 // Kafka tells nothing of the cluster to whom may not describe it
	}
	if b.authz.acl == nil {
		switch rt {
		case kmsg.ACLResourceTypeTopic:
			return operationsField(topicOperations)
		case kmsg.ACLResourceTypeCluster:
			return operationsField(clusterOperations)
		case kmsg.ACLResourceTypeGroup:
			return operationsField(groupOperations)
		}
		return 0
	}
	return b.authz.acl.AuthorizedOperations(r.principal, r.c.host, rt, name)
}

// ACL operation codes the GROUP resource supports (READ 3, DELETE 6,
// DESCRIBE 8).
var groupOperations = []int32{3, 6, 8}

// authorizeCreateTopic is Kafka's rule for creating a topic: CREATE on the
// cluster, or else on the topic.
func (b *Broker) authorizeCreateTopic(r *request, name string) bool {
	return b.authorizeCluster(r, kmsg.ACLOperationCreate) ||
		b.authorize(r, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeTopic, name)
}

// hostOf is the client address ACLs match on: the peer's IP as Java
// prints it (Kafka compares ACL hosts against that form).
func hostOf(addr net.Addr) string {
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
		return acl.HostString(ap.Addr())
	}
	return addr.String()
}

// onListener is br as clients of listener see it: Host and Port are its
// endpoint on that listener (Kafka answers each listener with its own
// endpoints). It is nil when br does not advertise that listener. A
// registration without endpoints (an older metadata log) is taken as is.
func onListener(br *metadata.Broker, listener string) *metadata.Broker {
	if br == nil || len(br.Listeners) == 0 {
		return br
	}
	for _, e := range br.Listeners {
		if e.Name == listener {
			c := *br
			c.Host, c.Port = e.Host, e.Port
			return &c
		}
	}
	return nil
}

// authorizeGroup is authorize on a consumer group.
func (b *Broker) authorizeGroup(r *request, op kmsg.ACLOperation, group string) bool {
	return b.authorize(r, op, kmsg.ACLResourceTypeGroup, group)
}

// errClusterAuthorization is a request refused for want of an operation
// on the cluster resource (CLUSTER_AUTHORIZATION_FAILED).
var errClusterAuthorization = errors.New(kerr.ClusterAuthorizationFailed.Message)

// authorizeConfigs checks op (DESCRIBE_CONFIGS or ALTER_CONFIGS) on a
// config resource: the topic, or the cluster for a broker resource.
func (b *Broker) authorizeConfigs(r *request, op kmsg.ACLOperation, rt kmsg.ConfigResourceType, name string) *apiError {
	switch rt {
	case kmsg.ConfigResourceTypeTopic:
		if !b.authorize(r, op, kmsg.ACLResourceTypeTopic, name) {
			return newAPIError(kerr.TopicAuthorizationFailed, "%s", kerr.TopicAuthorizationFailed.Message)
		}
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		if !b.authorizeCluster(r, op) {
			return newAPIError(kerr.ClusterAuthorizationFailed, "%s", kerr.ClusterAuthorizationFailed.Message)
		}
	}
	return nil
}
