package broker

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/security/securitytest"
)

// plainJAAS is the listener JAAS config with PLAIN users alice and admin.
const plainJAAS = `listener.name.sasl_plaintext.plain.sasl.jaas.config=` +
	`org.apache.kafka.common.security.plain.PlainLoginModule required ` +
	`user_alice="alice-secret" user_admin="admin-secret";`

// newSASLBroker starts a broker with a PLAINTEXT listener (its test
// clients) and a SASL_PLAINTEXT listener with PLAIN and both SCRAM
// mechanisms, plus any extra overrides.
func newSASLBroker(t *testing.T, extra ...string) *testBroker {
	t.Helper()
	return newTestBroker(t, append([]string{
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		plainJAAS,
	}, extra...)...)
}

// saslClient connects to the broker's SASL_PLAINTEXT listener with mech.
func saslClient(t *testing.T, tb *testBroker, mech sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(tb.b.ListenerAddr("SASL_PLAINTEXT")), kgo.SASL(mech),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.RetryTimeout(5 * time.Second),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produceOne writes one record and returns the produce error.
func produceOne(ctx context.Context, cl *kgo.Client, topic string) error {
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
}

// connectErr is the error a client gets for a metadata request: the
// authentication error when its connection cannot authenticate (a
// producer would retry such a record until its deadline).
func connectErr(ctx context.Context, cl *kgo.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	return err
}

func TestSASLPlainAuthenticates(t *testing.T) {
	tb := newSASLBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "events", 1, nil)

	alice := saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())
	if err := produceOne(ctx, alice, "events"); err != nil {
		t.Fatalf("alice with the right password: %v", err)
	}

	wrong := saslClient(t, tb, plain.Auth{User: "alice", Pass: "nope"}.AsMechanism())
	err := connectErr(ctx, wrong)
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	unknown := saslClient(t, tb, plain.Auth{User: "mallory", Pass: "x"}.AsMechanism())
	if err := connectErr(ctx, unknown); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("unknown user: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	if tb.b.FailedAuthentications() < 2 {
		t.Errorf("failed authentications = %d, want at least 2", tb.b.FailedAuthentications())
	}
	// The broker keeps serving everyone else.
	if err := produceOne(ctx, alice, "events"); err != nil {
		t.Fatalf("alice after others failed: %v", err)
	}
}

func TestSCRAMCredentialsThroughAdminAPI(t *testing.T) {
	tb := newSASLBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "events", 1, nil)

	res, err := tb.adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-secret"},
		{User: "carol", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "carol-secret"},
	})
	if err != nil || res.Error() != nil {
		t.Fatalf("alter SCRAM users: %v %v", err, res.Error())
	}
	described, err := tb.adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatalf("describe SCRAM users: %v", err)
	}
	if c := described["carol"]; c.Err != nil || len(c.CredInfos) != 1 || c.CredInfos[0].Iterations != 8192 ||
		c.CredInfos[0].Mechanism != kadm.ScramSha512 {
		t.Fatalf("carol described as %+v", c)
	}

	bob := saslClient(t, tb, scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism())
	carol := saslClient(t, tb, scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha512Mechanism())
	for name, cl := range map[string]*kgo.Client{"bob": bob, "carol": carol} {
		if err := produceOne(ctx, cl, "events"); err != nil {
			t.Fatalf("%s over SCRAM: %v", name, err)
		}
	}
	// Wrong password, and the right password for the other mechanism.
	for name, mech := range map[string]sasl.Mechanism{
		"wrong password":  scram.Auth{User: "bob", Pass: "x"}.AsSha256Mechanism(),
		"wrong mechanism": scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism(),
		"unknown user":    scram.Auth{User: "zed", Pass: "x"}.AsSha256Mechanism(),
	} {
		cl := saslClient(t, tb, mech)
		if err := connectErr(ctx, cl); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s: %v, want SASL_AUTHENTICATION_FAILED", name, err)
		}
	}

	// Deleting a credential: new connections fail; deleting it twice is
	// RESOURCE_NOT_FOUND; describing an unknown user too.
	if res, err := tb.adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha256}}, nil); err != nil || res.Error() != nil {
		t.Fatalf("delete bob: %v %v", err, res.Error())
	}
	again, _ := tb.adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha256}}, nil)
	if !errors.Is(again["bob"].Err, kerr.ResourceNotFound) {
		t.Errorf("deleting bob twice: %v, want RESOURCE_NOT_FOUND", again["bob"].Err)
	}
	fresh := saslClient(t, tb, scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism())
	if err := connectErr(ctx, fresh); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("bob after deletion: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	// What kadm refuses client-side, the broker refuses too (Kafka's
	// ScramControlManager rules), in one request: too few iterations, a
	// user changed twice, an unknown mechanism.
	raw := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := func(user string, mech int8, iters int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, mech, iters, []byte("salt"), make([]byte, 32)
		return u
	}
	raw.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
		up("dan", 1, 1024), up("eve", 1, 4096), up("eve", 2, 4096), up("fay", 3, 4096),
	}
	want := map[string]int16{"dan": kerr.UnacceptableCredential.Code, "eve": kerr.DuplicateResource.Code,
		"fay": kerr.UnsupportedSaslMechanism.Code}
	for _, res := range tb.request(ctx, raw).(*kmsg.AlterUserSCRAMCredentialsResponse).Results {
		if res.ErrorCode != want[res.User] {
			t.Errorf("AlterUserScramCredentials %s: error %d, want %d", res.User, res.ErrorCode, want[res.User])
		}
	}

	// Credentials live in the metadata: they survive a restart.
	tb.restart()
	carol = saslClient(t, tb, scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha512Mechanism())
	if err := produceOne(ctx, carol, "events"); err != nil {
		t.Fatalf("carol after restart: %v", err)
	}
}

