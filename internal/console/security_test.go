package console_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// saslOverrides give the broker a SASL_PLAINTEXT listener with
// SCRAM-SHA-512 (which the console then logs its users in with), the
// standard authorizer, and "admin" as a super user. The PLAINTEXT
// listener stays for the test's own clients (ANONYMOUS, a super user).
var saslOverrides = []string{
	"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
	"sasl.enabled.mechanisms=SCRAM-SHA-512",
	"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"super.users=User:ANONYMOUS;User:admin",
	"silkworm.metrics.listener=127.0.0.1:0",
}

// addSCRAMUsers creates SCRAM-SHA-512 users (name → password).
func addSCRAMUsers(t *testing.T, adm *kadm.Client, users map[string]string) {
	t.Helper()
	var up []kadm.UpsertSCRAM
	for u, p := range users {
		up = append(up, kadm.UpsertSCRAM{User: u, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: p})
	}
	res, err := adm.AlterUserSCRAMs(testCtx(t), nil, up)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create SCRAM users: %v", err)
	}
}

// startSASLConsole starts a broker with saslOverrides and the users admin
// (super user) and nobody (no ACLs).
func startSASLConsole(t *testing.T) *consoleBroker {
	t.Helper()
	cb, err := startBroker(t.TempDir(), saslOverrides...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cb.close)
	_, adm := kafkaClient(t, cb.bootstrap)
	addSCRAMUsers(t, adm, map[string]string{"admin": "admin-secret", "nobody": "nobody-secret"})
	return cb
}

// TestLoginAPI checks the session rules without a browser: every API
// call needs a login, a wrong password is refused, the cookie is
// HttpOnly and SameSite=Strict, state changes need the CSRF header, and
// logout ends the session.
func TestLoginAPI(t *testing.T) {
	cb := startSASLConsole(t)
	a := newAPIClient(t, cb.url)
	if code, msg := a.do("GET", "/api/topics", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("topics before login: %d %s, want 401", code, msg)
	}
	if code, _ := a.do("POST", "/api/login", map[string]string{"user": "admin", "password": "wrong"}, nil); code != http.StatusUnauthorized {
		t.Fatalf("login with a wrong password: %d, want 401", code)
	}
	if code, _ := a.do("POST", "/api/login", map[string]string{"user": "ghost", "password": "x"}, nil); code != http.StatusUnauthorized {
		t.Fatalf("login as an unknown user: %d, want 401", code)
	}

	// Log in by hand to see the cookie's attributes.
	resp, err := http.Post(cb.url+"/api/login", "application/json", strings.NewReader(`{"user":"admin","password":"admin-secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sc := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != 200 || !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") {
		t.Fatalf("login: %d, Set-Cookie %q: want 200 with HttpOnly and SameSite=Strict", resp.StatusCode, sc)
	}

	var s struct {
		User string `json:"user"`
		CSRF string `json:"csrf"`
	}
	a.must("POST", "/api/login", map[string]string{"user": "admin", "password": "admin-secret"}, &s)
	if s.User != "admin" || s.CSRF == "" {
		t.Fatalf("login answered %+v", s)
	}
	a.csrf = ""
	if code, _ := a.do("POST", "/api/topics", map[string]any{"name": "csrf-less"}, nil); code != http.StatusForbidden {
		t.Fatalf("create topic without the CSRF header: %d, want 403", code)
	}
	a.csrf = s.CSRF
	a.must("POST", "/api/topics", map[string]any{"name": "by-admin", "partitions": 1}, nil)
	a.must("POST", "/api/logout", nil, nil)
	if code, _ := a.do("GET", "/api/topics", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("topics after logout: %d, want 401", code)
	}
}

// TestLoginInBrowser logs in through the page: a user without ACLs sees
// an authorization error creating a topic, a super user creates it.
func TestLoginInBrowser(t *testing.T) {
	cb := startSASLConsole(t)
	_, adm := kafkaClient(t, cb.bootstrap)
	ctx := newBrowser(t)

	login := func(user, password string) {
		t.Helper()
		loadPage(t, ctx, cb.url+"/#/topics")
		if ready, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.ready`)); ready != "login" {
			t.Fatalf("before login the console shows %q, want the login form", ready)
		}
		screenshot(t, ctx, "login")
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS(`form.login input[name=user]`), user),
			chromedp.SetValue(chromedp.CSS(`form.login input[name=password]`), password),
			chromedp.Click(chromedp.CSS(`form.login button[type=submit]`)),
		); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, `document.body.dataset.ready === "topics"`)
	}
	createTopic := func(name string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`button.create-topic`)),
			chromedp.SetValue(chromedp.CSS(`input.new-topic-name`), name),
			chromedp.Click(chromedp.CSS(`button.submit-topic`)),
		); err != nil {
			t.Fatal(err)
		}
	}

	login("nobody", "nobody-secret")
	createTopic("denied-topic")
	waitJS(t, ctx, `document.getElementById("toasts").innerText.includes("AUTHORIZATION_FAILED")`)
	md, err := adm.Metadata(testCtx(t), "denied-topic")
	if err != nil {
		t.Fatal(err)
	}
	if td := md.Topics["denied-topic"]; td.Err != kerr.UnknownTopicOrPartition {
		t.Fatalf("topic created by a user without ACLs: %+v", td)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button.logout`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.body.dataset.ready === "login"`)

	login("admin", "admin-secret")
	createTopic("admin-topic")
	waitJS(t, ctx, `document.body.dataset.ready === "topics" && document.querySelector(".topic-name")?.textContent === "admin-topic"`)
	md, err = adm.Metadata(testCtx(t), "admin-topic")
	if err != nil || md.Topics["admin-topic"].Err != nil {
		t.Fatalf("topic created by the super user: %v %v", err, md.Topics["admin-topic"].Err)
	}
}

