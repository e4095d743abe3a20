package config

import (
	"sort"
	"strings"
)

// securityKeys are the broker keys of TLS, SASL, authorization and quotas
// that Silkworm implements. They are read by name where they are used
// (ListenerValue, Value) rather than bound to typed fields, because most of
// them may be overridden per listener.
var securityKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.truststore.certificates",
	"ssl.client.auth", "ssl.enabled.protocols", "ssl.protocol", "ssl.cipher.suites",
	"ssl.endpoint.identification.algorithm", "ssl.principal.mapping.rules",
	"sasl.enabled.mechanisms", "sasl.jaas.config", "sasl.server.max.receive.size",
	"sasl.mechanism.inter.broker.protocol", "sasl.mechanism.controller.protocol",
	"sasl.oauthbearer.jwks.endpoint.url", "sasl.oauthbearer.jwks.endpoint.refresh.ms",
	"sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
	"sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.scope.claim.name",
	"sasl.oauthbearer.clock.skew.seconds",
	"connections.max.reauth.ms",
	"authorizer.class.name", "super.users", "allow.everyone.if.no.acl.found",
	"quota.window.num", "quota.window.size.seconds",
	"controller.quota.window.num", "controller.quota.window.size.seconds",
}

// SSLKeys are the ssl.* keys Silkworm implements, sorted.
func SSLKeys() []string {
	var out []string
	for _, k := range securityKeys {
		if strings.HasPrefix(k, "ssl.") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// listenerMechanismKeys may be set per listener and SASL mechanism:
// listener.name.<listener>.<mechanism>.<key>, as Kafka reads them.
var listenerMechanismKeys = []string{"sasl.jaas.config", "sasl.server.callback.handler.class", "connections.max.reauth.ms"}

// splitListenerKey splits listener.name.<listener>.[<mechanism>.]<key> into
// its listener name (upper-cased, as listener names compare) and key, and
// reports whether the key is one Silkworm implements per listener.
func splitListenerKey(name string) (listener, key string, supported bool) {
	rest, ok := strings.CutPrefix(name, "listener.name.")
	if !ok {
		return "", "", false
	}
	l, key, ok := strings.Cut(rest, ".")
	if !ok || l == "" {
		return "", "", false
	}
	if supportedBrokerKeys[key] {
		return strings.ToUpper(l), key, true
	}
	// <mechanism>.<key>: mechanisms contain '-' but no '.'.
	if _, mk, ok := strings.Cut(key, "."); ok && contains(listenerMechanismKeys, mk) {
		return strings.ToUpper(l), key, true
	}
	return strings.ToUpper(l), key, false
}

// ListenerValue is the value of key for a listener: Kafka's per-listener
// override listener.name.<listener>.<key> when one is set, else the
// broker-wide key (set value or default). listener is compared without
// case, as Kafka lower-cases the prefix.
func (b *Broker) ListenerValue(listener, key string) (string, bool) {
	if v, ok := b.values["listener.name."+strings.ToLower(listener)+"."+key]; ok {
		return v, true
	}
	return b.Value(key)
}

// ListenerMechanismValue is the value of a SASL mechanism's key for a
// listener: listener.name.<listener>.<mechanism>.<key> (Kafka's only place
// for a broker's sasl.jaas.config), falling back to the listener's and
// then the broker-wide key.
func (b *Broker) ListenerMechanismValue(listener, mechanism, key string) (string, bool) {
	if v, ok := b.values["listener.name."+strings.ToLower(listener)+"."+strings.ToLower(mechanism)+"."+key]; ok {
		return v, true
	}
	return b.ListenerValue(listener, key)
}

// ListenerByName returns the listener called name (upper case), if any.
func (b *Broker) ListenerByName(name string) (Listener, bool) {
	for _, l := range b.Listeners {
		if l.Name == name {
			return l, true
		}
	}
	return Listener{}, false
}
