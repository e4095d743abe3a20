package console_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// brokerQuotas is the quotas of the entity exactly as the broker describes
// them (strict match); components with a nil name match the default.
func brokerQuotas(t *testing.T, bootstrap string, entity kadm.ClientQuotaEntity) map[string]float64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var comps []kadm.DescribeClientQuotaComponent
	for _, c := range entity {
		dc := kadm.DescribeClientQuotaComponent{Type: c.Type, MatchName: c.Name}
		if c.Name == nil {
			dc.MatchType = 1 // the default
		}
		comps = append(comps, dc)
	}
	described, err := kadm.NewClient(cl).DescribeClientQuotas(context.Background(), true, comps)
	if err != nil {
		t.Fatalf("describe client quotas: %v", err)
	}
	out := map[string]float64{}
	for _, d := range described {
		for _, v := range d.Values {
			out[v.Key] = v.Value
		}
	}
	return out
}

func TestQuotasAPI(t *testing.T) {
	u, bootstrap := startConsole(t)
	api := newPageAPI(t, u)
	alice := "qapi-alice"
	app := "qapi-app"
	user := []map[string]any{{"type": "user", "name": alice}}
	userClient := []map[string]any{{"type": "user", "name": alice}, {"type": "client-id", "name": app}}
	defaultUser := []map[string]any{{"type": "user", "name": nil}}

	api.must("POST", "/api/quotas", map[string]any{"entity": user, "set": map[string]float64{"producer_byte_rate": 1024, "consumer_byte_rate": 2048}}, nil)
	api.must("POST", "/api/quotas", map[string]any{"entity": userClient, "set": map[string]float64{"request_percentage": 50}}, nil)
	api.must("POST", "/api/quotas", map[string]any{"entity": defaultUser, "set": map[string]float64{"producer_byte_rate": 4096}}, nil)
	kUser := kadm.ClientQuotaEntity{{Type: "user", Name: &alice}}
	kUserClient := kadm.ClientQuotaEntity{{Type: "user", Name: &alice}, {Type: "client-id", Name: &app}}
	kDefault := kadm.ClientQuotaEntity{{Type: "user"}}
	if got := brokerQuotas(t, bootstrap, kUser); got["producer_byte_rate"] != 1024 || got["consumer_byte_rate"] != 2048 || len(got) != 2 {
		t.Fatalf("user quotas: %v", got)
	}
	if got := brokerQuotas(t, bootstrap, kUserClient); got["request_percentage"] != 50 || len(got) != 1 {
		t.Fatalf("user+client-id quotas: %v", got)
	}
	if got := brokerQuotas(t, bootstrap, kDefault); got["producer_byte_rate"] != 4096 {
		t.Fatalf("default user quotas: %v", got)
	}

	var list struct {
		Quotas []struct {
			Entity []struct {
				Type string
				Name *string
			}
			Values map[string]float64
		}
	}
	api.must("GET", "/api/quotas", nil, &list)
	seen := map[string]map[string]float64{}
	for _, q := range list.Quotas {
		key := ""
		for _, c := range q.Entity {
			n := "<default>"
			if c.Name != nil {
				n = *c.Name
			}
			key += c.Type + "=" + n + ";"
		}
		seen[key] = q.Values
	}
	if v := seen["user="+alice+";"]; v["producer_byte_rate"] != 1024 || v["consumer_byte_rate"] != 2048 {
		t.Fatalf("listed quotas %v", seen)
	}
	if v := seen["user="+alice+";client-id="+app+";"]; v["request_percentage"] != 50 {
		t.Fatalf("listed quotas %v", seen)
	}
	if v := seen["user=<default>;"]; v["producer_byte_rate"] != 4096 {
		t.Fatalf("listed quotas %v", seen)
	}

	// Remove, leaving the rest.
	api.must("POST", "/api/quotas", map[string]any{"entity": user, "remove": []string{"consumer_byte_rate"}}, nil)
	if got := brokerQuotas(t, bootstrap, kUser); got["producer_byte_rate"] != 1024 || len(got) != 1 {
		t.Fatalf("user quotas after removing consumer_byte_rate: %v", got)
	}
	// The broker is shared: leave no quota behind.
	api.must("POST", "/api/quotas", map[string]any{"entity": user, "remove": []string{"producer_byte_rate"}}, nil)
	api.must("POST", "/api/quotas", map[string]any{"entity": userClient, "remove": []string{"request_percentage"}}, nil)
	api.must("POST", "/api/quotas", map[string]any{"entity": defaultUser, "remove": []string{"producer_byte_rate"}}, nil)
	if got := brokerQuotas(t, bootstrap, kDefault); len(got) != 0 {
		t.Fatalf("default user quotas after removal: %v", got)
	}

	for _, bad := range []map[string]any{
		{"entity": []map[string]any{{"type": "group", "name": "g"}}, "set": map[string]float64{"producer_byte_rate": 1}},
		{"entity": user},
		{"set": map[string]float64{"producer_byte_rate": 1}},
	} {
		if st, msg := api.call("POST", "/api/quotas", bad, nil); st != http.StatusBadRequest {
			t.Fatalf("alter %v: %d %s, want 400", bad, st, msg)
		}
	}
	// A key Kafka does not know is the broker's error, shown as such.
	if st, msg := api.call("POST", "/api/quotas", map[string]any{"entity": user, "set": map[string]float64{"no_such_quota": 1}}, nil); st/100 == 2 || msg == "" {
		t.Fatalf("unknown quota key: %d %q", st, msg)
	}
}
