package broker

// Benchmarks of the cost of security: SCRAM authentications on a fresh
// connection, and the fetch data path over TLS (where a response's file
// regions cannot go out with sendfile).
//
// SCRAM: each iteration dials the SASL_PLAINTEXT (or SASL_SSL) listener of
// an in-process broker, sends SaslHandshake v1 and two SaslAuthenticate v2
// (client-first, client-final), checks the server signature and closes the
// connection. The client side runs on the benchmark goroutine, locked to
// its OS thread, so its CPU time is that thread's (CLOCK_THREAD_CPUTIME_ID)
// and the rest of the process's CPU time is the broker's (its connection
// goroutines, handlers, the runtime). Reported per authentication:
//
//	ms/auth          wall time
//	client-µs/auth   CPU time of the client thread
//	broker-µs/auth   process CPU time minus the client thread's
//
// Two clients: "franz-go" is franz-go's pkg/sasl/scram session, which
// derives the salted password with PBKDF2 (stored iterations, 4096 here,
// Kafka's default) on every authentication, as every Kafka client does on
// every new connection; "keys-cached" is xdg-go/scram's client, which
// caches the derived keys per salt and iteration count, so its
// authentications after the first run no PBKDF2. The difference of the two
// is the client's PBKDF2; BenchmarkSCRAMSaltedPassword measures it alone.
//
//	go test ./internal/broker -run '^$' -bench 'SCRAM' -benchtime 1000x
//	go test ./internal/broker -run '^$' -bench 'FetchTLS' -benchtime 1000x

import (
	"bufio"
	"context"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"fmt"
	"hash"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	franzscram "github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/xdg-go/scram"
	"golang.org/x/sys/unix"

	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/sasl"
	"github.com/silkworm/silkworm/internal/security/securitytest"
)

// Credentials of the SCRAM benchmark users, stored with Kafka's default
// iteration count.
const (
	benchSCRAMUser       = "bench"
	benchSCRAMPassword   = "bench-secret"
	benchSCRAMIterations = 4096
)

// startSecureBenchBroker starts an in-process broker with a PLAINTEXT
// listener (its setup client) and the listeners and settings of overrides,
// creates the single-partition bench topic and returns the broker with that
// partition. Both are closed when b ends.
func startSecureBenchBroker(b *testing.B, overrides ...string) (*Broker, *partition.Partition) {
	b.Helper()
	brk, ps := startBenchTopicBroker(b, 1, overrides...)
	return brk, ps[0]
}

// createBenchSCRAMUser creates the bench user for both SCRAM mechanisms
// over the broker's PLAINTEXT listener.
func createBenchSCRAMUser(b *testing.B, brk *Broker) {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brk.ListenerAddr("PLAINTEXT")))
	if err != nil {
		b.Fatalf("client: %v", err)
	}
	defer cl.Close()
	// One request per mechanism: Kafka refuses a user twice in one request.
	for _, m := range []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512} {
		res, err := kadm.NewClient(cl).AlterUserSCRAMs(b.Context(), nil, []kadm.UpsertSCRAM{{
			User: benchSCRAMUser, Mechanism: m, Iterations: benchSCRAMIterations, Password: benchSCRAMPassword,
		}})
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			b.Fatalf("create %s user: %v", m, err)
		}
	}
}

// threadCPUTime is the CPU time of the calling OS thread; the caller must
// be locked to it (runtime.LockOSThread) for two readings to compare.
func threadCPUTime(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatalf("clock_gettime: %v", err)
	}
	return time.Duration(ts.Nano())
}

// scramClient is one client side of a SCRAM exchange: first returns the
// client-first message, step answers a server message (the client-final
// message for server-first, nil after checking server-final).
type scramClient interface {
	first() ([]byte, error)
	step(server []byte) ([]byte, error)
}

// franzSCRAM is franz-go's SCRAM client: PBKDF2 on every authentication.
type franzSCRAM struct {
	mech    string
	session interface {
		Challenge([]byte) (bool, []byte, error)
	}
}

