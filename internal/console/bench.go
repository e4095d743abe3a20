package console

// Bench reports: the bench page's API (assets/pages/bench.js).
//
//	GET /api/bench               the `silkworm bench` runs in Config.BenchDir, newest first
//	GET /api/bench/{run}         one run's summary and files
//	GET /api/bench/{run}/{file...}  a file of a run (report.html, results.json, ...), read-only
//
// A run is a directory directly under BenchDir holding what
// bench.Results.WriteAll writes (results.json, results.csv, summary.md,
// report.html). Files are opened through os.Root, so no name (.., an
// absolute path, a symbolic link) reaches outside the run's directory. The
// report is served with a Content-Security-Policy of its own that lets the
// console frame it and forbids scripts in it (the page frames it with
// sandbox="allow-same-origin" too).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/silkworm/silkworm/internal/bench"
)

func init() {
	handle("GET /api/bench", serveBenchRuns)
	handle("GET /api/bench/{run}", serveBenchRun)
	handle("GET /api/bench/{run}/{file...}", serveBenchFile)
}

// benchRun is one run as the bench page lists it. Started is the run's
// start from results.json, or its directory's modification time when the
// results cannot be read (Error then says why).
type benchRun struct {
	Name        string    `json:"name"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished,omitzero"`
	Profile     string    `json:"profile"`
	Cluster     string    `json:"cluster"`
	Host        string    `json:"host"`
	Interrupted bool      `json:"interrupted"`
	Scenarios   []string  `json:"scenarios"`
	Points      int       `json:"points"`
	Failed      int       `json:"failed"` // points with an error
	Skipped     int       `json:"skipped"`
	HasReport   bool      `json:"hasReport"`
	Files       []string  `json:"files,omitempty"` // only for one run
	Error       string    `json:"error,omitempty"`
}

// openBenchDir opens Config.BenchDir as a root; a missing directory is
// (nil, nil): no runs yet.
func (s *Server) openBenchDir() (*os.Root, error) {
	if s.cfg.BenchDir == "" {
		return nil, nil
	}
	root, err := os.OpenRoot(s.cfg.BenchDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bench dir: %w", err)
	}
	return root, nil
}

// validRunName refuses names that are not one directory entry.
func validRunName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`) && !strings.HasPrefix(name, ".")
}

// readRun reads the summary of run dir name under root; ok is false when
// the directory holds no bench output.
func readRun(root *os.Root, name string) (run benchRun, ok bool) {
	run = benchRun{Name: name, Scenarios: []string{}}
	dir, err := root.OpenRoot(name)
	if err != nil {
		return run, false
	}
	defer dir.Close()
	if st, err := dir.Stat(bench.FileHTML); err == nil && st.Mode().IsRegular() {
		run.HasReport = true
	}
	data, err := dir.ReadFile(bench.FileJSON)
	if err != nil {
		if !run.HasReport {
			return run, false
		}
		if st, err := dir.Stat("."); err == nil {
			run.Started = st.ModTime()
		}
		run.Error = "no " + bench.FileJSON
		return run, true
	}
	var res bench.Results
	if err := json.Unmarshal(data, &res); err != nil {
		if st, err := dir.Stat("."); err == nil {
			run.Started = st.ModTime()
		}
		run.Error = fmt.Sprintf("%s: %v", bench.FileJSON, err)
		return run, true
	}
	run.Started, run.Finished = res.Started, res.Finished
	run.Profile, run.Cluster, run.Host, run.Interrupted = res.Profile, res.Cluster, res.Host, res.Interrupted
	for _, sc := range res.Scenarios {
		run.Scenarios = append(run.Scenarios, sc.Name)
	}
	run.Points = len(res.Points)
	for _, p := range res.Points {
		switch {
		case p.Error != "":
			run.Failed++
		case p.Skipped != "":
			run.Skipped++
		}
	}
	if res.Version != bench.ResultsVersion {
		run.Error = fmt.Sprintf("results format version %d, this console reads %d", res.Version, bench.ResultsVersion)
	}
	return run, true
}

func serveBenchRuns(s *Server, w http.ResponseWriter, r *http.Request) {
	root, err := s.openBenchDir()
	if err != nil {
		writeError(w, err)
		return
	}
	runs := []benchRun{}
	if root != nil {
		defer root.Close()
		entries, err := fs.ReadDir(root.FS(), ".")
		if err != nil {
			writeError(w, fmt.Errorf("bench dir: %w", err))
			return
		}
		for _, e := range entries {
			if !e.IsDir() || !validRunName(e.Name()) {
				continue
			}
			if run, ok := readRun(root, e.Name()); ok {
				runs = append(runs, run)
			}
		}
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Started.Equal(runs[j].Started) {
			return runs[i].Started.After(runs[j].Started)
		}
		return runs[i].Name > runs[j].Name
	})
	writeJSON(w, http.StatusOK, map[string]any{"dir": s.cfg.BenchDir, "runs": runs})
}

func serveBenchRun(s *Server, w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("run")
	root, err := s.openBenchDir()
	if err != nil {
		writeError(w, err)
		return
	}
	if root == nil || !validRunName(name) {
		writeError(w, notFound("no bench run %q", name))
		return
	}
	defer root.Close()
	run, ok := readRun(root, name)
	if !ok {
		writeError(w, notFound("no bench run %q", name))
		return
	}
	if entries, err := fs.ReadDir(root.FS(), name); err == nil {
		for _, e := range entries {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				run.Files = append(run.Files, e.Name())
			}
		}
	}
	writeJSON(w, http.StatusOK, run)
}

// benchFileCSP lets the console frame a report (same origin) and allows
// nothing in it but its inline styles and images: no script runs in it.
const benchFileCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'self'"

func serveBenchFile(s *Server, w http.ResponseWriter, r *http.Request) {
	name, file := r.PathValue("run"), r.PathValue("file")
	root, err := s.openBenchDir()
	if err != nil {
		writeError(w, err)
		return
	}
	if root == nil || !validRunName(name) || file == "" || !fs.ValidPath(file) {
		writeError(w, notFound("no file %q in bench run %q", file, name))
		return
	}
	defer root.Close()
	dir, err := root.OpenRoot(name)
	if err != nil {
		writeError(w, notFound("no bench run %q", name))
		return
	}
	defer dir.Close()
	f, err := dir.Open(file)
	if err != nil {
		writeError(w, notFound("no file %q in bench run %q", file, name))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		writeError(w, notFound("no file %q in bench run %q", file, name))
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", benchFileCSP)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	if path.Ext(file) == ".md" || path.Ext(file) == ".csv" {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	http.ServeContent(w, r, path.Base(file), st.ModTime(), f)
}
