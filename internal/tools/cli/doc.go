// Package cli is the plumbing shared by Silkworm's Kafka command-line tools
// (internal/tools/...): a small option parser that reads Kafka's option syntax,
// Java-style client properties files, and the mapping of Kafka client property
// names onto franz-go (kgo) client options.
//
// # Options
//
// Kafka's scripts take long options with a separate value (--topic t), the
// --topic=t form, boolean switches (--from-beginning), options repeated to
// build a list (--property a=b --property c=d) and options that take several
// values in one go (--producer-props a=b c=d). The standard library flag
// package cannot do the last one, so a tool declares its options on a [Parser]:
//
//	p := cli.NewParser("consumer-perf-test", "This tool is used to verify the consumer performance.")
//	topic := p.String("topic", "topic", "The topic to consume from.", "")
//	n := p.Int64("messages", "count", "REQUIRED: The number of messages to consume.", 0)
//	if err := p.Parse(args); err != nil { ... } // cli.ErrHelp after --help
//	if err := p.Require("messages"); err != nil { ... }
//
// # Client properties
//
// [LoadProps] reads a properties file (--command-config, --producer.config,
// --consumer.config); [ParseProps] reads key=value arguments. [ClientOpts]
// turns a property set into kgo options for a producer, consumer or admin
// client; every property it accepts is listed in its documentation, and any
// other name is an error that names it. [NewClient] builds the client and
// checks that a bootstrap server answers, so an unreachable cluster is
// reported instead of hanging.
//
// # Security
//
// security.protocol and the ssl.* and sasl.* properties work as in Kafka's
// Java client, for every tool and every property source: SSL and SASL_SSL
// dial with TLS built by security.NewClientTLS (JKS, PKCS12 or PEM
// truststores and keystores, mTLS, hostname verification), SASL_PLAINTEXT
// and SASL_SSL log in with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or
// OAUTHBEARER using the credentials of sasl.jaas.config (parsed by
// sasl.ParseJAAS). OAUTHBEARER makes Kafka's unsecured, unsigned tokens
// ([UnsecuredLogin]); fetching tokens from an identity provider is not
// supported.
//
// Nothing in this package keeps global state; a Parser is not safe for
// concurrent use, the functions are.
package cli