func (c *franzSCRAM) first() ([]byte, error) {
	auth := franzscram.Auth{User: benchSCRAMUser, Pass: benchSCRAMPassword}
	m := auth.AsSha256Mechanism()
	if c.mech == "SCRAM-SHA-512" {
		m = auth.AsSha512Mechanism()
	}
	s, msg, err := m.Authenticate(context.Background(), "127.0.0.1")
	c.session = s
	return msg, err
}

func (c *franzSCRAM) step(server []byte) ([]byte, error) {
	_, msg, err := c.session.Challenge(server)
	return msg, err
}

// cachedSCRAM is xdg-go/scram's client, whose derived keys are cached
// across conversations by salt and iteration count.
type cachedSCRAM struct {
	client *scram.Client
	conv   *scram.ClientConversation
}

func newCachedSCRAM(b *testing.B, mech string) *cachedSCRAM {
	hash := scram.SHA256
	if mech == "SCRAM-SHA-512" {
		hash = scram.SHA512
	}
	cl, err := hash.NewClient(benchSCRAMUser, benchSCRAMPassword, "")
	if err != nil {
		b.Fatalf("xdg-go/scram client: %v", err)
	}
	return &cachedSCRAM{client: cl}
}

func (c *cachedSCRAM) first() ([]byte, error) {
	c.conv = c.client.NewConversation()
	msg, err := c.conv.Step("")
	return []byte(msg), err
}

func (c *cachedSCRAM) step(server []byte) ([]byte, error) {
	msg, err := c.conv.Step(string(server))
	if err == nil && c.conv.Done() && !c.conv.Valid() {
		return nil, io.ErrUnexpectedEOF
	}
	if msg == "" {
		return nil, err
	}
	return []byte(msg), err
}

// benchConnection dials addr (with TLS when cfg is not nil), runs exchange
// on the connection and closes it.
func benchConnection(b *testing.B, addr string, cfg *tls.Config, exchange func(*benchClient)) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatalf("dial: %v", err)
	}
	defer nc.Close()
	if cfg != nil {
		tc := tls.Client(nc, cfg)
		if err := tc.Handshake(); err != nil {
			b.Fatalf("TLS handshake: %v", err)
		}
		nc = tc
	}
	exchange(&benchClient{b: b, nc: nc, br: bufio.NewReaderSize(nc, 4<<10)})
}

// benchSCRAMExchange is SaslHandshake v1 with mech, then SaslAuthenticate
// v2 rounds driven by cl until it has checked the server signature.
func benchSCRAMExchange(rc *benchClient, mech string, cl scramClient) {
	b := rc.b
	format := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench"))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, mech
	rc.send(format.AppendRequest(nil, hs, 0))
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	hsResp.Version = 1
	rc.recv(hsResp, false)
	if hsResp.ErrorCode != 0 {
		b.Fatalf("SaslHandshake %s: error %d", mech, hsResp.ErrorCode)
	}
	msg, err := cl.first()
	if err != nil {
		b.Fatalf("client-first: %v", err)
	}
	for round := 0; msg != nil; round++ {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 2, msg
		rc.send(format.AppendRequest(nil, req, 0))
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.Version = 2
		rc.recv(resp, true)
		if resp.ErrorCode != 0 {
			b.Fatalf("SaslAuthenticate round %d: error %d: %v", round, resp.ErrorCode, resp.ErrorMessage)
		}
		if msg, err = cl.step(resp.SASLAuthBytes); err != nil {
			b.Fatalf("SCRAM round %d: %v", round, err)
		}
	}
}

// benchNoAuthExchange is three ApiVersions round trips, as many as a SCRAM
// exchange makes: the baseline cost of a connection without SASL.
func benchNoAuthExchange(rc *benchClient) {
	format := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench"))
	for range 3 {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "bench", "1"
		rc.send(format.AppendRequest(nil, req, 0))
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 3
		rc.recv(resp, false) // ApiVersions answers with header v0
		if resp.ErrorCode != 0 {
			rc.b.Fatalf("ApiVersions: error %d", resp.ErrorCode)
		}
	}
}

