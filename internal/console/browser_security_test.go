package console_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// fillAndSubmit sets the form controls named by their data-test attribute and
// submits the form from JavaScript, as a user typing and pressing Enter.
func fillAndSubmit(t *testing.T, b context.Context, form string, values map[string]string) {
	t.Helper()
	var js strings.Builder
	js.WriteString("(() => {")
	for k, v := range values {
		fmt.Fprintf(&js, `{ const e = document.querySelector('[data-test=%q]'); if (!e) throw new Error("no control %s"); e.value = %q; e.dispatchEvent(new Event("change")); }`, k, k, v)
	}
	fmt.Fprintf(&js, `document.querySelector('[data-test=%q]').requestSubmit(); return true; })()`, form)
	evalOnPage[bool](t, b, js.String())
}

// screenshotClean is screenshot without the toasts earlier pages left.
func screenshotClean(t *testing.T, b context.Context, name string) {
	t.Helper()
	evalOnPage[bool](t, b, `document.getElementById("toasts").replaceChildren(); true`)
	screenshot(t, b, name)
}

// TestBrowserSecurityPages: the ACL, SCRAM user and quota pages create
// what a Kafka client then sees, and the bench page lists a run and frames
// its report; no page logs a console error. Without an authorizer the ACL
// page shows Kafka's error instead of failing.
func TestBrowserSecurityPages(t *testing.T) {
	benchDir := filepath.Join(t.TempDir(), "bench-results")
	started := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	writeBenchRun(t, benchDir, "20261130-093000", "quick", started)
	u, bootstrap := startConsole(t, append(aclAuthorizer, "silkworm.console.bench.dir="+benchDir)...)
	b := newBrowser(t)

	// ACLs: create one from the form; the broker has it.
	loadPage(t, b, u+"/#/acls")
	fillAndSubmit(t, b, "acl-form", map[string]string{
		"acl-principal": "User:carol", "acl-host": "*", "acl-permission": "Allow", "acl-operation": "Write",
		"acl-resourceType": "Topic", "acl-resourceName": "payments", "acl-patternType": "Prefixed",
	})
	want := apiACL{"User:carol", "*", "ALLOW", "WRITE", "TOPIC", "payments", "PREFIXED"}
	pollUntil(t, "the ACL on the broker", func() bool { return containsACL(brokerACLs(t, bootstrap), want) })
	waitJS(t, b, `document.querySelector('[data-test=acl-list]').textContent.includes("User:carol")`)
	screenshotClean(t, b, "acls")

	// SCRAM users.
	loadPage(t, b, u+"/#/users")
	fillAndSubmit(t, b, "user-form", map[string]string{
		"user-name": "carol", "user-password": "carol-secret", "user-mechanism": "SCRAM-SHA-512", "user-iterations": "4096",
	})
	pollUntil(t, "carol's SCRAM-SHA-512 credential on the broker", func() bool {
		return brokerSCRAM(t, bootstrap, "carol")["SCRAM-SHA-512"] == 4096
	})
	waitJS(t, b, `document.querySelector('[data-test=user-list]').textContent.includes("carol")`)
	screenshotClean(t, b, "users")

	// Quotas.
	loadPage(t, b, u+"/#/quotas")
	fillAndSubmit(t, b, "quota-form", map[string]string{
		"quota-entity-type": "user", "quota-entity-name": "carol", "quota-client-id": "", "quota-key": "producer_byte_rate", "quota-value": "1048576",
	})
	carol := "carol"
	pollUntil(t, "carol's quota on the broker", func() bool {
		return brokerQuotas(t, bootstrap, kadm.ClientQuotaEntity{{Type: "user", Name: &carol}})["producer_byte_rate"] == 1048576
	})
	waitJS(t, b, `document.querySelector('[data-test=quota-list]').textContent.includes("user=carol")`)
	screenshotClean(t, b, "quotas")

	// Bench: the run is listed, and its report loads in the frame.
	loadPage(t, b, u+"/#/bench")
	waitJS(t, b, `!!document.querySelector('a[href="#/bench/20261130-093000"]')`)
	screenshotClean(t, b, "bench")
	loadPage(t, b, u+"/#/bench/20261130-093000")
	waitJS(t, b, `(() => { const f = document.querySelector('[data-test=bench-report]');
		return f.dataset.loaded === "1" && !!f.contentDocument && f.contentDocument.body.textContent.includes("quick profile"); })()`)
	screenshotClean(t, b, "bench-report")

	// Without an authorizer: Kafka's error on the page, no console error.
	shared, _ := startConsole(t)
	loadPage(t, b, shared+"/#/acls")
	waitJS(t, b, `document.querySelector('[data-test=acl-list]').textContent.includes("SECURITY_DISABLED")`)
	for _, p := range []string{"#/users", "#/quotas", "#/bench"} {
		loadPage(t, b, shared+"/"+p)
	}
	// Fails on any console error the last page logged.
	loadPage(t, b, shared+"/#/groups")
}
