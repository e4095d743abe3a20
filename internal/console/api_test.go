package console_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// apiClient calls the console's JSON API as a browser would: with the
// session cookie and the CSRF header token.
type apiClient struct {
	t    *testing.T
	base string
	hc   *http.Client
	csrf string
}

func newAPIClient(t *testing.T, base string) *apiClient {
	t.Helper()
	jar := &cookieJar{}
	a := &apiClient{t: t, base: base, hc: &http.Client{Jar: jar}}
	var s struct {
		CSRF string `json:"csrf"`
	}
	a.do("GET", "/api/session", nil, &s)
	a.csrf = s.CSRF
	return a
}

// do calls the API and decodes the answer into out; it returns the HTTP
// status and the error message of an error answer.
func (a *apiClient) do(method, path string, body, out any) (int, string) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if a.csrf != "" {
		req.Header.Set("X-Console-CSRF", a.csrf)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(raw, &e)
		return resp.StatusCode, e.Error
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			a.t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, ""
}

// must calls the API and fails the test unless it answers 2xx.
func (a *apiClient) must(method, path string, body, out any) {
	a.t.Helper()
	if code, msg := a.do(method, path, body, out); code >= 300 {
		a.t.Fatalf("%s %s: %d %s", method, path, code, msg)
	}
}

// cookieJar keeps cookies by name, ignoring domain and path: enough for
// one console.
type cookieJar struct{ cookies map[string]*http.Cookie }

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) {
	if j.cookies == nil {
		j.cookies = map[string]*http.Cookie{}
	}
	for _, c := range cs {
		if c.MaxAge < 0 {
			delete(j.cookies, c.Name)
			continue
		}
		j.cookies[c.Name] = c
	}
}

func (j *cookieJar) Cookies(*url.URL) []*http.Cookie {
	var out []*http.Cookie
	for _, c := range j.cookies {
		out = append(out, c)
	}
	return out
}

// TestAPICluster checks the overview's data: the broker, the controller,
// its API versions and its log dir.
func TestAPICluster(t *testing.T) {
	u, _ := startConsole(t)
	a := newAPIClient(t, u)
	var c struct {
		ClusterID  string `json:"clusterId"`
		Controller int32  `json:"controller"`
		Brokers    []struct {
			ID      int32 `json:"id"`
			APIs    int   `json:"apis"`
			LogDirs []struct {
				Dir        string `json:"dir"`
				TotalBytes int64  `json:"totalBytes"`
			} `json:"logDirs"`
		} `json:"brokers"`
		LogDirsError  string `json:"logDirsError"`
		VersionsError string `json:"versionsError"`
	}
	a.must("GET", "/api/cluster", nil, &c)
	if c.ClusterID == "" || c.Controller != 1 || len(c.Brokers) != 1 || c.Brokers[0].ID != 1 || c.LogDirsError != "" || c.VersionsError != "" {
		t.Fatalf("cluster: %+v", c)
	}
	if b := c.Brokers[0]; b.APIs < 40 || len(b.LogDirs) != 1 || b.LogDirs[0].Dir == "" || b.LogDirs[0].TotalBytes <= 0 {
		t.Fatalf("broker: %+v", b)
	}
	var rates struct {
		Series []struct {
			Metric string `json:"metric"`
		} `json:"series"`
	}
	a.must("GET", "/api/rates", nil, &rates)
	if len(rates.Series) != 5 || rates.Series[0].Metric != "kafka_server_brokertopicmetrics_messagesin_total" {
		t.Fatalf("rates: %+v", rates)
	}
}