func TestACLsAuthorizeRequests(t *testing.T) {
	tb := newSASLBroker(t,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS;User:admin")
	ctx := testCtx(t)
	tb.createTopic(ctx, "orders", 1, nil)
	tb.createTopic(ctx, "secret", 1, nil)

	alice := saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DisableIdempotentWrite())
	if err := produceOne(ctx, alice, "orders"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice without ACLs: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	aliceAdm := kadm.NewClient(alice)
	if _, err := aliceAdm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpWrite)); err != nil {
		t.Fatalf("create ACLs request: %v", err)
	}
	if n := countACLs(t, tb.adm); n != 0 {
		t.Fatalf("alice, not a super user, created %d ACLs", n)
	}

	results, err := tb.adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpWrite))
	if err != nil || results[0].Err != nil {
		t.Fatalf("admin creates ACL: %v %+v", err, results)
	}
	waitFor(t, "alice may write to orders", func() bool { return produceOne(ctx, alice, "orders") == nil })

	// Write implies Describe: alice sees orders, not secret.
	md, err := aliceAdm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := md.Topics["orders"]; !ok {
		t.Errorf("alice's metadata lacks orders: %v", md.Topics.Names())
	}
	if _, ok := md.Topics["secret"]; ok {
		t.Errorf("alice's metadata shows secret, which she may not describe")
	}
	if err := produceOne(ctx, alice, "secret"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("alice to secret: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	// DENY wins over ALLOW, for a prefix too.
	if _, err := tb.adm.CreateACLs(ctx, kadm.NewACLs().Deny("User:alice").Topics("ord").
		ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the prefixed DENY takes effect", func() bool {
		return errors.Is(produceOne(ctx, alice, "orders"), kerr.TopicAuthorizationFailed)
	})

	if n := countACLs(t, tb.adm); n != 2 {
		t.Fatalf("describe ACLs: %d bindings, want the ALLOW and the DENY", n)
	}
	deleted, err := tb.adm.DeleteACLs(ctx, kadm.NewACLs().Deny("User:alice").DenyHosts().Topics("ord").
		ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite))
	if err != nil || len(deleted) != 1 || len(deleted[0].Deleted) != 1 {
		t.Fatalf("delete the DENY: %v %+v", err, deleted)
	}
	waitFor(t, "alice may write again", func() bool { return produceOne(ctx, alice, "orders") == nil })

	// DescribeConfigs does not tell alice whether a topic she may not see
	// exists.
	for _, name := range []string{"secret", "no-such-topic"} {
		dc := kmsg.NewPtrDescribeConfigsRequest()
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, name
		dc.Resources = append(dc.Resources, res)
		resp, err := dc.RequestWith(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.Resources[0].ErrorCode; code != kerr.TopicAuthorizationFailed.Code {
			t.Errorf("alice describes the configs of %s: error %d, want TOPIC_AUTHORIZATION_FAILED", name, code)
		}
	}

	// Consumer groups need READ on the group and on the topic.
	consumer := saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(),
		kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("g1"))
	fetches := consumer.PollFetches(ctx)
	if err := fetches.Err(); !errors.Is(err, kerr.GroupAuthorizationFailed) && !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("consumer without READ: %v, want an authorization error", err)
	}

	// ACLs live in the metadata: they survive a restart.
	tb.restart()
	alice = saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(), kgo.DisableIdempotentWrite())
	if err := produceOne(ctx, alice, "orders"); err != nil {
		t.Fatalf("alice after restart: %v", err)
	}
}

