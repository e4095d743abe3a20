package console_test

// The browser test harness: a real broker with its console, driven by one
// headless Debian chromium per test binary (chromedp). Engineer B's page
// tests (browser_groups_test.go, ...) use the same helpers.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/silkworm/silkworm/internal/broker"
	"github.com/silkworm/silkworm/internal/config"
)

func TestMain(m *testing.M) {
	code := m.Run()
	shared.close()
	browser.close()
	os.Exit(code)
}

// ---- brokers ----------------------------------------------------------

// consoleBroker is a running broker with its console.
type consoleBroker struct {
	b         *broker.Broker
	url       string
	bootstrap string
	metrics   string // host:port of /metrics, "" when off
}

func (cb *consoleBroker) close() {
	if cb != nil && cb.b != nil {
		cb.b.Close()
	}
}

// sharedBroker is the broker startConsole without overrides returns, one
// per test binary (closed by TestMain): tests on it use their own topic
// names.
type sharedBroker struct {
	once sync.Once
	dir  string
	cb   *consoleBroker
	err  error
}

func (s *sharedBroker) close() {
	if s.cb != nil {
		s.cb.close()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

var shared sharedBroker

// startBroker starts a broker on 127.0.0.1 with a kernel-chosen port for
// its PLAINTEXT listener and for its console, its data in dir, and the
// overrides ("key=value") applied last.
func startBroker(dir string, overrides ...string) (*consoleBroker, error) {
	props := []string{
		"node.id=1",
		"listeners=PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + dir,
		"silkworm.console.listener=127.0.0.1:0",
		"offsets.topic.replication.factor=1",
		"group.initial.rebalance.delay.ms=0",
	}
	props = append(props, overrides...)
	cfg, err := config.Load("", props)
	if err != nil {
		return nil, fmt.Errorf("broker config: %w", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("SILKWORM_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b, err := broker.New(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := b.Start(); err != nil {
		b.Close() // Start closed it if an HTTP listener failed; Close is idempotent
		return nil, err
	}
	bootstrap := b.ListenerAddr("PLAINTEXT")
	if bootstrap == "" {
		bootstrap = b.Addr()
	}
	return &consoleBroker{b: b, url: b.ConsoleURL(), bootstrap: bootstrap, metrics: b.MetricsAddr()}, nil
}

// startConsole runs a real broker with its web console and returns the
// console's URL (http://127.0.0.1:port) and the address of the broker's
// PLAINTEXT listener (else its first listener) for Kafka clients.
// Overrides are broker config "key=value". Without overrides the broker is
// shared by every test of the binary (use your own topic names); with
// overrides it is the test's own and closed when the test ends.
func startConsole(t *testing.T, opts ...string) (consoleURL, bootstrap string) {
	t.Helper()
	if len(opts) == 0 {
		shared.once.Do(func() {
			shared.dir, shared.err = os.MkdirTemp("", "silkworm-console-test-")
			if shared.err != nil {
				return
			}
			shared.cb, shared.err = startBroker(shared.dir)
		})
		if shared.err != nil {
			t.Fatalf("start shared broker: %v", shared.err)
		}
		return shared.cb.url, shared.cb.bootstrap
	}
	cb, err := startBroker(t.TempDir(), opts...)
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(cb.close)
	return cb.url, cb.bootstrap
}

// ---- browser ------------------------------------------------------------

// sharedBrowser is the one chromium of the test binary.
type sharedBrowser struct {
	once   sync.Once
	ctx    context.Context // browser context; tabs are made from it
	cancel context.CancelFunc
	err    error
}

var browser sharedBrowser

func (s *sharedBrowser) close() {
	if s.cancel != nil {
		s.cancel()
	}
}

// chromiumPath is Debian's chromium, or whatever chromium/chrome is on
// PATH.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func (s *sharedBrowser) start() error {
	s.once.Do(func() {
		path := chromiumPath()
		if path == "" {
			s.err = fmt.Errorf("no chromium on PATH (Debian: apt-get install chromium)")
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.WindowSize(1280, 900),
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		// Start the browser now, with a blank first tab.
		if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
			bcancel()
			acancel()
			s.err = fmt.Errorf("start chromium %s: %w", path, err)
			return
		}
		s.ctx = bctx
		s.cancel = func() { bcancel(); acancel() }
	})
	return s.err
}

// tabKey keys a tab's console log in its context.
type tabKey struct{}

// tabLog collects a tab's console errors and uncaught exceptions.
type tabLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *tabLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.errs
	l.errs = nil
	return e
}

// newBrowser opens a new tab in the binary's headless chromium and closes
// it when the test ends. Without chromium the test is skipped, or fails
// under CI=true.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if err := browser.start(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser tests need chromium under CI: %v", err)
		}
		t.Skipf("browser tests skipped: %v", err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	t.Cleanup(cancel)
	tl := &tabLog{}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			// The browser logs failed requests (a 401 or 403 the page
			// handles) with source "network"; those are not page errors.
			if (m.Type == chromedp.ConsoleError || m.IsException()) && m.Source != "network" {
				tl.mu.Lock()
				tl.errs = append(tl.errs, m.String())
				tl.mu.Unlock()
			}
		}
	}()
	return context.WithValue(ctx, tabKey{}, tl)
}

// loadPage opens url in the tab (a change of the #/route only re-routes
// the loaded console), waits until the page marks itself ready
// (document.body.dataset.ready, set by app.js once the page's first render
// finished), and fails the test on any console error or uncaught
// exception since the last loadPage.
func loadPage(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	tl, _ := ctx.Value(tabKey{}).(*tabLog)
	if tl != nil {
		tl.take()
	}
	cur, _ := chromedp.Run(ctx, chromedp.Location())
	target, err := url.Parse(u)
	if err != nil {
		t.Fatalf("loadPage %s: %v", u, err)
	}
	same := false
	if c, err := url.Parse(cur); err == nil && c.Scheme == target.Scheme && c.Host == target.Host && c.Path == target.Path && c.RawQuery == target.RawQuery {
		same = true
	}
	if same {
		js := fmt.Sprintf(`delete document.body.dataset.ready; Console.navigate(%q); true`, "#"+target.Fragment)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
			t.Fatalf("loadPage %s: %v", u, err)
		}
	} else if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		t.Fatalf("loadPage %s: %v", u, err)
	}
	waitReady(t, ctx, u)
	if tl != nil {
		if errs := tl.take(); len(errs) > 0 {
			t.Fatalf("page %s logged errors:\n%s", u, strings.Join(errs, "\n"))
		}
	}
}

// waitReady waits until the console page has finished its first render.
func waitReady(t *testing.T, ctx context.Context, what string) string {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	ready, err := chromedp.Run(pctx, chromedp.Poll[string](`document.body && document.body.dataset.ready`, chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatalf("page %s never became ready: %v", what, err)
	}
	return ready
}

// waitJS polls a JavaScript boolean expression in the tab until it is
// true.
func waitJS(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(pctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("main").innerText + "\n" + document.getElementById("toasts").innerText`))
		t.Fatalf("waiting for %s: %v\npage:\n%s", expr, err, body)
	}
}

// screenshot writes docs/console/<name>.png when SILKWORM_SCREENSHOTS=1.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("SILKWORM_SCREENSHOTS") != "1" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
