package console_test

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/security/securitytest"
)

// TestHTTPSListeners serves the console and /metrics over https with the
// broker's ssl.keystore.*, the console logging users in over a SASL_SSL
// listener (TLS to the broker, verified against ssl.truststore.*).
func TestHTTPSListeners(t *testing.T) {
	ca := securitytest.NewCA(t)
	dir := t.TempDir()
	keystore := ca.Issue(t, "broker", "127.0.0.1", "localhost").KeystorePEM(t, dir, "broker")
	cb, err := startBroker(dir,
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"ssl.keystore.type=PEM",
		"ssl.keystore.location="+keystore,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location="+ca.WriteCertPEM(t, dir),
		"silkworm.console.listener=https://127.0.0.1:0",
		"silkworm.metrics.listener=https://127.0.0.1:0",
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cb.close)
	if !strings.HasPrefix(cb.url, "https://") {
		t.Fatalf("console URL %s is not https", cb.url)
	}
	_, adm := kafkaClient(t, cb.bootstrap)
	addSCRAMUsers(t, adm, map[string]string{"alice": "alice-secret"})

	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	resp, err := hc.Post(cb.url+"/api/login", "application/json", strings.NewReader(`{"user":"alice","password":"alice-secret"}`))
	if err != nil {
		t.Fatalf("login over https: %v", err)
	}
	resp.Body.Close()
	if sc := resp.Header.Get("Set-Cookie"); resp.StatusCode != 200 || !strings.Contains(sc, "Secure") {
		t.Fatalf("login over https: %d, Set-Cookie %q: want 200 and a Secure cookie", resp.StatusCode, sc)
	}
	req, _ := http.NewRequest("GET", "https://"+cb.metrics+"/metrics", nil)
	req.SetBasicAuth("alice", "alice-secret")
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatalf("/metrics over https: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics over https as alice: %d", resp.StatusCode)
	}
}