// benchConnections runs connect b.N times on the benchmark goroutine,
// locked to its thread, and reports wall and CPU time per connection.
func benchConnections(b *testing.B, connect func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, thread0 := benchCPUTime(b), threadCPUTime(b)
	for b.Loop() {
		connect()
	}
	b.StopTimer()
	cpu, thread := benchCPUTime(b)-cpu0, threadCPUTime(b)-thread0
	n := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/n, "ms/auth")
	b.ReportMetric(float64(thread.Nanoseconds())/1e3/n, "client-µs/auth")
	b.ReportMetric(float64((cpu-thread).Nanoseconds())/1e3/n, "broker-µs/auth")
}

// BenchmarkSCRAMAuthentication is one SCRAM authentication on a new
// connection per iteration, over SASL_PLAINTEXT and SASL_SSL (TLS
// handshake included); see the file comment for the metrics. The
// PLAINTEXT and SSL "no-auth" cases are the same connection without SASL
// (three ApiVersions round trips instead of the three SASL ones): the cost
// of a connection, which the SCRAM cases include.
func BenchmarkSCRAMAuthentication(b *testing.B) {
	ca := securitytest.NewCA(b)
	dir := b.TempDir()
	keystore := ca.Issue(b, "broker", "127.0.0.1", "localhost").KeystorePEM(b, dir, "broker")
	brk, _ := startSecureBenchBroker(b,
		"listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
		"ssl.keystore.type=PEM", "ssl.keystore.location="+keystore)
	createBenchSCRAMUser(b, brk)
	tlsConfig := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}

	for _, listener := range []string{"PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL"} {
		addr := brk.ListenerAddr(listener)
		var cfg *tls.Config
		if strings.HasSuffix(listener, "SSL") {
			cfg = tlsConfig
		}
		if !strings.HasPrefix(listener, "SASL") {
			b.Run(listener+"/no-auth", func(b *testing.B) {
				benchConnections(b, func() { benchConnection(b, addr, cfg, benchNoAuthExchange) })
			})
			continue
		}
		for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
			for _, client := range []string{"franz-go", "keys-cached"} {
				b.Run(listener+"/"+mech+"/"+client, func(b *testing.B) {
					var cl scramClient = &franzSCRAM{mech: mech}
					if client == "keys-cached" {
						cl = newCachedSCRAM(b, mech)
					}
					exchange := func(rc *benchClient) { benchSCRAMExchange(rc, mech, cl) }
					benchConnection(b, addr, cfg, exchange) // fills the key cache, warms the broker
					benchConnections(b, func() { benchConnection(b, addr, cfg, exchange) })
				})
			}
		}
	}
}

// BenchmarkSCRAMServerExchange is the broker's SCRAM work of one
// authentication without a connection: a session of the broker's
// mechanism (internal/security/sasl) stepped through client-first and
// client-final, driven by a client whose keys are cached (a few HMACs per
// exchange on its side, counted here too). It is what the broker adds to a
// connection for SCRAM; it runs no PBKDF2.
func BenchmarkSCRAMServerExchange(b *testing.B) {
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		b.Run(mech, func(b *testing.B) {
			cred, err := sasl.NewScramCredential(mech, benchSCRAMPassword, []byte("0123456789abcdefghijklmnopqrstuv"), benchSCRAMIterations)
			if err != nil {
				b.Fatal(err)
			}
			m, err := sasl.NewScram(mech, func(user string) (security.ScramCredential, bool) {
				return cred, user == benchSCRAMUser
			})
			if err != nil {
				b.Fatal(err)
			}
			cl := newCachedSCRAM(b, mech)
			exchange := func() {
				s := m.NewSession()
				msg, err := cl.first()
				for err == nil && msg != nil {
					var out []byte
					if out, _, err = s.Step(msg); err == nil {
						msg, err = cl.step(out)
					}
				}
				if err != nil {
					b.Fatalf("exchange: %v", err)
				}
			}
			exchange() // fills the client's key cache
			for b.Loop() {
				exchange()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/auth")
		})
	}
}

