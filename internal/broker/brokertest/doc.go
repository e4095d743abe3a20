// Package brokertest starts an in-process single-node broker for the tests
// of packages that talk to it over the Kafka protocol (the tools'
// end-to-end tests). It is a thin wrapper over the public embed package,
// so that those tests exercise embed on every run: the broker runs with
// embed's defaults (DefaultConfig) and the test's overrides on top. Only
// tests import it.
package brokertest
