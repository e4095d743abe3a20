package broker

// Inter-broker connections (replica fetchers, transaction markers) use
// the inter.broker.listener.name listener's security protocol: TLS with
// that listener's ssl.* settings (its keystore is the broker's client
// certificate) and SASL with sasl.mechanism.inter.broker.protocol and the
// username and password of that mechanism's JAAS entry on the listener,
// as Kafka's brokers authenticate to each other.

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	franzsasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/sasl"
)

// interBrokerSecurity is how this broker connects to another as a client.
type interBrokerSecurity struct {
	tls  *tls.Config         // nil without TLS
	sasl franzsasl.Mechanism // nil without SASL
}

// kgoOpts are the client options for a kgo client to another broker,
// dialing with dial when it is not nil.
func (s interBrokerSecurity) kgoOpts(dial func(ctx context.Context, network, address string) (net.Conn, error)) []kgo.Opt {
	var opts []kgo.Opt
	switch {
	case dial != nil && s.tls != nil:
		opts = append(opts, kgo.Dialer(func(ctx context.Context, network, address string) (net.Conn, error) {
			c, err := dial(ctx, network, address)
			if err != nil {
				return nil, err
			}
			cfg := s.tls.Clone()
			if cfg.ServerName == "" {
				cfg.ServerName, _, _ = net.SplitHostPort(address)
			}
			tc := tls.Client(c, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				c.Close()
				return nil, err
			}
			return tc, nil
		}))
	case dial != nil:
		opts = append(opts, kgo.Dialer(dial))
	case s.tls != nil:
		opts = append(opts, kgo.DialTLSConfig(s.tls.Clone()))
	}
	if s.sasl != nil {
		opts = append(opts, kgo.SASL(s.sasl))
	}
	return opts
}

// newPeerSecurity reads how this broker connects, as a client, to a
// listener of another node: its TLS settings and, on SASL, the mechanism
// named by mechanismKey (sasl.mechanism.inter.broker.protocol or
// sasl.mechanism.controller.protocol) with its JAAS credentials: from
// sasl.jaas.config, else from the JAAS file (fileEntry).
func newPeerSecurity(cfg interface {
	ListenerValue(listener, key string) (string, bool)
	ListenerMechanismValue(listener, mechanism, key string) (string, bool)
}, fileEntry func(listener, mechanism string) (sasl.JAASEntry, bool), listener, protocol, mechanismKey string) (interBrokerSecurity, error) {
	var s interBrokerSecurity
	get := func(key string) (string, bool) { return cfg.ListenerValue(listener, key) }
	if protocol == protoSSL || protocol == protoSASLSSL {
		t, err := security.NewClientTLS(get)
		if err != nil {
			return s, fmt.Errorf("listener %s: %w", listener, err)
		}
		s.tls = t
	}
	if protocol == protoSASLPlaintext || protocol == protoSASLSSL {
		mech, _ := get(mechanismKey)
		mech = strings.ToUpper(strings.TrimSpace(mech))
		switch mech {
		case "PLAIN", security.ScramSHA256, security.ScramSHA512:
		default:
			return s, fmt.Errorf("%s=%s is not supported for connections between nodes: set it to PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (and enable that mechanism on listener %s)",
				mechanismKey, mech, listener)
		}
		v, _ := cfg.ListenerMechanismValue(listener, mech, "sasl.jaas.config")
		e, fromFile := fileEntry(listener, mech)
		if strings.TrimSpace(v) != "" || !fromFile {
			var err error
			if e, err = sasl.ParseJAAS(v); err != nil {
				return s, fmt.Errorf("listener %s: listener.name.%s.%s.sasl.jaas.config: %w",
					listener, strings.ToLower(listener), strings.ToLower(mech), err)
			}
		}
		user, pass := e.Options["username"], e.Options["password"]
		if user == "" {
			return s, fmt.Errorf("listener %s: the %s JAAS entry needs username and password options: the credentials this broker uses to reach the others",
				listener, mech)
		}
		switch mech {
		case "PLAIN":
			s.sasl = plain.Auth{User: user, Pass: pass}.AsMechanism()
		case security.ScramSHA256:
			s.sasl = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		case security.ScramSHA512:
			s.sasl = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
		}
	}
	return s, nil
}