// BenchmarkSCRAMSaltedPassword is the client's PBKDF2 of one SCRAM
// authentication at Kafka's default 4096 iterations: SaltedPassword :=
// Hi(password, salt, i), which a client without a key cache computes on
// every connection.
func BenchmarkSCRAMSaltedPassword(b *testing.B) {
	salt := []byte("0123456789abcdefghijklmnopqrstuv")
	for _, h := range []struct {
		name string
		new  func() hash.Hash
		size int
	}{{"SHA-256", sha256.New, sha256.Size}, {"SHA-512", sha512.New, sha512.Size}} {
		b.Run(h.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := pbkdf2.Key(h.new, benchSCRAMPassword, salt, benchSCRAMIterations, h.size); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/auth")
		})
	}
}

// benchFetchFrameMax is benchFetchFrame with a partition limit of
// maxBytes: at least one whole batch whatever the limit (KIP-74).
func benchFetchFrameMax(offset int64, maxBytes int32) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.Version = benchFetchVersion
	req.ReplicaID = -1
	req.MinBytes = 1
	req.MaxBytes = maxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = benchTopic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset = offset
	rp.CurrentLeaderEpoch = -1
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = maxBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 0)
}

// BenchmarkFetchTLS is BenchmarkFetch100B/Loopback over an SSL listener
// (and over PLAINTEXT, with sendfile, to compare): fetches of a partition
// of 16 KiB batches of 100-byte records, wrapping to the start at the high
// watermark, with a limit of 1 MiB (a consumer behind) or 16 KiB (one
// batch per fetch, as a consumer that keeps up gets). Under TLS the file
// regions go through wire.Response's copy path and are encrypted by the
// broker and decrypted by the client, both in this process: cpu-ns/record
// counts both sides, broker-cpu-ns/record all but the client's locked
// thread (as in BenchmarkSCRAMAuthentication).
func BenchmarkFetchTLS(b *testing.B) {
	ca := securitytest.NewCA(b)
	dir := b.TempDir()
	keystore := ca.Issue(b, "broker", "127.0.0.1", "localhost").KeystorePEM(b, dir, "broker")
	brk, p := startSecureBenchBroker(b,
		"listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"ssl.keystore.type=PEM", "ssl.keystore.location="+keystore)
	hw := benchFill(b, p, 64)
	for _, listener := range []string{"PLAINTEXT", "SSL"} {
		for _, limit := range []int32{1 << 20, 16 << 10} {
			b.Run(fmt.Sprintf("%s/%dKiB", listener, limit>>10), func(b *testing.B) {
				nc, err := net.Dial("tcp", brk.ListenerAddr(listener))
				if err != nil {
					b.Fatalf("dial: %v", err)
				}
				defer nc.Close()
				if listener == "SSL" {
					tc := tls.Client(nc, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
					if err := tc.Handshake(); err != nil {
						b.Fatalf("TLS handshake: %v", err)
					}
					nc = tc
				}
				rc := &benchClient{b: b, nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
				resp := kmsg.NewPtrFetchResponse()
				resp.Version = benchFetchVersion
				var records, offset int64
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0, thread0 := benchCPUTime(b), threadCPUTime(b)
				for b.Loop() {
					rc.send(benchFetchFrameMax(offset, limit))
					rc.recv(resp, true)
					if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
						b.Fatalf("fetch response has %d topics", len(resp.Topics))
					}
					fp := resp.Topics[0].Partitions[0]
					if fp.ErrorCode != 0 {
						b.Fatalf("fetch at %d: error code %d", offset, fp.ErrorCode)
					}
					n, next := benchCountBatches(b, fp.RecordBatches)
					b.SetBytes(int64(len(fp.RecordBatches)))
					records += n
					if offset = next; offset >= hw {
						offset = 0
					}
				}
				b.StopTimer()
				thread := threadCPUTime(b) - thread0
				benchReport(b, records, cpu0)
				b.ReportMetric(float64((benchCPUTime(b)-cpu0-thread).Nanoseconds())/float64(records), "broker-cpu-ns/record")
			})
		}
	}
}