// TestRefusesOpenConsoleOnAllInterfaces: without SASL the console must
// not start on a non-loopback address, and the error says what to set.
func TestRefusesOpenConsoleOnAllInterfaces(t *testing.T) {
	cb, err := startBroker(t.TempDir(), "silkworm.console.listener=0.0.0.0:0")
	if err == nil {
		cb.close()
		t.Fatal("the broker started an unauthenticated console on 0.0.0.0")
	}
	for _, want := range []string{"refusing", "silkworm.console.listener", "sasl.enabled.mechanisms", "SASL_PLAINTEXT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func get(t *testing.T, url, user, password string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsListener: /metrics answers over HTTP, and with a SASL
// listener only with HTTP Basic credentials of a Kafka user.
func TestMetricsListener(t *testing.T) {
	t.Run("open", func(t *testing.T) {
		cb, err := startBroker(t.TempDir(), "silkworm.metrics.listener=127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cb.close)
		if code, body := get(t, "http://"+cb.metrics+"/metrics", "", ""); code != 200 {
			t.Fatalf("GET /metrics: %d %s", code, body)
		}
		if code, _ := get(t, "http://"+cb.metrics+"/other", "", ""); code != 404 {
			t.Fatalf("GET /other: %d, want 404", code)
		}
	})
	t.Run("basic auth", func(t *testing.T) {
		cb := startSASLConsole(t)
		u := "http://" + cb.metrics + "/metrics"
		if code, _ := get(t, u, "", ""); code != http.StatusUnauthorized {
			t.Fatalf("GET /metrics without credentials: %d, want 401", code)
		}
		if code, _ := get(t, u, "admin", "wrong"); code != http.StatusUnauthorized {
			t.Fatalf("GET /metrics with a wrong password: %d, want 401", code)
		}
		if code, body := get(t, u, "nobody", "nobody-secret"); code != 200 {
			t.Fatalf("GET /metrics as a Kafka user: %d %s", code, body)
		}
	})
}
