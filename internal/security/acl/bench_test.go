package acl

import (
	"fmt"
	"testing"

	"github.com/silkworm/silkworm/internal/security"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// thousandBindings is a plausible production set: per-team prefixes,
// per-topic literals for many users, consumer groups, a few wildcards and
// DENYs, and the cluster bindings of the admin tools.
func thousandBindings() []Binding {
	var bs []Binding
	for i := range 600 {
		b := grant(topic, literal, fmt.Sprintf("team%d.topic%d", i%20, i), opRead)
		b.Principal = fmt.Sprintf("User:app%d", i%50)
		bs = append(bs, b)
	}
	for i := range 200 {
		b := grant(group, prefixed, fmt.Sprintf("app%d-", i), opRead)
		b.Principal = fmt.Sprintf("User:app%d", i%50)
		bs = append(bs, b)
	}
	for i := range 150 {
		b := grant(topic, prefixed, fmt.Sprintf("team%d.", i%20), opWrite)
		b.Principal = fmt.Sprintf("User:app%d", i)
		b.Host = fmt.Sprintf("10.0.%d.%d", i/200, i%200)
		bs = append(bs, b)
	}
	for i := range 40 {
		b := refuse(topic, literal, fmt.Sprintf("team%d.topic%d", i%20, i*7), opWrite)
		b.Principal = "User:*"
		bs = append(bs, b)
	}
	bs = append(bs,
		withPrincipal(grant(topic, literal, "*", opDescribe), "User:monitor"),
		withPrincipal(grant(group, literal, "*", opDescribe), "User:monitor"),
		withPrincipal(grant(cluster, literal, ClusterName, opAlter), "User:ops"),
		withPrincipal(grant(cluster, literal, ClusterName, opDescribe), "User:*"),
		withPrincipal(grant(cluster, literal, ClusterName, opIdempotentWrite), "User:*"),
	)
	for len(bs) < 1000 {
		bs = append(bs, withPrincipal(grant(txnID, prefixed, fmt.Sprintf("txn-%d-", len(bs)), opWrite), "User:app1"))
	}
	return bs
}

type benchRequest struct {
	p    security.Principal
	host string
	op   kmsg.ACLOperation
	rt   kmsg.ACLResourceType
	name string
	want bool
}

var benchRequests = []benchRequest{
	{security.User("app7"), "10.0.0.7", opRead, topic, "team7.topic7", true},      // literal allow
	{security.User("app7"), "10.0.0.7", opWrite, topic, "team7.topic7", true},     // prefixed allow
	{security.User("app7"), "10.0.0.7", opWrite, topic, "team0.topic0", false},    // User:* DENY
	{security.User("app7"), "10.0.0.7", opRead, group, "app7-consumers", true},    // prefixed group allow
	{security.User("nobody"), "10.9.9.9", opRead, topic, "team3.topic999", false}, // bindings, none applies
	{security.User("app1"), "10.0.0.1", opIdempotentWrite, cluster, ClusterName, true},
	{security.User("app1"), "10.0.0.1", opWrite, txnID, "txn-995-a", true},
}

func TestAuthorizeDoesNotAllocate(t *testing.T) {
	a := newAuthorizer(t, Config{SuperUsers: []string{"User:admin", "User:ops2"}}, thousandBindings()...)
	for _, r := range benchRequests {
		if got := a.Authorize(r.p, r.host, r.op, r.rt, r.name); got != r.want {
			t.Errorf("Authorize(%v, %v, %q) = %v, want %v", r.p, r.op, r.name, got, r.want)
		}
		allocs := testing.AllocsPerRun(100, func() {
			a.Authorize(r.p, r.host, r.op, r.rt, r.name)
		})
		if allocs != 0 {
			t.Errorf("Authorize(%v, %v, %q) allocates %v times", r.p, r.op, r.name, allocs)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		a.AuthorizedOperations(security.User("app7"), "10.0.0.7", topic, "team7.topic7")
	})
	if allocs != 0 {
		t.Errorf("AuthorizedOperations allocates %v times", allocs)
	}
}

func BenchmarkAuthorize1000Bindings(b *testing.B) {
	a := newAuthorizer(b, Config{SuperUsers: []string{"User:admin"}}, thousandBindings()...)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := &benchRequests[i%len(benchRequests)]
		a.Authorize(r.p, r.host, r.op, r.rt, r.name)
		i++
	}
}

func BenchmarkAuthorizeParallel1000Bindings(b *testing.B) {
	a := newAuthorizer(b, Config{}, thousandBindings()...)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r := &benchRequests[i%len(benchRequests)]
			a.Authorize(r.p, r.host, r.op, r.rt, r.name)
			i++
		}
	})
}