// countACLs is how many bindings DescribeAcls lists with a match-all filter.
func countACLs(t *testing.T, adm *kadm.Client) int {
	t.Helper()
	res, err := adm.DescribeACLs(context.Background(), kadm.NewACLs().AnyResource().
		Allow().AllowHosts().Deny().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatalf("describe ACLs: %v", err)
	}
	n := 0
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("describe ACLs: %v", r.Err)
		}
		n += len(r.Described)
	}
	return n
}

func TestACLRequestsWithoutAuthorizer(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp := tb.request(ctx, req).(*kmsg.DescribeACLsResponse)
	if resp.ErrorCode != kerr.SecurityDisabled.Code {
		t.Errorf("DescribeAcls without an authorizer: error %d, want SECURITY_DISABLED", resp.ErrorCode)
	}
}

// saslHandshake sends a SaslHandshake at version v and returns the answer.
func (c *rawConn) saslHandshake(v int16, mech string) *kmsg.SASLHandshakeResponse {
	c.t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = v, mech
	return c.roundTrip(req).(*kmsg.SASLHandshakeResponse)
}

func TestSASLBadInput(t *testing.T) {
	tb := newSASLBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "events", 1, nil)
	addr := tb.b.ListenerAddr("SASL_PLAINTEXT")

	t.Run("request before authentication", func(t *testing.T) {
		c := dialRaw(t, addr)
		stillServes(t, c) // ApiVersions is allowed
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 4
		c.send(req)
		c.expectClosed("Metadata before SASL")
	})
	t.Run("SaslAuthenticate before SaslHandshake", func(t *testing.T) {
		c := dialRaw(t, addr)
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 1, []byte("\x00alice\x00alice-secret")
		c.send(req)
		c.expectClosed("SaslAuthenticate before SaslHandshake")
	})
	t.Run("request during the exchange gets its error answer, then a close", func(t *testing.T) {
		// Kafka's SaslServerAuthenticator: the request's getErrorResponse
		// with ILLEGAL_SASL_STATE, then the connection closes.
		c := dialRaw(t, addr)
		if resp := c.saslHandshake(1, "PLAIN"); resp.ErrorCode != 0 {
			t.Fatalf("handshake: %d", resp.ErrorCode)
		}
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("events")
		req.Topics = append(req.Topics, rt)
		resp := c.roundTrip(req).(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.IllegalSaslState.Code || len(resp.Brokers) != 0 ||
			resp.Topics[0].Topic == nil || *resp.Topics[0].Topic != "events" {
			t.Fatalf("Metadata during SASL authentication: %+v, want events with ILLEGAL_SASL_STATE", resp)
		}
		c.expectClosed("after the error answer")
	})
	t.Run("mechanism not enabled", func(t *testing.T) {
		c := dialRaw(t, addr)
		resp := c.saslHandshake(1, "GSSAPI")
		if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || len(resp.SupportedMechanisms) != 3 {
			t.Fatalf("GSSAPI handshake: %+v, want UNSUPPORTED_SASL_MECHANISM with the enabled list", resp)
		}
		c.expectClosed("after an unsupported mechanism")
	})
	t.Run("wrong PLAIN password gets a message and a close", func(t *testing.T) {
		c := dialRaw(t, addr)
		if resp := c.saslHandshake(1, "PLAIN"); resp.ErrorCode != 0 {
			t.Fatalf("handshake: %d", resp.ErrorCode)
		}
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.Version, req.SASLAuthBytes = 2, []byte("\x00alice\x00wrong")
		resp := c.roundTrip(req).(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || *resp.ErrorMessage == "" {
			t.Fatalf("wrong password: %+v, want SASL_AUTHENTICATION_FAILED with a message", resp)
		}
		c.expectClosed("after a failed authentication")
	})
	t.Run("huge frame from an unauthenticated peer", func(t *testing.T) {
		c := dialRaw(t, addr)
		noBigAllocation(t, func() {
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], 100<<20)
			c.write(hdr[:])
			c.write(make([]byte, 1024))
			c.expectClosed("100 MB frame before authentication")
		})
	})
	t.Run("v0 handshake then unframed PLAIN token", func(t *testing.T) {
		c := dialRaw(t, addr)
		if resp := c.saslHandshake(0, "PLAIN"); resp.ErrorCode != 0 {
			t.Fatalf("v0 handshake: %d", resp.ErrorCode)
		}
		tok := []byte("\x00alice\x00alice-secret")
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(tok)))
		c.write(append(frame, tok...))
		var sz [4]byte
		_ = c.nc.SetReadDeadline(time.Now().Add(rawDeadline))
		if _, err := c.nc.Read(sz[:]); err != nil || binary.BigEndian.Uint32(sz[:]) != 0 {
			t.Fatalf("v0 PLAIN answer: % x, %v; want an empty token", sz, err)
		}
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 4
		if resp := c.roundTrip(req).(*kmsg.MetadataResponse); len(resp.Brokers) != 1 {
			t.Fatalf("metadata after v0 authentication: %+v", resp)
		}
	})
	t.Run("a second ApiVersions before the handshake", func(t *testing.T) {
		c := dialRaw(t, addr)
		stillServes(t, c)
		req := kmsg.NewPtrApiVersionsRequest()
		c.send(req)
		c.expectClosed("a second ApiVersions before SASL")
	})
	t.Run("handshake again on an authenticated connection without re-authentication", func(t *testing.T) {
		c := dialRaw(t, addr)
		if resp := c.saslHandshake(1, "PLAIN"); resp.ErrorCode != 0 {
			t.Fatalf("handshake: %d", resp.ErrorCode)
		}
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.Version, auth.SASLAuthBytes = 1, []byte("\x00alice\x00alice-secret")
		if resp := c.roundTrip(auth).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != 0 {
			t.Fatalf("authenticate: %d", resp.ErrorCode)
		}
		if resp := c.saslHandshake(1, "PLAIN"); resp.ErrorCode != kerr.IllegalSaslState.Code {
			t.Fatalf("second handshake: %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
		}
		stillServes(t, c) // and the connection stays open, as in Kafka
	})
	// Everyone else is still served.
	tb.produce(ctx, "events", 0, 1)
}

