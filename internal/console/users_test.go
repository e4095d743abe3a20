package console_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// brokerSCRAM is user's SCRAM credentials as the broker describes them:
// mechanism → iterations; nil when the user has none.
func brokerSCRAM(t *testing.T, bootstrap, user string) map[string]int32 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	described, err := kadm.NewClient(cl).DescribeUserSCRAMs(context.Background(), user)
	if err != nil {
		t.Fatalf("describe SCRAM credentials of %s: %v", user, err)
	}
	d := described[user]
	if d.Err != nil || len(d.CredInfos) == 0 {
		return nil
	}
	out := map[string]int32{}
	for _, c := range d.CredInfos {
		out[c.Mechanism.String()] = c.Iterations
	}
	return out
}

func TestUsersAPI(t *testing.T) {
	u, bootstrap := startConsole(t)
	api := newPageAPI(t, u)
	const user = "uapi-bob"

	api.must("POST", "/api/users", map[string]any{"user": user, "password": "s3cret", "mechanism": "SCRAM-SHA-256", "iterations": 8192}, nil)
	if got := brokerSCRAM(t, bootstrap, user); len(got) != 1 || got["SCRAM-SHA-256"] != 8192 {
		t.Fatalf("credentials after create: %v", got)
	}
	// A second mechanism, default iterations.
	api.must("POST", "/api/users", map[string]any{"user": user, "password": "other", "mechanism": "SCRAM-SHA-512"}, nil)
	if got := brokerSCRAM(t, bootstrap, user); len(got) != 2 || got["SCRAM-SHA-512"] != 4096 {
		t.Fatalf("credentials after adding SHA-512: %v", got)
	}

	var list struct {
		Users []struct {
			User        string
			Credentials []struct {
				Mechanism  string
				Iterations int32
			}
		}
	}
	api.must("GET", "/api/users", nil, &list)
	found := false
	for _, u := range list.Users {
		if u.User == user {
			found = true
			if len(u.Credentials) != 2 {
				t.Fatalf("listed %+v", u)
			}
		}
	}
	if !found {
		t.Fatalf("GET /api/users does not list %s: %+v", user, list)
	}

	for _, bad := range []map[string]any{
		{"user": user, "password": "x", "mechanism": "SCRAM-SHA-256", "iterations": 100},
		{"user": user, "password": "x", "mechanism": "SCRAM-SHA-256", "iterations": 20000},
		{"user": user, "password": "x", "mechanism": "PLAIN"},
		{"user": user, "password": "", "mechanism": "SCRAM-SHA-256"},
		{"user": " ", "password": "x", "mechanism": "SCRAM-SHA-256"},
	} {
		if st, msg := api.call("POST", "/api/users", bad, nil); st != http.StatusBadRequest {
			t.Fatalf("upsert %v: %d %s, want 400", bad, st, msg)
		}
	}

	api.must("DELETE", "/api/users/"+user+"?mechanism=SCRAM-SHA-256", nil, nil)
	if got := brokerSCRAM(t, bootstrap, user); len(got) != 1 || got["SCRAM-SHA-512"] != 4096 {
		t.Fatalf("credentials after deleting SHA-256: %v", got)
	}
	// Deleting a credential the user does not have is Kafka's error.
	if st, msg := api.call("DELETE", "/api/users/"+user+"?mechanism=SCRAM-SHA-256", nil, nil); st/100 == 2 || msg == "" {
		t.Fatalf("deleting a missing credential: %d %q", st, msg)
	}
	api.must("DELETE", "/api/users/"+user+"?mechanism=SCRAM-SHA-512", nil, nil)
	if got := brokerSCRAM(t, bootstrap, user); got != nil {
		t.Fatalf("credentials after deleting both: %v", got)
	}
}
