package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/bench"
	"github.com/silkworm/silkworm/internal/console"
)

// writeBenchRun writes what `silkworm bench --out dir/name` writes, for a
// run of one point of the scenario "produce-basic" started at started.
func writeBenchRun(t *testing.T, dir, name, profile string, started time.Time) {
	t.Helper()
	res := &bench.Results{
		Version: bench.ResultsVersion, Started: started, Finished: started.Add(90 * time.Second),
		Profile: profile, Cluster: "embedded, 1 broker", Host: "test",
		Scenarios: []*bench.Scenario{{Name: "produce-basic", Title: "Producer throughput"}},
		Points:    []bench.PointResult{{Scenario: "produce-basic", Label: "p1", Error: "boom"}},
	}
	if err := res.WriteAll(filepath.Join(dir, name)); err != nil {
		t.Fatalf("write bench run: %v", err)
	}
}

// benchConsole serves a console (no broker needed: the bench page reads
// files only) over httptest with benchDir.
func benchConsole(t *testing.T, benchDir string) *pageAPI {
	t.Helper()
	srv, err := console.New(console.Config{Listener: "127.0.0.1:0", Bootstrap: "127.0.0.1:1", BenchDir: benchDir})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return newPageAPI(t, hs.URL)
}

func TestBenchAPI(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "bench-results")
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	writeBenchRun(t, dir, "older", "quick", now.Add(-time.Hour))
	writeBenchRun(t, dir, "newer", "full", now)
	// Not runs: a directory without bench output, a file, a hidden dir.
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	writeBenchRun(t, dir, ".hidden", "quick", now)
	// A secret outside the bench dir, and a link to it inside a run.
	secret := filepath.Join(root, "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o644)
	if err := os.Symlink(secret, filepath.Join(dir, "newer", "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../secret.txt", filepath.Join(dir, "newer", "leak2.txt")); err != nil {
		t.Fatal(err)
	}
	api := benchConsole(t, dir)

	var list struct {
		Dir  string
		Runs []struct {
			Name, Profile  string
			Started        time.Time
			Scenarios      []string
			Points, Failed int
			HasReport      bool
		}
	}
	api.must("GET", "/api/bench", nil, &list)
	if list.Dir != dir || len(list.Runs) != 2 || list.Runs[0].Name != "newer" || list.Runs[1].Name != "older" {
		t.Fatalf("runs: %+v", list)
	}
	r := list.Runs[0]
	if r.Profile != "full" || !r.Started.Equal(now) || len(r.Scenarios) != 1 || r.Scenarios[0] != "produce-basic" || r.Points != 1 || r.Failed != 1 || !r.HasReport {
		t.Fatalf("newest run: %+v", r)
	}

	var run struct {
		Name  string
		Files []string
	}
	api.must("GET", "/api/bench/newer", nil, &run)
	if !strings.Contains(strings.Join(run.Files, ","), bench.FileHTML) {
		t.Fatalf("run files: %+v", run)
	}

	// The report, with headers that let the console frame it and nothing
	// run in it.
	resp, err := http.Get(api.base + "/api/bench/newer/" + bench.FileHTML)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "silkworm bench") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("report: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("report CSP %q", csp)
	}
	if xfo := resp.Header.Get("X-Frame-Options"); xfo != "SAMEORIGIN" {
		t.Fatalf("report X-Frame-Options %q", xfo)
	}

	// Nothing outside a run's directory is served, however it is named.
	for _, p := range []string{
		"/api/bench/newer/leak.txt",
		"/api/bench/newer/leak2.txt",
		"/api/bench/newer/..%2F..%2Fsecret.txt",
		"/api/bench/newer/%2E%2E/%2E%2E/secret.txt",
		"/api/bench/..%2F/secret.txt",
		"/api/bench/%2E%2E/secret.txt",
		"/api/bench/.hidden/" + bench.FileHTML,
		"/api/bench/newer/",
		"/api/bench/nope/" + bench.FileHTML,
		"/api/bench/empty",
	} {
		resp, err := http.Get(api.base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(body), "top secret") {
			t.Fatalf("GET %s: %d %q", p, resp.StatusCode, body)
		}
	}

	// No bench dir yet: no runs, no error.
	api = benchConsole(t, filepath.Join(root, "missing"))
	api.must("GET", "/api/bench", nil, &list)
	if len(list.Runs) != 0 {
		t.Fatalf("runs of a missing dir: %+v", list)
	}
}