func TestSASLReauthentication(t *testing.T) {
	tb := newSASLBroker(t, "listener.name.sasl_plaintext.connections.max.reauth.ms=300")
	ctx := testCtx(t)
	tb.createTopic(ctx, "events", 1, nil)
	addr := tb.b.ListenerAddr("SASL_PLAINTEXT")

	c := dialRaw(t, addr)
	if resp := c.saslHandshake(1, "PLAIN"); resp.ErrorCode != 0 {
		t.Fatalf("handshake: %d", resp.ErrorCode)
	}
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = 1, []byte("\x00alice\x00alice-secret")
	resp := c.roundTrip(req).(*kmsg.SASLAuthenticateResponse)
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis <= 0 || resp.SessionLifetimeMillis > 300 {
		t.Fatalf("authenticate: error %d, session lifetime %d ms, want 0 < lifetime <= 300", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
	// A re-authentication that never finishes does not keep the session:
	// only SaslAuthenticate is admitted once it started (another request
	// gets its error answer, then the connection closes).
	r2 := dialRaw(t, addr)
	if resp := r2.saslHandshake(1, "PLAIN"); resp.ErrorCode != 0 {
		t.Fatalf("handshake: %d", resp.ErrorCode)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("\x00alice\x00alice-secret")
	if resp := r2.roundTrip(auth).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != 0 {
		t.Fatalf("authenticate: %d", resp.ErrorCode)
	}
	if resp := r2.saslHandshake(1, "PLAIN"); resp.ErrorCode != 0 {
		t.Fatalf("re-authentication handshake: %d", resp.ErrorCode)
	}
	md0 := kmsg.NewPtrMetadataRequest()
	md0.Version = 4
	if resp := r2.roundTrip(md0).(*kmsg.MetadataResponse); len(resp.Brokers) != 0 || len(resp.Topics) != 0 {
		t.Fatalf("Metadata during a re-authentication: %+v, want the empty error answer", resp)
	}
	r2.expectClosed("Metadata during a re-authentication")

	// Waiting for the session to end is the behaviour under test, not a
	// timing assertion.
	time.Sleep(time.Duration(resp.SessionLifetimeMillis)*time.Millisecond + 100*time.Millisecond)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	c.send(md)
	c.expectClosed("a request after the session expired")

	// franz-go re-authenticates before its sessions end and keeps working.
	alice := saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())
	for i := 0; i < 4; i++ {
		if err := produceOne(ctx, alice, "events"); err != nil {
			t.Fatalf("produce %d with re-authentication: %v", i, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// newTLSBroker starts a broker with a PLAINTEXT listener and an SSL
// listener whose certificate the returned CA signed, with extra overrides.
func newTLSBroker(t *testing.T, extra ...string) (*testBroker, *securitytest.CA) {
	t.Helper()
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	keystore := ca.Issue(t, "broker", "127.0.0.1", "localhost").KeystorePEM(t, dir, "broker")
	tb := newTestBroker(t, append([]string{
		"listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"ssl.keystore.type=PEM",
		"ssl.keystore.location=" + keystore,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + ca.WriteCertPEM(t, dir),
	}, extra...)...)
	return tb, ca
}

func tlsClient(t *testing.T, tb *testBroker, cfg *tls.Config, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(tb.b.ListenerAddr("SSL")), kgo.DialTLSConfig(cfg),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RetryTimeout(5 * time.Second),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestTLSListener(t *testing.T) {
	tb, ca := newTLSBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "events", 1, nil)

	cl := tlsClient(t, tb, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
	if err := produceOne(ctx, cl, "events"); err != nil {
		t.Fatalf("produce over TLS: %v", err)
	}
	fetched := 0
	fc := tlsClient(t, tb, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"},
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"events": {0: kgo.NewOffset().AtStart()}}))
	for fetched == 0 {
		fs := fc.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("fetch over TLS: %v", err)
		}
		fetched += fs.NumRecords()
	}

	// A client that does not trust the broker's CA, and a plaintext client
	// on the TLS port, both fail; the broker keeps serving.
	untrusting := tlsClient(t, tb, &tls.Config{ServerName: "127.0.0.1"})
	if err := connectErr(ctx, untrusting); err == nil {
		t.Error("a client without the CA produced over TLS")
	}
	plaintext, err := kgo.NewClient(kgo.SeedBrokers(tb.b.ListenerAddr("SSL")), kgo.RetryTimeout(2*time.Second),
		kgo.DialTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer plaintext.Close()
	if err := connectErr(ctx, plaintext); err == nil {
		t.Error("a plaintext client produced on the SSL listener")
	}
	if err := produceOne(ctx, cl, "events"); err != nil {
		t.Fatalf("produce over TLS after the failures: %v", err)
	}
}

func TestMutualTLSPrincipal(t *testing.T) {
	tb, ca := newTLSBroker(t,
		"ssl.client.auth=required",
		"ssl.principal.mapping.rules=RULE:^CN=([a-z]+).*$/$1/,DEFAULT",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS")
	ctx := testCtx(t)
	tb.createTopic(ctx, "events", 1, nil)
	if _, err := tb.adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("events").Operations(kadm.OpWrite)); err != nil {
		t.Fatal(err)
	}
	aliceCert := ca.Issue(t, "alice").TLSCertificate()
	bobCert := ca.Issue(t, "bob").TLSCertificate()
	base := tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}

	withCert := func(c tls.Certificate) *tls.Config {
		cfg := base.Clone()
		cfg.Certificates = []tls.Certificate{c}
		return cfg
	}
	alice := tlsClient(t, tb, withCert(aliceCert), kgo.DisableIdempotentWrite())
	waitFor(t, "alice (CN=alice) may write", func() bool { return produceOne(ctx, alice, "events") == nil })
	bob := tlsClient(t, tb, withCert(bobCert), kgo.DisableIdempotentWrite())
	if err := produceOne(ctx, bob, "events"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("bob: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	noCert := tlsClient(t, tb, base.Clone())
	if err := connectErr(ctx, noCert); err == nil {
		t.Error("a client without a certificate produced with ssl.client.auth=required")
	}
}

func TestProduceQuotaThrottles(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "events", 1, nil)
	name := "slow"
	res, err := tb.adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: []kadm.ClientQuotaEntityComponent{{Type: "client-id", Name: &name}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("alter client quotas: %v %+v", err, res)
	}
	described, err := tb.adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchName: &name, MatchType: 0}})
	if err != nil || len(described) != 1 || described[0].Values[0].Value != 1024 {
		t.Fatalf("describe client quotas: %v %+v", err, described)
	}

	// A client over its quota gets throttle_time_ms; another is not
	// throttled.
	throttled := func(clientID string) int32 {
		c := dialRaw(t, tb.b.Addr())
		var worst int32
		for i := 0; i < 4; i++ {
			batch := record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli()},
				[]record.Record{{Value: make([]byte, 8<<10)}})
			req := produceRequest(1, "events", 0, batch)
			c.corr++
			corr := c.corr
			c.write(kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, corr))
			resp := req.ResponseKind().(*kmsg.ProduceResponse)
			resp.Version = req.Version
			c.readResponse(corr, resp)
			worst = max(worst, resp.ThrottleMillis)
		}
		return worst
	}
	if ms := throttled("slow"); ms <= 0 {
		t.Errorf("client %q over a 1 KiB/s quota: throttle %d ms, want > 0", name, ms)
	}
	if ms := throttled("fast"); ms != 0 {
		t.Errorf("client without a quota: throttle %d ms, want 0", ms)
	}
}

