package console_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// evalOnPage runs a JavaScript expression in the tab and decodes its value.
func evalOnPage[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// clickOnPage clicks the element sel (a CSS selector) from JavaScript.
func clickOnPage(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	evalOnPage[bool](t, ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) throw new Error("no element %s"); e.click(); return true; })()`, sel, sel))
}

// TestBrowserGroups: a consumer group's lag on the group page equals what
// consumer-groups --describe prints, and resetting its offsets to earliest
// from the page moves the committed offsets.
func TestBrowserGroups(t *testing.T) {
	u, bootstrap := startConsole(t)
	const topic, group = "bgroups-orders", "bgroups-billing"
	f := newGroupFixture(t, bootstrap, topic, group, false, [3]int{4, 1, 0})
	b := newBrowser(t)

	loadPage(t, b, u+"/#/groups")
	if !evalOnPage[bool](t, b, fmt.Sprintf(`!!document.querySelector('a[href="#/groups/%s"]')`, group)) {
		t.Fatalf("the groups list has no link to %s", group)
	}
	screenshot(t, b, "groups")

	loadPage(t, b, u+"/#/groups/"+group)
	waitJS(t, b, `document.querySelectorAll('[data-lag]').length === 3 && document.body.textContent.includes("console-test-member")`)
	onPage := evalOnPage[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('[data-lag]')].map(e => [e.dataset.lag, e.textContent]))`)
	tool := toolLags(t, bootstrap, group)
	if len(onPage) != len(tool) || len(tool) != 3 {
		t.Fatalf("lag on the page %v, consumer-groups --describe %v", onPage, tool)
	}
	for k, lag := range tool {
		if onPage[k] != strconv.FormatInt(lag, 10) {
			t.Fatalf("lag of %s: page %q, consumer-groups --describe %d (page %v)", k, onPage[k], lag, onPage)
		}
	}
	if total := evalOnPage[string](t, b, `document.querySelector('[data-field="Total lag"]').textContent`); total != "5" {
		t.Fatalf("total lag on the page %q, want 5", total)
	}
	waitJS(t, b, `!!document.querySelector('[data-test=lag-chart] svg polyline')`)
	screenshot(t, b, "group")

	// Reset to earliest: preview, then execute, once the group is empty.
	f.closeMember(t, group)
	loadPage(t, b, u+"/#/groups/"+group)
	evalOnPage[bool](t, b, `document.querySelector('[data-test=reset-to]').value = "earliest"; true`)
	clickOnPage(t, b, `[data-test=reset-preview-button]`)
	waitJS(t, b, `document.querySelector('[data-test=reset-execute]').style.display !== "none"`)
	if c := f.committed(t, group); c[topic+"/0"] != 10 {
		t.Fatalf("the preview moved the offsets: %v", c)
	}
	screenshot(t, b, "group-reset")
	clickOnPage(t, b, `[data-test=reset-execute]`)
	waitJS(t, b, `!!document.querySelector('.confirm-ok')`)
	clickOnPage(t, b, `.confirm-ok`)
	pollUntil(t, "the committed offsets at the log start", func() bool {
		c := f.committed(t, group)
		return len(c) == 3 && c[topic+"/0"] == 0 && c[topic+"/1"] == 0 && c[topic+"/2"] == 0
	})
	waitJS(t, b, `document.querySelector('[data-field="Total lag"]').textContent === "35"`)
	// Fails on any console error the interactions logged.
	loadPage(t, b, u+"/#/groups")
}
