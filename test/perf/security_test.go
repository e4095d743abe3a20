package perf

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/security/securitytest"
)

// Security protocols SILKWORM_PERF_SECURITY selects, as the broker's
// listener.security.protocol.map names them.
const (
	protoPlaintext = "PLAINTEXT"
	protoSSL       = "SSL"
	protoSASLSSL   = "SASL_SSL"
)

// The SCRAM user the measured clients authenticate as over SASL_SSL. It is
// created with AlterUserScramCredentials at Kafka's default iteration
// count, as kafka-configs.sh would.
const (
	perfUser       = "perf"
	perfPassword   = "perf-secret"
	perfIterations = 4096
)

// parseSecurity maps SILKWORM_PERF_SECURITY (plaintext, ssl, sasl_ssl, any
// case; empty is plaintext) to the listener's security protocol.
func parseSecurity(s string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", protoPlaintext:
		return protoPlaintext, nil
	case protoSSL:
		return protoSSL, nil
	case protoSASLSSL:
		return protoSASLSSL, nil
	}
	return "", fmt.Errorf("SILKWORM_PERF_SECURITY=%q: want plaintext, ssl or sasl_ssl", s)
}

// perfSecurity is what the broker and the measured clients need for one
// security protocol: a test CA and the broker's PEM keystore for SSL and
// SASL_SSL, the SCRAM-SHA-512 user for SASL_SSL. It is used from the test
// goroutine only.
type perfSecurity struct {
	protocol string
	ca       *securitytest.CA // nil for PLAINTEXT
	keystore string           // ssl.keystore.location (PEM: key and chain)
}

// newPerfSecurity makes the certificates protocol needs, written into dir.
func newPerfSecurity(t *testing.T, protocol, dir string) *perfSecurity {
	t.Helper()
	s := &perfSecurity{protocol: protocol}
	if protocol == protoPlaintext {
		return s
	}
	s.ca = securitytest.NewCA(t)
	s.keystore = s.ca.Issue(t, "broker", "127.0.0.1", "localhost").KeystorePEM(t, dir, "broker")
	return s
}

// brokerOverrides are the broker settings of the protocol's listener. The
// PLAINTEXT setup listener stays the inter-broker listener (Kafka's
// default), which a single broker never uses.
func (s *perfSecurity) brokerOverrides() []string {
	if s.protocol == protoPlaintext {
		return nil
	}
	o := []string{"ssl.keystore.type=PEM", "ssl.keystore.location=" + s.keystore}
	if s.protocol == protoSASLSSL {
		o = append(o, "sasl.enabled.mechanisms=SCRAM-SHA-512")
	}
	return o
}

// clientOpts are the kgo options that connect a measured client to addr
// with the protocol.
func (s *perfSecurity) clientOpts(addr string) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(addr)}
	if s.protocol == protoPlaintext {
		return opts
	}
	opts = append(opts, kgo.DialTLSConfig(&tls.Config{RootCAs: s.ca.Pool(), ServerName: "127.0.0.1"}))
	if s.protocol == protoSASLSSL {
		opts = append(opts, kgo.SASL(scram.Auth{User: perfUser, Pass: perfPassword}.AsSha512Mechanism()))
	}
	return opts
}

// clientOpts are the kgo options of a measured client of b.
func (b *processBroker) clientOpts() []kgo.Opt { return b.sec.clientOpts(b.addr) }

// setUp prepares the broker for measured clients once it listens: for
// SASL_SSL it creates the SCRAM user over the PLAINTEXT listener at
// adminAddr, then waits until a client can authenticate with it at addr.
func (s *perfSecurity) setUp(t *testing.T, adminAddr, addr string) {
	t.Helper()
	if s.protocol != protoSASLSSL {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(adminAddr))
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{
		User: perfUser, Mechanism: kadm.ScramSha512, Iterations: perfIterations, Password: perfPassword,
	}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create SCRAM-SHA-512 user %s: %v", perfUser, err)
	}
	// The credential is usable once the metadata image holds it.
	for {
		err := s.ping(ctx, addr)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("user %s cannot authenticate over SASL_SSL: %v", perfUser, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ping connects one client to addr and sends a metadata request.
func (s *perfSecurity) ping(ctx context.Context, addr string) error {
	cl, err := kgo.NewClient(s.clientOpts(addr)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return cl.Ping(ctx)
}

// TestConnectionCost measures what a new client connection costs over
// SILKWORM_PERF_SECURITY: SILKWORM_PERF_CONNECTIONS (default 1000) times, one
// after the other, a franz-go client connects, pings (ApiVersions, with
// SASL_SSL SaslHandshake and two SaslAuthenticate of SCRAM-SHA-512 at 4096
// iterations, then Metadata) and closes. It prints the wall time per
// connection and the broker's and this process's CPU time per connection.
// franz-go derives the SCRAM salted password (PBKDF2) on every
// authentication, as Kafka clients do; the broker stores derived keys and
// runs none. A measurement: skipped unless SILKWORM_PERF=1.
func TestConnectionCost(t *testing.T) {
	if os.Getenv("SILKWORM_PERF") != "1" {
		t.Skip("a measurement, not a test: set SILKWORM_PERF=1 to run it")
	}
	n := envInt(t, "SILKWORM_PERF_CONNECTIONS", 1000)
	protocol, err := parseSecurity(os.Getenv("SILKWORM_PERF_SECURITY"))
	if err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, protocol)
	ctx, cancel := context.WithTimeout(context.Background(), phaseTimeout)
	defer cancel()
	cpu0, self0 := b.cpu(t), selfCPU(t)
	start := time.Now()
	for i := range n {
		if err := b.sec.ping(ctx, b.addr); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	brokerCPU, clientCPU := b.cpu(t)-cpu0, selfCPU(t)-self0
	fmt.Printf("| protocol | connections | ms/connection | broker CPU µs/connection | client CPU µs/connection |\n|---|---:|---:|---:|---:|\n")
	fmt.Printf("| %s | %d | %.3f | %.0f | %.0f |\n", protocol, n,
		float64(elapsed.Microseconds())/1e3/float64(n),
		float64(brokerCPU.Microseconds())/float64(n), float64(clientCPU.Microseconds())/float64(n))
}