// TestClusterOverSASLSSL runs the replication and failover test on a
// cluster whose every listener is SASL_SSL: clients, replica fetchers
// (inter.broker.listener.name) and the Raft quorum (the controller
// listener) all use TLS and authenticate with PLAIN, with the authorizer
// on and admin as the only super user.
func TestClusterOverSASLSSL(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	keystore := ca.Issue(t, "broker", "127.0.0.1", "localhost").KeystorePEM(t, dir, "broker")
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
		`username="admin" password="admin-secret" user_admin="admin-secret";`
	tc := newTestCluster(t, 3,
		"listeners=SASL_SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:{cport}",
		"advertised.listeners=SASL_SSL://127.0.0.1:0",
		"listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL",
		"inter.broker.listener.name=SASL_SSL",
		"sasl.enabled.mechanisms=PLAIN",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"sasl.mechanism.controller.protocol=PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config="+jaas,
		"listener.name.controller.plain.sasl.jaas.config="+jaas,
		"ssl.keystore.type=PEM", "ssl.keystore.location="+keystore,
		"ssl.truststore.type=PEM", "ssl.truststore.location="+ca.WriteCertPEM(t, dir),
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin",
	)
	tc.clientOpts = []kgo.Opt{
		kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}),
		kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()),
	}
	testReplicatesAndFailsOver(t, tc)

	// The controller listener refuses a peer with a wrong password, and
	// one that does not speak TLS.
	addr := fmt.Sprintf("127.0.0.1:%d", tc.cports[0])
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("TLS to the controller listener: %v", err)
	}
	defer c.Close()
	err = dialControllerAuth(plain.Auth{User: "admin", Pass: "wrong"}.AsMechanism(), c)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("controller listener with a wrong password: %v, want a refusal", err)
	}
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := dialControllerAuth(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism(), raw); err == nil {
		t.Error("a plaintext peer authenticated on the SASL_SSL controller listener")
	}
}

