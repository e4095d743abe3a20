// Package console is silkworm's web console: an HTTP server, started by the
// broker on silkworm.console.listener, that serves an embedded single-page
// application (assets/, plain JS, no external libraries) and a JSON API
// under /api/.
//
// The console talks to the cluster over the Kafka protocol: every API
// request is served by a kgo/kadm client connected to one of the broker's
// own listeners, acting as the logged-in user, so ACLs and quotas apply to
// what a console user does. When that listener uses SASL (PLAIN or SCRAM)
// the console asks for a user name and password and checks them by opening
// a SASL connection as that user; sessions are random HttpOnly cookies
// with an idle expiry, and state-changing requests carry a CSRF header
// token. A console without authentication refuses to start on a
// non-loopback address.
//
// The only broker state it reads directly is the Prometheus registry
// (Config.Gatherer), sampled every few seconds into a ring buffer for the
// live rate charts. The broker imports this package, never the reverse.
//
// Endpoints register themselves from init() with handle; pages are files
// assets/pages/*.js that call Console.page and are loaded in name order by
// index.html, so adding a page edits no shared file.
package console
