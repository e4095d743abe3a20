package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/quota"
	"github.com/silkworm/silkworm/internal/security"
	"github.com/silkworm/silkworm/internal/security/acl"
)

// securityState is the security part of an image, for comparisons.
type securityState struct {
	Scram        map[string][]security.ScramCredential
	ACLs         []acl.Binding
	ClientQuotas []quota.Entry
}

func stateOf(im *Image) securityState {
	return securityState{Scram: im.Scram, ACLs: im.ACLs, ClientQuotas: im.ClientQuotas}
}

// diff returns nil if got is want, or an error showing both.
func (want securityState) diff(got securityState) error {
	if reflect.DeepEqual(got, want) {
		return nil
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	return fmt.Errorf("security state\n got %s\nwant %s", g, w)
}

func cred(mechanism string, seed byte, iterations int32) security.ScramCredential {
	return security.ScramCredential{
		Mechanism:  mechanism,
		Salt:       []byte{seed, 1},
		StoredKey:  []byte{seed, 2},
		ServerKey:  []byte{seed, 3},
		Iterations: iterations,
	}
}

func credPtr(mechanism string, seed byte, iterations int32) *security.ScramCredential {
	c := cred(mechanism, seed, iterations)
	return &c
}

func strp(s string) *string { return &s }

func user(name *string) quota.Component { return quota.Component{Type: quota.EntityUser, Name: name} }

func clientID(name *string) quota.Component {
	return quota.Component{Type: quota.EntityClientID, Name: name}
}

func binding(rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, name, principal string, op kmsg.ACLOperation) acl.Binding {
	return acl.Binding{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: "*",
		Operation: op, Permission: kmsg.ACLPermissionTypeAllow}
}

var (
	aclTopicRead   = binding(kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeLiteral, "t", "User:alice", kmsg.ACLOperationRead)
	aclGroupRead   = binding(kmsg.ACLResourceTypeGroup, kmsg.ACLResourcePatternTypeLiteral, "g", "User:alice", kmsg.ACLOperationRead)
	aclPrefixWrite = binding(kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypePrefixed, "logs-", "User:bob", kmsg.ACLOperationWrite)
	aclNeverMade   = binding(kmsg.ACLResourceTypeCluster, kmsg.ACLResourcePatternTypeLiteral, "kafka-cluster", "User:eve", kmsg.ACLOperationAlter)
)

// checkResults fails unless errs matches want one for one (errors.Is).
func checkResults(t *testing.T, what string, errs []error, err error, want ...error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(errs) != len(want) {
		t.Fatalf("%s: %d results %v, want %d", what, len(errs), errs, len(want))
	}
	for i := range want {
		if (want[i] == nil) != (errs[i] == nil) || !errors.Is(errs[i], want[i]) {
			t.Fatalf("%s: result %d is %v, want %v", what, i, errs[i], want[i])
		}
	}
}

// securityPhase1 creates some of each kind of security state through s
// and returns what the image must then hold.
func securityPhase1(t *testing.T, s Store) securityState {
	t.Helper()
	errs, err := s.AlterScramCredentials([]ScramChange{
		{User: "alice", Mechanism: security.ScramSHA512, Credential: credPtr(security.ScramSHA512, 1, 4096)},
		{User: "alice", Mechanism: security.ScramSHA256, Credential: credPtr(security.ScramSHA256, 2, 4096)},
		{User: "bob", Mechanism: security.ScramSHA256, Credential: credPtr(security.ScramSHA256, 3, 8192)},
		{User: "carol", Mechanism: security.ScramSHA256},
	})
	checkResults(t, "phase 1 SCRAM", errs, err, nil, nil, nil, ErrResourceNotFound)
	if err := s.CreateACLs([]acl.Binding{aclGroupRead, aclTopicRead, aclGroupRead}); err != nil {
		t.Fatalf("create ACLs: %v", err)
	}
	if err := s.AlterClientQuotas([]QuotaChange{
		{Entity: quota.Entity{user(strp("alice"))}, Set: map[string]float64{"producer_byte_rate": 1024, "consumer_byte_rate": 2048}},
		{Entity: quota.Entity{user(nil)}, Set: map[string]float64{"producer_byte_rate": 100}},
		{Entity: quota.Entity{clientID(strp("app")), user(strp("alice"))}, Set: map[string]float64{"request_percentage": 50}},
	}); err != nil {
		t.Fatalf("alter client quotas: %v", err)
	}
	return securityState{
		Scram: map[string][]security.ScramCredential{
			"alice": {cred(security.ScramSHA256, 2, 4096), cred(security.ScramSHA512, 1, 4096)},
			"bob":   {cred(security.ScramSHA256, 3, 8192)},
		},
		ACLs: []acl.Binding{aclTopicRead, aclGroupRead}, // TOPIC before GROUP
		ClientQuotas: []quota.Entry{ // client-id before user; default before a name
			{Entity: quota.Entity{clientID(strp("app")), user(strp("alice"))}, Values: map[string]float64{"request_percentage": 50}},
			{Entity: quota.Entity{user(nil)}, Values: map[string]float64{"producer_byte_rate": 100}},
			{Entity: quota.Entity{user(strp("alice"))}, Values: map[string]float64{"producer_byte_rate": 1024, "consumer_byte_rate": 2048}},
		},
	}
}

// securityPhase2 changes every kind of state phase 1 made (with fresh
// pointers and slices, so that entities match by value).
func securityPhase2(t *testing.T, s Store) securityState {
	t.Helper()
	errs, err := s.AlterScramCredentials([]ScramChange{
		{User: "bob", Mechanism: security.ScramSHA256},
		{User: "alice", Mechanism: security.ScramSHA256, Credential: credPtr(security.ScramSHA256, 4, 8192)},
		{User: "bob", Mechanism: security.ScramSHA256},
		{User: "alice", Mechanism: security.ScramSHA256 + "-X"},
	})
	checkResults(t, "phase 2 SCRAM", errs, err, nil, nil, ErrResourceNotFound, ErrResourceNotFound)
	if err := s.CreateACLs([]acl.Binding{aclPrefixWrite, aclTopicRead}); err != nil {
		t.Fatalf("create ACLs: %v", err)
	}
	if err := s.DeleteACLs([]acl.Binding{aclGroupRead, aclNeverMade}); err != nil {
		t.Fatalf("delete ACLs: %v", err)
	}
	if err := s.AlterClientQuotas([]QuotaChange{
		{Entity: quota.Entity{user(strp("alice"))}, Set: map[string]float64{"producer_byte_rate": 4096}, Remove: []string{"consumer_byte_rate"}},
		{Entity: quota.Entity{user(nil)}, Remove: []string{"producer_byte_rate"}},
		{Entity: quota.Entity{clientID(strp("app")), user(strp("alice"))}, Remove: []string{"consumer_byte_rate"}},
		{Entity: quota.Entity{user(strp("bob"))}, Remove: []string{"producer_byte_rate"}},
	}); err != nil {
		t.Fatalf("alter client quotas: %v", err)
	}
	return securityState{
		Scram: map[string][]security.ScramCredential{
			"alice": {cred(security.ScramSHA256, 4, 8192), cred(security.ScramSHA512, 1, 4096)},
		},
		ACLs: []acl.Binding{aclTopicRead, aclPrefixWrite}, // LITERAL before PREFIXED
		ClientQuotas: []quota.Entry{
			{Entity: quota.Entity{clientID(strp("app")), user(strp("alice"))}, Values: map[string]float64{"request_percentage": 50}},
			{Entity: quota.Entity{user(strp("alice"))}, Values: map[string]float64{"producer_byte_rate": 4096}},
		},
	}
}

// checkUnstorableRejected: what the metadata encoding cannot carry fails
// at once with ErrInvalidRequest (on a Quorum, before any forwarding) and
// changes nothing.
func checkUnstorableRejected(t *testing.T, s Store) {
	t.Helper()
	before := s.Image()
	bad := aclTopicRead
	bad.Operation = kmsg.ACLOperationUnknown
	if err := s.CreateACLs([]acl.Binding{aclNeverMade, bad}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("ACL with an UNKNOWN operation: %v, want ErrInvalidRequest", err)
	}
	bad = aclTopicRead
	bad.ResourceType = 42
	if err := s.CreateACLs([]acl.Binding{bad}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("ACL with resource type 42: %v, want ErrInvalidRequest", err)
	}
	if err := s.DeleteACLs([]acl.Binding{bad}); err != nil {
		t.Fatalf("delete of an ACL that cannot exist: %v", err)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		err := s.AlterClientQuotas([]QuotaChange{{Entity: quota.Entity{user(nil)}, Set: map[string]float64{"producer_byte_rate": v}}})
		if !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("quota %v: %v, want ErrInvalidRequest", v, err)
		}
	}
	if after := s.Image(); stateOf(after).diff(stateOf(before)) != nil {
		t.Fatalf("a rejected change changed the state: %v", stateOf(before).diff(stateOf(after)))
	}
}

