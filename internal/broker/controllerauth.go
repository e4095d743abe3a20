package broker

// The controller listener carries Silkworm's Raft and forwarding traffic,
// not Kafka requests, but it honours its security protocol like every
// listener: TLS (SSL, SASL_SSL) with the listener's ssl.* settings, and on
// SASL_PLAINTEXT/SASL_SSL a SASL exchange before anything else, with the
// listener's mechanisms (server side) and sasl.mechanism.controller.protocol
// plus the username and password of that mechanism's JAAS entry (client
// side). With an authorizer, the peer must be allowed CLUSTER_ACTION (a
// super user, typically), as Kafka requires of controller requests.
//
// The exchange is framed simply, big-endian: the client sends the
// mechanism name and then tokens, each as int32 length + bytes; the server
// answers each token with one status byte (0 continue, 1 done, 2 failed)
// and an int32 length + bytes (the server token, or the failure message).

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"
	franzsasl "github.com/twmb/franz-go/pkg/sasl"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/security"
)

const (
	authContinue byte = 0
	authDone     byte = 1
	authFailed   byte = 2

	// maxControllerAuthFrame bounds one frame of the exchange.
	maxControllerAuthFrame = 64 << 10
)

// controllerSecurity sets the quorum's TLS and authentication from the
// controller listener's security protocol. The returned listenerSec is
// closed with the broker (it may hold a JWKS refresher).
func (b *Broker) controllerSecurity(qc *metadata.QuorumConfig) (*listenerSec, error) {
	if len(b.cfg.ControllerListenerNames) == 0 {
		return nil, nil
	}
	name := b.cfg.ControllerListenerNames[0]
	l, ok := b.cfg.ListenerByName(name)
	if !ok {
		// A broker-only node dials controllers it does not listen as.
		l = config.Listener{Name: name, SecurityProtocol: b.cfg.ListenerSecurityProtocolMap[name]}
	}
	ls, err := b.newListenerSec(l)
	if err != nil {
		return nil, err
	}
	peer, err := newPeerSecurity(b.cfg, b.jaasFileEntry, l.Name, l.SecurityProtocol, "sasl.mechanism.controller.protocol")
	if err != nil {
		ls.close()
		return nil, err
	}
	if t := ls.tls.Load(); t != nil {
		qc.TLS = t.Config()
		qc.DialTLS = peer.tls
	}
	switch {
	case ls.usesSASL():
		for _, m := range ls.names {
			if m == security.ScramSHA256 || m == security.ScramSHA512 {
				ls.close()
				return nil, fmt.Errorf("SCRAM cannot authenticate the controller listener %s: its credentials live in the metadata the controllers replicate; use PLAIN (or mutual TLS) there", name)
			}
		}
		qc.AcceptAuth = func(c net.Conn) error { return b.acceptControllerAuth(ls, c) }
		qc.DialAuth = func(c net.Conn) error { return dialControllerAuth(peer.sasl, c) }
	case b.authz.acl != nil:
		// Without SASL the peer is its certificate's principal (SSL) or
		// ANONYMOUS (PLAINTEXT), and still needs CLUSTER_ACTION.
		qc.AcceptAuth = func(c net.Conn) error { return b.acceptControllerPeer(ls, c) }
	}
	return ls, nil
}

func writeAuthFrame(w io.Writer, status []byte, p []byte) error {
	buf := make([]byte, 0, len(status)+4+len(p))
	buf = append(buf, status...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(p)))
	buf = append(buf, p...)
	_, err := w.Write(buf)
	return err
}

func readAuthFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxControllerAuthFrame {
		return nil, fmt.Errorf("controller authentication frame of %d bytes", size)
	}
	p := make([]byte, size)
	_, err := io.ReadFull(r, p)
	return p, err
}

// acceptControllerPeer authorizes a peer of a PLAINTEXT or SSL controller
// listener: its principal (from its certificate on SSL, else ANONYMOUS)
// needs CLUSTER_ACTION, as Kafka's ControllerApis requires.
func (b *Broker) acceptControllerPeer(ls *listenerSec, c net.Conn) error {
	p := security.Anonymous
	if tc, ok := c.(*tls.Conn); ok {
		if err := tc.Handshake(); err != nil {
			b.countFailedAuthentication()
			return err
		}
		var err error
		if p, err = ls.tlsPrincipal(tc.ConnectionState().PeerCertificates); err != nil {
			b.countFailedAuthentication()
			return err
		}
	}
	return b.authorizeControllerPeer(p, c)
}

// authorizeControllerPeer checks CLUSTER_ACTION for a controller peer.
func (b *Broker) authorizeControllerPeer(p security.Principal, c net.Conn) error {
	if b.authz.acl != nil && !b.authz.acl.Authorize(p, hostOf(c.RemoteAddr()),
		kmsg.ACLOperationClusterAction, kmsg.ACLResourceTypeCluster, clusterResourceName) {
		b.countFailedAuthentication()
		b.log.Info("controller listener: peer refused", "remote", c.RemoteAddr().String(), "principal", p.String())
		return fmt.Errorf("principal %s may not use the controller listener: it needs CLUSTER_ACTION on the cluster (add it to super.users)", p)
	}
	return nil
}

// acceptControllerAuth is the server side of the exchange.
func (b *Broker) acceptControllerAuth(ls *listenerSec, c net.Conn) error {
	fail := func(err error) error {
		b.countFailedAuthentication()
		b.log.Info("controller listener: authentication failed", "remote", c.RemoteAddr().String(), "err", err)
		_ = writeAuthFrame(c, []byte{authFailed}, []byte(err.Error()))
		return err
	}
	name, err := readAuthFrame(c)
	if err != nil {
		return err
	}
	m := ls.mechs[string(name)]
	if m == nil {
		return fail(fmt.Errorf("SASL mechanism %q is not enabled on the controller listener %s (enabled: %v)", name, ls.name, ls.names))
	}
	s := m.NewSession()
	for {
		tok, err := readAuthFrame(c)
		if err != nil {
			return err
		}
		out, done, err := s.Step(tok)
		if err != nil {
			return fail(err)
		}
		if !done {
			if err := writeAuthFrame(c, []byte{authContinue}, out); err != nil {
				return err
			}
			continue
		}
		if err := b.authorizeControllerPeer(s.Principal(), c); err != nil {
			_ = writeAuthFrame(c, []byte{authFailed}, []byte(err.Error()))
			return err
		}
		return writeAuthFrame(c, []byte{authDone}, out)
	}
}

// dialControllerAuth is the client side of the exchange.
func dialControllerAuth(mech franzsasl.Mechanism, c net.Conn) error {
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	sess, tok, err := mech.Authenticate(context.Background(), host)
	if err != nil {
		return err
	}
	if err := writeAuthFrame(c, nil, []byte(mech.Name())); err != nil {
		return err
	}
	for {
		if err := writeAuthFrame(c, nil, tok); err != nil {
			return err
		}
		var status [1]byte
		if _, err := io.ReadFull(c, status[:]); err != nil {
			return err
		}
		resp, err := readAuthFrame(c)
		if err != nil {
			return err
		}
		switch status[0] {
		case authFailed:
			return fmt.Errorf("controller refused authentication: %s", resp)
		case authDone:
			done, _, err := sess.Challenge(resp)
			if err != nil {
				return err
			}
			if !done {
				return errors.New("controller finished authentication before the client mechanism did")
			}
			return nil
		}
		var done bool
		if done, tok, err = sess.Challenge(resp); err != nil {
			return err
		}
		if done {
			return errors.New("client mechanism finished before the controller did")
		}
	}
}