// TestTLSCertificateRotation rotates the broker certificate as Kafka
// operators do: write the new keystore, then set
// listener.name.<l>.ssl.keystore.location (here to the same path) with
// IncrementalAlterConfigs. New connections get the new certificate,
// without a restart.
func TestTLSCertificateRotation(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	first := ca.Issue(t, "broker", "127.0.0.1", "localhost")
	keystore := first.KeystorePEM(t, dir, "broker")
	tb := newTestBroker(t,
		"listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"ssl.keystore.type=PEM", "ssl.keystore.location="+keystore,
		"ssl.truststore.type=PEM", "ssl.truststore.location="+ca.WriteCertPEM(t, dir))
	ctx := testCtx(t)
	served := func() string {
		c, err := tls.Dial("tcp", tb.b.ListenerAddr("SSL"), &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	if got := served(); got != first.Leaf.SerialNumber.String() {
		t.Fatalf("served certificate %s, want the first one", got)
	}
	second := ca.Issue(t, "broker", "127.0.0.1", "localhost")
	if p := second.KeystorePEM(t, dir, "broker"); p != keystore {
		t.Fatalf("keystore written to %s, want %s", p, keystore)
	}
	res, err := tb.adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{
		Name: "listener.name.ssl.ssl.keystore.location", Value: kadm.StringPtr(keystore),
	}}, tb.b.nodeID)
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		t.Fatalf("alter listener keystore: %v", err)
	}
	waitFor(t, "new connections get the new certificate", func() bool {
		return served() == second.Leaf.SerialNumber.String()
	})
}

