package broker

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientQuotaAnswerOrder: AlterClientQuotas and DescribeClientQuotas
// list entities, their components and quota values in the iteration order
// of the Java HashMaps Kafka keeps them in, which clients' tests assert
// (platformatic/kafka): the two changes of its strict-filter test, with
// the orders Kafka answers.
func TestClientQuotaAnswerOrder(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	alter := func(ents ...[2]string) *kmsg.AlterClientQuotasResponse {
		t.Helper()
		e := kmsg.NewAlterClientQuotasRequestEntry()
		for _, c := range ents {
			e.Entity = append(e.Entity, kmsg.AlterClientQuotasRequestEntryEntity{Type: c[0], Name: kmsg.StringPtr(c[1])})
		}
		e.Ops = []kmsg.AlterClientQuotasRequestEntryOp{
			{Key: "producer_byte_rate", Value: 1000}, {Key: "consumer_byte_rate", Value: 1000}, {Key: "request_percentage", Value: 0.5},
		}
		req := kmsg.NewPtrAlterClientQuotasRequest()
		req.Entries = append(req.Entries, e)
		resp := tb.request(ctx, req).(*kmsg.AlterClientQuotasResponse)
		if len(resp.Entries) != 1 || resp.Entries[0].ErrorCode != 0 {
			t.Fatalf("alter: %+v", resp)
		}
		return resp
	}
	alter([2]string{"user", "User1"})
	resp := alter([2]string{"user", "User1"}, [2]string{"client-id", "Client1"})
	if got := resp.Entries[0].Entity; len(got) != 2 || got[0].Type != "client-id" || got[1].Type != "user" {
		t.Errorf("AlterClientQuotas entity: %+v, want client-id then user", got)
	}

	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.Components = []kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0, Match: kmsg.StringPtr("User1")}}
	d := tb.request(ctx, req).(*kmsg.DescribeClientQuotasResponse)
	var got [][]string
	for _, e := range d.Entries {
		var line []string
		for _, c := range e.Entity {
			line = append(line, c.Type+"="+*c.Name)
		}
		line = append(line, "|")
		for _, v := range e.Values {
			line = append(line, v.Key)
		}
		got = append(got, line)
	}
	want := [][]string{
		{"user=User1", "|", "consumer_byte_rate", "request_percentage", "producer_byte_rate"},
		{"client-id=Client1", "user=User1", "|", "consumer_byte_rate", "request_percentage", "producer_byte_rate"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("DescribeClientQuotas:\n got %v\nwant %v", got, want)
	}
}

// TestJavaHashMapOrder checks the emulation against iteration orders
// printed by a JDK 17 HashMap for the same puts.
func TestJavaHashMapOrder(t *testing.T) {
	for _, tc := range []struct {
		initial int
		puts    []string
		want    []string
	}{
		{-1, []string{"user", "client-id", "ip"}, []string{"ip", "client-id", "user"}},
		{2, []string{"user", "client-id"}, []string{"client-id", "user"}},
		{0, []string{"request_percentage", "producer_byte_rate", "consumer_byte_rate"}, []string{"consumer_byte_rate", "request_percentage", "producer_byte_rate"}},
		{-1, []string{"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate", "connection_creation_rate"},
			[]string{"connection_creation_rate", "request_percentage", "producer_byte_rate", "consumer_byte_rate", "controller_mutation_rate"}},
		{3, []string{"a", "bb", "User1", "Client1", "some-long-client-name"}, []string{"bb", "some-long-client-name", "a", "Client1", "User1"}},
	} {
		got := slices.Clone(tc.puts)
		javaHashMapOrder(got, javaStringHash, javaHashMapCapacity(tc.initial, len(got)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("new HashMap<>(%d), puts %v: order %v, want %v", tc.initial, tc.puts, got, tc.want)
		}
	}
	if h := quotaEntityHash([]string{"user", "client-id"}, []*string{kmsg.StringPtr("User1"), nil}); h != -1823039286 {
		t.Errorf("entity hash %d, want JDK's -1823039286", h)
	}
}
