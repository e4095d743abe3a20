package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds a headless-capable Chromium: $CHROMIUM, then the
// usual names on $PATH.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestReportInBrowser renders the fixture report in headless Chromium at
// a laptop's 1280 px: the page must not scroll sideways and the cells
// must be aligned as the CSS says. With SILKWORM_SCREENSHOTS=1 it writes
// the screenshot to docs/bench/report.png. Without Chromium it skips,
// except under CI=true, where it fails.
func TestReportInBrowser(t *testing.T) {
	exe := chromiumPath()
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found (CI=true): install it or set CHROMIUM")
		}
		t.Skip("chromium not found; set CHROMIUM or install it to run this test")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, FileHTML)
	r := fixtureResults(t)
	if err := writeFileAtomic(page, r.WriteHTML); err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second) // a guard against a hang
	defer cancelTimeout()

	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("chromium: %s: %v", js, err)
		}
		return v
	}
	scrollWidth := eval(`String(document.documentElement.scrollWidth)`)
	clientWidth := eval(`String(document.documentElement.clientWidth)`)
	numAlign := eval(`getComputedStyle(document.querySelector('td.num')).textAlign`)
	textAlign := eval(`getComputedStyle(document.querySelector('td.text')).textAlign`)
	bodyFont := eval(`getComputedStyle(document.body).fontFamily`)
	if sw, cw := atoi(scrollWidth), atoi(clientWidth); sw > cw || cw == 0 {
		t.Errorf("the report scrolls sideways at 1280 px: scrollWidth %s > clientWidth %s", scrollWidth, clientWidth)
	}
	if numAlign != "right" || textAlign != "left" {
		t.Errorf("td.num aligned %q, td.text %q; want right and left", numAlign, textAlign)
	}
	if bodyFont == "" {
		t.Error("no body font")
	}
	if os.Getenv("SILKWORM_SCREENSHOTS") == "1" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		out := filepath.Join("..", "..", "docs", "bench", "report.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
