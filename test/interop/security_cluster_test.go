package interop

// TestSecurityClusterKill: the kill -9 test of chaos_test.go on a cluster
// where every listener is SASL_SSL. Three silkworm processes start from
// the documented config/secure/cluster/node{1,2,3}.properties (ports, data
// dirs, voters and certificate paths overridden, with the chaos test's
// short session timeout):
//
//   - clients and replica fetchers use the SASL_SSL listener
//     (inter.broker.listener.name=SASL_SSL); the brokers log in to each
//     other with SCRAM-SHA-512 as User:broker, a super user whose
//     credential the admin creates with `silkworm configs` before any
//     partition has a follower;
//   - the Raft quorum runs over the CONTROLLER listener, SASL_SSL with
//     PLAIN (the documented admin login: a SCRAM credential lives in the
//     metadata the quorum has to elect a leader for first);
//   - the producers and the final reader are alice, SCRAM-SHA-512, allowed
//     only Write and Read on the topic (`silkworm acls`).
//
// Two idempotent acks=all producers write while the test kills the leader
// of each partition in turn with SIGKILL, waits for an acknowledged
// produce on the new leader, restarts the node and waits until it is back
// in every ISR (which needs its fetchers to authenticate with SCRAM).
// Afterwards the replicas' segment files must be identical below the high
// watermark and every acknowledged record must be read back once, at its
// offset, in order.

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/security/securitytest"
	"github.com/silkworm/silkworm/internal/testcluster"
)

const (
	// clusterAdmin is the PLAIN super user of config/secure/cluster.
	clusterAdmin, clusterAdminPassword = "admin", "admin-secret"
	// clusterBroker is the SCRAM user the brokers log in to each other as.
	clusterBroker, clusterBrokerPassword = "broker", "broker-secret"
	// clusterUser is the producers' and the reader's SCRAM user.
	clusterUser, clusterUserPassword = "alice", "alice-secret"
	// clusterFaults is how many leaders are killed: one per partition.
	clusterFaults = chaosPartitions
)

// secureCluster is three silkworm processes on SASL_SSL; its methods are
// called from the test goroutine only.
type secureCluster struct {
	*testcluster.Cluster             // a node's Addr is its SASL_SSL listener
	tls                  *tls.Config // trusts the run's CA
	bin                  string
	adminCf              string // --command-config file of the admin
}

