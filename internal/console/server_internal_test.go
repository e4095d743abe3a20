package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseListener(t *testing.T) {
	for _, c := range []struct{ in, scheme, addr string }{
		{"127.0.0.1:8080", "http", "127.0.0.1:8080"},
		{"http://localhost:8080", "http", "localhost:8080"},
		{"https://0.0.0.0:8443", "https", "0.0.0.0:8443"},
		{"https://[::1]:8443/", "https", "[::1]:8443"},
	} {
		scheme, addr, err := ParseListener(c.in)
		if err != nil || scheme != c.scheme || addr != c.addr {
			t.Errorf("ParseListener(%q) = %q, %q, %v; want %q, %q", c.in, scheme, addr, err, c.scheme, c.addr)
		}
	}
	for _, bad := range []string{"8080", "ftp://127.0.0.1:21", "http://127.0.0.1:80/console", ""} {
		if _, _, err := ParseListener(bad); err == nil {
			t.Errorf("ParseListener(%q) accepted", bad)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1": true, "127.8.9.1:1": true, "[::1]:1": true, "localhost:1": true, "LOCALHOST:1": true,
		"0.0.0.0:1": false, ":1": false, "[::]:1": false, "10.1.2.3:1": false, "example.com:1": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestNewRefusesOpenConsoleOffLoopback(t *testing.T) {
	for _, l := range []string{"0.0.0.0:8080", ":8080", "http://10.0.0.1:8080"} {
		_, err := New(Config{Listener: l, Bootstrap: "127.0.0.1:9092"})
		if err == nil || !strings.Contains(err.Error(), "without authentication") {
			t.Errorf("New on %s without SASL: %v, want a refusal", l, err)
		}
	}
	s, err := New(Config{Listener: "0.0.0.0:0", Bootstrap: "127.0.0.1:9092", SASLMechanism: "SCRAM-SHA-512"})
	if err != nil {
		t.Fatalf("New on 0.0.0.0 with SCRAM: %v", err)
	}
	s.Close()
	if _, err := New(Config{Listener: "https://127.0.0.1:0", Bootstrap: "127.0.0.1:9092"}); err == nil {
		t.Error("https without TLS config accepted")
	}
	if _, err := New(Config{Listener: "127.0.0.1:0", Bootstrap: "127.0.0.1:9092", SASLMechanism: "GSSAPI"}); err == nil {
		t.Error("GSSAPI accepted as a login mechanism")
	}
}

func TestOpenConsoleAnswersOnlyLoopbackHosts(t *testing.T) {
	s, err := New(Config{Listener: "127.0.0.1:0", Bootstrap: "127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for host, want := range map[string]int{"127.0.0.1:8080": 200, "localhost:8080": 200, "[::1]:8080": 200, "localhost": 200, "evil.example:8080": 421} {
		req := httptest.NewRequest("GET", "/api/session", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
}

func TestErrorStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{kerr.TopicAuthorizationFailed, 403},
		{fmt.Errorf("create: %w", kerr.ClusterAuthorizationFailed), 403},
		{&topicError{"t", kerr.UnknownTopicOrPartition}, 404},
		{kerr.GroupIDNotFound, 404},
		{kerr.InvalidPartitions, 400},
		{withMessage(kerr.InvalidConfig, "bad value"), 400},
		{kerr.TopicAlreadyExists, 409},
		{badRequest("x"), 400},
		{notFound("x"), 404},
		{kerr.SaslAuthenticationFailed, 401},
		{errors.New("boom"), 500},
	} {
		if got := errorStatus(c.err); got != c.want {
			t.Errorf("errorStatus(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	rec := httptest.NewRecorder()
	writeError(rec, withMessage(kerr.PolicyViolation, "no"))
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"error":"POLICY_VIOLATION`) {
		t.Errorf("writeError: %d %s", rec.Code, rec.Body)
	}
}

func TestRates(t *testing.T) {
	reg := prometheus.NewRegistry()
	rs := newRateSampler(reg)
	t0 := time.Unix(1000, 0)
	rs.sample(t0)
	rs.sample(t0.Add(5 * time.Second))
	for _, s := range rs.rates() {
		if len(s.Points) != 0 {
			t.Fatalf("%s has points before the metric exists: %v", s.Name, s.Points)
		}
	}
	in := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kafka_server_brokertopicmetrics_messagesin_total"}, []string{"topic"})
	reg.MustRegister(in)
	in.WithLabelValues("a").Add(10)
	in.WithLabelValues("b").Add(5)
	rs.sample(t0.Add(10 * time.Second))
	in.WithLabelValues("a").Add(50)
	rs.sample(t0.Add(15 * time.Second))
	got := rs.rates()[0]
	if got.Metric != "kafka_server_brokertopicmetrics_messagesin_total" || len(got.Points) != 1 || got.Points[0] != (ratePoint{float64(t0.Add(15 * time.Second).UnixMilli()), 10}) {
		t.Fatalf("messages in: %+v, want one point of 10/s", got)
	}
	for range rateSamples + 5 {
		rs.sample(t0)
	}
	if len(rs.ring) != rateSamples {
		t.Fatalf("ring holds %d samples, want %d", len(rs.ring), rateSamples)
	}
}

func TestSessionExpiry(t *testing.T) {
	s, err := New(Config{Listener: "127.0.0.1:0", Bootstrap: "127.0.0.1:9", SASLMechanism: "PLAIN", SessionIdle: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ss := s.sessions
	cl, _ := newTestClient()
	sess := &session{id: "abc", csrf: "tok", user: "u", cl: cl}
	sess.last.Store(time.Now().Add(-2 * time.Minute).UnixNano())
	ss.byID["abc"] = sess
	fresh := &session{id: "def", csrf: "tok2", user: "v", cl: cl}
	fresh.last.Store(time.Now().UnixNano())
	ss.byID["def"] = fresh
	ss.expire(time.Now())
	req := httptest.NewRequest("GET", "/api/topics", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: "abc"})
	if _, err := ss.fromRequest(req); err == nil {
		t.Fatal("an idle session still answers")
	}
	req = httptest.NewRequest("GET", "/api/topics", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: "def"})
	if _, err := ss.fromRequest(req); err != nil {
		t.Fatalf("a fresh session expired: %v", err)
	}
	if sess.checkCSRF("") || sess.checkCSRF("nope") || !sess.checkCSRF("tok") {
		t.Fatal("checkCSRF accepts a wrong token or refuses the right one")
	}
}

// newTestClient is a kgo client that never connects (nothing is asked).
func newTestClient() (*kgo.Client, error) { return kgo.NewClient(kgo.SeedBrokers("127.0.0.1:9")) }