func TestLocalSecurityStatePersistsAndIsPublished(t *testing.T) {
	dir := t.TempDir()
	self := Broker{NodeID: 1, Host: "127.0.0.1", Port: 9092}
	s, err := OpenLocal(dir, self, "cluster")
	if err != nil {
		t.Fatal(err)
	}
	var published []*Image
	s.Subscribe(func(im *Image) { published = append(published, im) })

	reopen := func() *Local {
		t.Helper()
		r, err := OpenLocal(dir, self, "")
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		return r
	}
	want := securityPhase1(t, s)
	if err := want.diff(stateOf(s.Image())); err != nil {
		t.Fatal(err)
	}
	if err := want.diff(stateOf(reopen().Image())); err != nil {
		t.Fatalf("after reopen: %v", err)
	}
	want = securityPhase2(t, s)
	checkUnstorableRejected(t, s)
	last := published[len(published)-1]
	if last != s.Image() {
		t.Fatal("the last published image is not the store's image")
	}
	if err := want.diff(stateOf(last)); err != nil {
		t.Fatalf("published image: %v", err)
	}
	// Each call is one image: phase 1 and 2 made 3 and 4 changes; the
	// rejected ones none; the first image came with Subscribe.
	if len(published) != 1+3+4 {
		t.Fatalf("published %d images, want 8", len(published))
	}
	r := reopen()
	if err := want.diff(stateOf(r.Image())); err != nil {
		t.Fatalf("after reopen: %v", err)
	}
	if r.Image().ClusterID != "cluster" {
		t.Fatalf("cluster id %q", r.Image().ClusterID)
	}

	// Removing everything leaves no empty fields behind.
	errs, err := r.AlterScramCredentials([]ScramChange{{User: "alice", Mechanism: security.ScramSHA256}, {User: "alice", Mechanism: security.ScramSHA512}})
	checkResults(t, "delete all credentials", errs, err, nil, nil)
	if err := r.DeleteACLs(want.ACLs); err != nil {
		t.Fatal(err)
	}
	var clear []QuotaChange
	for _, e := range want.ClientQuotas {
		ch := QuotaChange{Entity: e.Entity}
		for k := range e.Values {
			ch.Remove = append(ch.Remove, k)
		}
		clear = append(clear, ch)
	}
	if err := r.AlterClientQuotas(clear); err != nil {
		t.Fatal(err)
	}
	if err := (securityState{}).diff(stateOf(reopen().Image())); err != nil {
		t.Fatalf("after removing everything: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"scram"`, `"acls"`, `"client_quotas"`} {
		if strings.Contains(string(b), field) {
			t.Fatalf("empty %s still written:\n%s", field, b)
		}
	}
}

// oldDocument is an image as written before the security fields existed.
func oldDocument(id TopicID) string {
	return fmt.Sprintf(`{"cluster_id":"old-cluster","epoch":7,"controller_id":1,
		"brokers":[{"node_id":1,"host":"127.0.0.1","port":9092}],
		"topics":{"t":{"name":"t","id":%q,"partitions":[{"partition":0,"replicas":[1],"isr":[1],"leader":1,"leader_epoch":3,"partition_epoch":4}]}},
		"broker_configs":{"k":"v"},"next_producer_id":5000}`, id.String())
}

func TestImagesWithoutSecurityFieldsLoad(t *testing.T) {
	id := NewTopicID()
	check := func(what string, im *Image) {
		t.Helper()
		tp := im.Topics["t"]
		if im.ClusterID != "old-cluster" || tp == nil || tp.ID != id || tp.Partitions[0].LeaderEpoch != 3 ||
			im.NextProducerID != 5000 || im.BrokerConfigs["k"] != "v" {
			t.Fatalf("%s: image %+v", what, im)
		}
		if err := (securityState{}).diff(stateOf(im)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// A Local document.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(oldDocument(id)), 0o644); err != nil {
		t.Fatal(err)
	}
	self := Broker{NodeID: 1, Host: "127.0.0.1", Port: 9092}
	s, err := OpenLocal(dir, self, "")
	if err != nil {
		t.Fatalf("open an old document: %v", err)
	}
	check("local", s.Image())
	if err := s.CreateACLs([]acl.Binding{aclTopicRead}); err != nil {
		t.Fatal(err)
	}
	if r, err := OpenLocal(dir, self, ""); err != nil || len(r.Image().ACLs) != 1 || r.Image().Topics["t"] == nil {
		t.Fatalf("reopen after a change: %v", err)
	}

	// A Quorum snapshot.
	q := &Quorum{}
	if err := (&fsm{q: q}).Restore(io.NopCloser(strings.NewReader(oldDocument(id)))); err != nil {
		t.Fatalf("restore an old snapshot: %v", err)
	}
	check("snapshot", q.Image())

	// Records written before: they carry none of the new fields.
	r, err := decodeRecord([]byte(`{"v":1,"type":"set_broker_configs","configs":{"a":"b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	tx := newTxn(q.Image())
	if _, err := tx.apply(r, 8); err != nil || tx.im.BrokerConfigs["a"] != "b" || stateOf(tx.im).diff(securityState{}) != nil {
		t.Fatalf("old record: %v %+v", err, tx.im)
	}
}

// TestSecurityChangesLeavePublishedImagesAlone: an image, once published,
// does not change when the next change is made, nor when the caller
// reuses what it passed in.
func TestSecurityChangesLeavePublishedImagesAlone(t *testing.T) {
	s, err := OpenLocal(t.TempDir(), Broker{NodeID: 1, Host: "127.0.0.1", Port: 9092}, "")
	if err != nil {
		t.Fatal(err)
	}
	securityPhase1(t, s)
	old := s.Image()
	before, _ := json.Marshal(old)
	securityPhase2(t, s) // changes a credential in place, deletes, adds, alters quota values

	// Reused inputs: a credential's bytes, an entity's name, the values.
	c := credPtr(security.ScramSHA256, 9, 4096)
	name := "zed"
	set := map[string]float64{"producer_byte_rate": 1}
	if _, err := s.AlterScramCredentials([]ScramChange{{User: "zed", Mechanism: security.ScramSHA256, Credential: c}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterClientQuotas([]QuotaChange{{Entity: quota.Entity{user(&name)}, Set: set}}); err != nil {
		t.Fatal(err)
	}
	mid := s.Image()
	midJSON, _ := json.Marshal(mid)
	// Fields a change did not touch are shared, and touched ones are new.
	prev := published(t, s, func() {
		if err := s.CreateACLs([]acl.Binding{aclNeverMade}); err != nil {
			t.Fatal(err)
		}
	})
	next := s.Image()
	if &next.ClientQuotas[0] != &prev.ClientQuotas[0] || reflect.ValueOf(next.Scram).UnsafePointer() != reflect.ValueOf(prev.Scram).UnsafePointer() {
		t.Fatal("an ACL change copied the credentials or quotas")
	}
	if &next.ACLs[0] == &prev.ACLs[0] {
		t.Fatal("an ACL change reused the previous image's ACL slice")
	}
	if err := s.DeleteACLs([]acl.Binding{aclNeverMade}); err != nil {
		t.Fatal(err)
	}
	c.Salt[0], c.StoredKey[0], c.ServerKey[0] = 0xff, 0xff, 0xff
	name = "changed"
	set["producer_byte_rate"] = 2

	if after, _ := json.Marshal(old); string(after) != string(before) {
		t.Fatalf("published image changed:\nbefore %s\nafter  %s", before, after)
	}
	if after, _ := json.Marshal(mid); string(after) != string(midJSON) {
		t.Fatalf("image shares memory with the caller's inputs:\nbefore %s\nafter  %s", midJSON, after)
	}

	// The same through records, as Quorum applies them.
	base := s.Image()
	baseJSON, _ := json.Marshal(base)
	tx := newTxn(base)
	for _, r := range []*record{
		{Type: recAlterScram, Scram: []ScramChange{
			{User: "alice", Mechanism: security.ScramSHA512, Credential: credPtr(security.ScramSHA512, 7, 4096)},
			{User: "alice", Mechanism: security.ScramSHA256},
		}},
		{Type: recCreateACLs, ACLs: []acl.Binding{aclGroupRead}},
		{Type: recDeleteACLs, ACLs: []acl.Binding{aclTopicRead}},
		{Type: recAlterClientQuotas, Quotas: []QuotaChange{{Entity: quota.Entity{user(strp("alice"))}, Set: map[string]float64{"producer_byte_rate": 1}, Remove: []string{"x"}}}},
	} {
		b, err := encodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		dr, err := decodeRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.apply(dr, 1); err != nil {
			t.Fatalf("%s: %v", r.Type, err)
		}
	}
	if after, _ := json.Marshal(base); string(after) != string(baseJSON) {
		t.Fatalf("records modified the image they were applied to:\nbefore %s\nafter  %s", baseJSON, after)
	}
	if _, ok := tx.im.ScramCredential("alice", security.ScramSHA256); ok {
		t.Fatal("credential not deleted in the new image")
	}
	if c, ok := tx.im.ScramCredential("alice", security.ScramSHA512); !ok || c.Salt[0] != 7 {
		t.Fatalf("credential not replaced in the new image: %+v", c)
	}
}

// published runs change and returns the image from before it.
func published(t *testing.T, s Store, change func()) *Image {
	t.Helper()
	before := s.Image()
	change()
	if s.Image() == before {
		t.Fatal("the change published no image")
	}
	return before
}

func TestClientQuotaEntitiesMatchComponentWise(t *testing.T) {
	tx := newTxn(&Image{Topics: map[string]*Topic{}})
	entities := []quota.Entity{
		{user(strp("a"))},
		{user(nil)},
		{user(strp(""))}, // an empty name is not the default
		{clientID(nil)},
		{clientID(strp("a"))},
		{clientID(strp("x")), user(strp("a"))},
		{clientID(nil), user(nil)},
	}
	for i, e := range entities {
		tx.alterClientQuotas([]QuotaChange{{Entity: e, Set: map[string]float64{"v": float64(i)}}})
	}
	if len(tx.im.ClientQuotas) != len(entities) {
		t.Fatalf("%d entries for %d distinct entities: %+v", len(tx.im.ClientQuotas), len(entities), tx.im.ClientQuotas)
	}
	for i, e := range entities {
		// Fresh pointers find the same entry.
		fresh := copyEntity(e)
		got, ok := tx.im.ClientQuota(fresh)
		if !ok || got.Values["v"] != float64(i) {
			t.Fatalf("entity %d: %+v %v", i, got, ok)
		}
	}
	// Sorted: client-id entries before user entries, a default first.
	for i := 1; i < len(tx.im.ClientQuotas); i++ {
		if compareEntities(tx.im.ClientQuotas[i-1].Entity, tx.im.ClientQuotas[i].Entity) >= 0 {
			t.Fatalf("entries out of order at %d: %+v", i, tx.im.ClientQuotas)
		}
	}
	if e := tx.im.ClientQuotas[0].Entity; len(e) != 1 || e[0].Type != quota.EntityClientID || e[0].Name != nil {
		t.Fatalf("first entry %+v, want the client-id default", e)
	}
	// Setting again replaces the value in the one entry.
	tx.alterClientQuotas([]QuotaChange{{Entity: quota.Entity{clientID(strp("x")), user(strp("a"))}, Set: map[string]float64{"v": 99}}})
	if got, _ := tx.im.ClientQuota(quota.Entity{clientID(strp("x")), user(strp("a"))}); len(tx.im.ClientQuotas) != len(entities) || got.Values["v"] != 99 {
		t.Fatalf("update: %+v", tx.im.ClientQuotas)
	}
	if _, ok := tx.im.ClientQuota(quota.Entity{user(strp("nobody"))}); ok {
		t.Fatal("found a quota for an entity never set")
	}
}

func TestChangeErrorsCrossTheWire(t *testing.T) {
	in := changeErrors{nil, fmt.Errorf("%w: user %q", ErrResourceNotFound, "x"), errors.New("something else")}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out changeErrors
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0] != nil || !errors.Is(out[1], ErrResourceNotFound) || out[1].Error() != in[1].Error() ||
		out[2] == nil || out[2].Error() != "something else" || errors.Is(out[2], ErrResourceNotFound) {
		t.Fatalf("decoded %#v from %s", out, b)
	}
}

// TestQuorumSecurityStateReplicatedAndRestored: changes asked on a follower
// reach every node (ErrResourceNotFound included), and a restart of the
// whole quorum restores them from a snapshot (phase 1) and the log after
// it (phase 2).
func TestQuorumSecurityStateReplicatedAndRestored(t *testing.T) {
	c := newTestCluster(t, 3, 0, nil)
	var (
		mu   sync.Mutex
		seen = map[int32]*Image{}
	)
	for _, q := range c.running() {
		id := q.NodeID()
		q.Subscribe(func(im *Image) {
			mu.Lock()
			defer mu.Unlock()
			seen[id] = im
		})
	}
	onEveryNode := func(what string, want securityState) {
		t.Helper()
		waitFor(t, 30*time.Second, func() error {
			for _, q := range c.running() {
				if err := want.diff(stateOf(q.Image())); err != nil {
					return fmt.Errorf("%s: node %d: %w", what, q.NodeID(), err)
				}
			}
			return nil
		})
	}

	f := c.follower()
	want := securityPhase1(t, f)
	onEveryNode("phase 1", want)
	mu.Lock()
	for id, im := range seen {
		if err := want.diff(stateOf(im)); err != nil {
			t.Fatalf("image published on node %d: %v", id, err)
		}
	}
	mu.Unlock()
	checkUnstorableRejected(t, f)

	// The controller itself answers the same way.
	errs, err := c.leader().AlterScramCredentials([]ScramChange{{User: "nobody", Mechanism: security.ScramSHA256}})
	checkResults(t, "delete on the controller", errs, err, ErrResourceNotFound)

	c.converged()
	for _, q := range c.running() {
		if err := q.Snapshot(); err != nil {
			t.Fatalf("snapshot on node %d: %v", q.NodeID(), err)
		}
	}
	want = securityPhase2(t, c.follower())
	onEveryNode("phase 2", want)

	c.closeAll()
	for id := range c.cfgs {
		c.open(id, nil)
	}
	onEveryNode("after restart", want)

	// And changes go on after the restart.
	errs, err = c.follower().AlterScramCredentials([]ScramChange{{User: "alice", Mechanism: security.ScramSHA512}})
	checkResults(t, "delete after restart", errs, err, nil)
	want.Scram = map[string][]security.ScramCredential{"alice": want.Scram["alice"][:1]}
	onEveryNode("after a change after restart", want)
}