// startSecureCluster starts the three nodes and returns once each answers
// Metadata to the admin over SASL_SSL.
func startSecureCluster(t *testing.T) *secureCluster {
	t.Helper()
	if os.Getenv("SILKWORM_TEST_BOOTSTRAP") != "" || os.Getenv("SILKWORM_TEST_BROKER") == "kfake" {
		t.Skip("the security tests configure their own silkworm processes")
	}
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	ca := securitytest.NewCA(t)
	caFile := ca.WriteCertPEM(t, tmp)
	keystore := ca.Issue(t, "broker", "127.0.0.1", "localhost").KeystorePEM(t, tmp, "broker")
	c := &secureCluster{tls: &tls.Config{RootCAs: ca.Pool()}, bin: silkwormBinary(t)}
	c.adminCf = filepath.Join(tmp, "admin.properties")
	writeFile(t, c.adminCf, strings.Join([]string{
		"security.protocol=SASL_SSL",
		"sasl.mechanism=PLAIN",
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="` + clusterAdmin + `" password="` + clusterAdminPassword + `";`,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + caFile,
	}, "\n")+"\n")

	c.Cluster = testcluster.Start(t, testcluster.Config{
		Bin:   c.bin,
		Nodes: 3,
		Properties: func(id int) string {
			return filepath.Join(root, "config", "secure", "cluster", fmt.Sprintf("node%d.properties", id))
		},
		Listener: "SASL_SSL",
		Overrides: append([]string{
			"ssl.keystore.location=" + keystore,
			"ssl.truststore.location=" + caFile,
			"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
			"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required " +
				`username="` + clusterBroker + `" password="` + clusterBrokerPassword + `";`,
			"super.users=User:" + clusterAdmin + ";User:" + clusterBroker,
		}, chaosServerOverrides...),
		StartTimeout: brokerStartTimeout,
		// Metadata to the admin over SASL_SSL, without the plain TCP
		// connect of testcluster.Probe, which the node would log as a
		// failed TLS handshake.
		Ready: func(n *testcluster.Node) error {
			return testcluster.ProbeMetadata(n.Addr, 1, kgo.DialTLSConfig(c.tls.Clone()),
				kgo.SASL(plainMechanism(clusterAdmin, clusterAdminPassword)))
		},
	})
	return c
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// login is the kgo options of a SASL_SSL client of user: the admin logs in
// with PLAIN, alice with SCRAM-SHA-512.
func (c *secureCluster) login(user string, opts ...kgo.Opt) []kgo.Opt {
	var m kgo.Opt
	switch user {
	case clusterAdmin:
		m = kgo.SASL(plainMechanism(clusterAdmin, clusterAdminPassword))
	default:
		m = kgo.SASL(scram512(clusterUser, clusterUserPassword))
	}
	return append([]kgo.Opt{kgo.SeedBrokers(c.Seeds()...), kgo.DialTLSConfig(c.tls.Clone()), m,
		kgo.MetadataMinAge(100 * time.Millisecond)}, opts...)
}

// client is a franz-go client of user (clusterAdmin or clusterUser),
// closed when the test ends.
func (c *secureCluster) client(t *testing.T, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(c.login(user, opts...)...)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// tool runs a silkworm admin tool as the admin, against node 1.
func (c *secureCluster) tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	args = append([]string{name, "--bootstrap-server", c.Nodes[0].Addr, "--command-config", c.adminCf}, args...)
	out, err := exec.Command(c.bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("silkworm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestSecurityClusterKill(t *testing.T) {
	c := startSecureCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// The brokers' SCRAM login first: followers need it to fetch.
	for _, u := range [][2]string{{clusterBroker, clusterBrokerPassword}, {clusterUser, clusterUserPassword}} {
		out := c.tool(t, "configs", "--alter", "--entity-type", "users", "--entity-name", u[0], "--add-config", "SCRAM-SHA-512=[password="+u[1]+"]")
		if want := "Completed updating config for user " + u[0] + "."; !strings.Contains(out, want) {
			t.Fatalf("silkworm configs: %q, want %q", out, want)
		}
	}
	out := c.tool(t, "acls", "--add", "--allow-principal", "User:"+clusterUser, "--operation", "Write", "--operation", "Read", "--topic", chaosTopic)
	if want := "(principal=User:" + clusterUser + ", host=*, operation=WRITE, permissionType=ALLOW)"; !strings.Contains(out, want) {
		t.Fatalf("silkworm acls: %q, want %q", out, want)
	}

	adm := kadm.NewClient(c.client(t, clusterAdmin))
	res, err := adm.CreateTopic(ctx, chaosPartitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, chaosTopic)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if err := waitFullISR(ctx, adm, chaosTopic, chaosPartitions, 60*time.Second); err != nil {
		t.Fatalf("topic never fully replicated: %v", err)
	}
	o := chaosOptions{acks: kgo.AllISRAcks(), idempotent: true, strict: true}
	w := &chaosWorkload{acked: map[string]chaosAck{}, failures: map[string]int{}}
	c.checkFollowersCopy(t, ctx, w)
	stop := make(chan struct{})
	stopProducers := sync.OnceFunc(func() { close(stop) })
	defer stopProducers() // on a fatal error mid-way
	var wg sync.WaitGroup
	for i := range chaosProducers {
		cl := c.client(t, clusterUser, o.producerOpts()...)
		wg.Go(func() { w.produce(cl, i, stop) })
	}
	probe := c.client(t, clusterUser, o.producerOpts()...)
	probeSeq := 0

	for fault := range clusterFaults {
		p := int32(fault % chaosPartitions)
		pd, err := partitionDetail(ctx, adm, chaosTopic, p)
		if err != nil || pd.Leader < 0 {
			t.Fatalf("leader of %s-%d before fault %d: %v (leader %d)", chaosTopic, p, fault+1, err, pd.Leader)
		}
		victim := c.Node(t, pd.Leader)
		victim.Kill(t)
		killed := time.Now()

		// Retry until a produce to the partition is acknowledged: the
		// new leader is elected once the controller fences the victim.
		pctx, pcancel := context.WithTimeout(ctx, 60*time.Second)
		var pr *kgo.Record
		for {
			value := chaosValue(chaosProducers, probeSeq)
			probeSeq++
			pr, err = probe.ProduceSync(pctx, &kgo.Record{Partition: p, Value: []byte(value)}).First()
			w.promise(pr, err)
			if err == nil || pctx.Err() != nil {
				break
			}
			time.Sleep(50 * time.Millisecond) // retry interval
		}
		pcancel()
		if err != nil {
			t.Fatalf("fault %d: no produce to %s-%d was acknowledged within 60s of killing its leader %d: %v", fault+1, chaosTopic, p, victim.ID, err)
		}
		failover := time.Since(killed)

		victim.Start(t)
		if err := waitFullISR(ctx, adm, chaosTopic, chaosPartitions, 60*time.Second); err != nil {
			t.Fatalf("fault %d: node %d did not rejoin every ISR (its fetchers log in with SCRAM-SHA-512): %v", fault+1, victim.ID, err)
		}
		t.Logf("fault %d: killed node %d (leader of %s-%d, epoch %d); produce acknowledged on the new leader after %v; back in every ISR after %v",
			fault+1, victim.ID, chaosTopic, p, pd.LeaderEpoch, failover.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	}

	stopProducers()
	wg.Wait()
	for _, f := range w.flushErrs {
		t.Errorf("flush: %v", f)
	}
	if t.Failed() {
		return
	}
	dirs := map[int32]string{}
	for _, n := range c.Nodes {
		dirs[n.ID] = n.Dir
	}
	hwm := convergedLogs(t, ctx, adm, dirs)

	r := checkChaos(w.acked, c.readBack(t, ctx, hwm))
	t.Logf("%d faults; %d records acknowledged; read back %d records up to the high watermarks %v: %d acknowledged records checked; lost %d, doubled %d, misplaced %d, out of order %d",
		clusterFaults, len(w.acked), r.read, hwm, r.checked, r.lost, r.doubled, r.misplaced, r.outOfOrder)
	for _, p := range r.problems {
		t.Error(p)
	}
}

// checkFollowersCopy writes a record to each partition (acks=1: the
// leader alone acknowledges it) and waits until every replica's segment
// files hold it. A new partition's ISR is all its replicas, so a full ISR
// proves nothing yet; a copied record proves that the followers fetch,
// over SASL_SSL, logged in with SCRAM-SHA-512 as User:broker. The records
// are part of the workload's acknowledged records, as a third producer's.
func (c *secureCluster) checkFollowersCopy(t *testing.T, ctx context.Context, w *chaosWorkload) {
	t.Helper()
	cl := c.client(t, clusterUser, kgo.DefaultProduceTopic(chaosTopic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	for p := range int32(chaosPartitions) {
		r, err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(chaosValue(chaosProducers+1, int(p)))}).First()
		if err != nil {
			t.Fatalf("produce to %s-%d with acks=1: %v", chaosTopic, p, err)
		}
		w.promise(r, nil)
		err = testcluster.Poll(60*time.Second, func() error {
			for _, n := range c.Nodes {
				bs, err := readReplicaBatches(n.Dir, chaosTopic, p)
				if err != nil {
					return err
				}
				if len(bs) == 0 || bs[len(bs)-1].lastOffset() < r.Offset {
					return fmt.Errorf("node %d holds %d batches of %s-%d, not offset %d", n.ID, len(bs), chaosTopic, p, r.Offset)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("the followers do not copy the leader (they fetch over SASL_SSL, logged in with SCRAM-SHA-512 as %s): %v", clusterBroker, err)
		}
	}
}

// readBack reads every partition of the chaos topic from the start up to
// its high watermark, as alice.
func (c *secureCluster) readBack(t *testing.T, ctx context.Context, hwm map[int32]int64) map[int32][]chaosRecord {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	for p := range hwm {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl := c.client(t, clusterUser, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{chaosTopic: offsets}), kgo.FetchMaxWait(200*time.Millisecond))
	logs := map[int32][]chaosRecord{}
	next := map[int32]int64{}
	done := func() bool {
		for p, h := range hwm {
			if next[p] < h {
				return false
			}
		}
		return true
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for !done() {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			t.Fatalf("read back: gave up at offsets %v of %v: %v", next, hwm, rctx.Err())
		}
		for _, e := range fs.Errors() {
			t.Logf("read back: fetch %s-%d: %v (retrying)", e.Topic, e.Partition, e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= hwm[r.Partition] {
				return
			}
			logs[r.Partition] = append(logs[r.Partition], chaosRecord{Offset: r.Offset, Value: string(r.Value)})
			next[r.Partition] = r.Offset + 1
		})
	}
	return logs
}
