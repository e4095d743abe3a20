// Package securitytest makes certificates for tests: an in-memory ECDSA
// certificate authority, leaf certificates it signs (usable by servers and
// by clients), and the files Kafka's ssl.* keys point at: PEM certificate
// and key files, a single-file PEM keystore (ssl.keystore.type=PEM), PKCS12
// and JKS keystores and truststores. Only tests import it.
//
// Everything is created fresh for each test (keys are generated, files go
// into directories the test names, usually t.TempDir()); failures stop the
// test with t.Fatal. Nothing here is a fixture that can expire between
// runs: certificates are valid from an hour ago for a week.
//
// A typical TLS listener test:
//
//	ca := securitytest.NewCA(t)
//	server := ca.Issue(t, "broker", "127.0.0.1", "localhost")
//	client := ca.Issue(t, "alice")
//	dir := t.TempDir()
//	keystore := server.KeystorePEM(t, dir, "broker")   // ssl.keystore.location
//	truststore := ca.WriteCertPEM(t, dir)              // ssl.truststore.location
package securitytest