type plainFunc func(user, password string) bool

func (f plainFunc) Authenticate(user, password string) bool { return f(user, password) }

// A Go callback replaces the JAAS users for PLAIN (WithPlainAuthenticator).
func TestPlainAuthenticatorOption(t *testing.T) {
	cfg, err := config.Load("", []string{
		"listeners=SASL_PLAINTEXT://127.0.0.1:0", "log.dirs=" + t.TempDir(),
		"listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT",
		"inter.broker.listener.name=SASL_PLAINTEXT", "sasl.enabled.mechanisms=PLAIN",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		WithPlainAuthenticator(plainFunc(func(u, p string) bool { return u == "svc" && p == "from-vault" })))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := testCtx(t)
	for _, c := range []struct {
		pass string
		ok   bool
	}{{"from-vault", true}, {"guess", false}} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.SASL(plain.Auth{User: "svc", Pass: c.pass}.AsMechanism()))
		if err != nil {
			t.Fatal(err)
		}
		err = connectErr(ctx, cl)
		cl.Close()
		if (err == nil) != c.ok {
			t.Errorf("password %q: %v, want success %v", c.pass, err, c.ok)
		}
	}
}

// TestSASLGSSAPIAmongOthers: a listener whose sasl.enabled.mechanisms
// lists GSSAPI next to mechanisms Silkworm has (aiokafka's image lists
// PLAIN,GSSAPI,SCRAM-SHA-256,SCRAM-SHA-512) starts and serves those; a
// GSSAPI handshake gets UNSUPPORTED_SASL_MECHANISM with the served list.
// GSSAPI alone, Kafka's default, is refused at start-up.
func TestSASLGSSAPIAmongOthers(t *testing.T) {
	tb := newSASLBroker(t, "sasl.enabled.mechanisms=PLAIN,GSSAPI")
	c := dialRaw(t, tb.b.ListenerAddr("SASL_PLAINTEXT"))
	resp := c.saslHandshake(1, "GSSAPI")
	if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Equal(resp.SupportedMechanisms, []string{"PLAIN"}) {
		t.Fatalf("GSSAPI handshake: %+v, want UNSUPPORTED_SASL_MECHANISM listing PLAIN", resp)
	}
	tb.createTopic(testCtx(t), "events", 1, nil)
	cl := saslClient(t, tb, plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())
	if err := produceOne(testCtx(t), cl, "events"); err != nil {
		t.Fatalf("PLAIN next to GSSAPI: %v", err)
	}

	cfg, err := config.Load("", []string{"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "log.dirs=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		err = b.Start()
		b.Close()
	}
	if err == nil {
		t.Fatal("started a SASL listener whose only mechanism is GSSAPI")
	} else if !strings.Contains(err.Error(), "GSSAPI") {
		t.Fatalf("error does not name GSSAPI: %v", err)
	}
}
