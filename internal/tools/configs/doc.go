// Package configs is `silkworm configs`, Kafka's kafka-configs.sh, for the
// topics, brokers, users, clients and ips entity types, with Kafka's
// options, checks and output.
//
// Topics and brokers: --describe prints
//
//	Dynamic configs for topic t are:
//	  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, DEFAULT_CONFIG:log.retention.ms=...}
//
// (All configs ... with --all), and --alter --add-config k=v,k2=[a,b]
// --delete-config k3 uses IncrementalAlterConfigs and prints "Completed
// updating config for topic t.".
//
// Users and clients (--entity-type users|clients with --entity-name or
// --entity-default, the two types together for a user's client, or the
// --user, --client, --user-defaults and --client-defaults shorthands):
// quotas (producer_byte_rate, consumer_byte_rate, request_percentage,
// controller_mutation_rate) through Describe/AlterClientQuotas, and a
// user's SCRAM credentials (SCRAM-SHA-256=[iterations=8192,password=p],
// salted by the tool, 4096 iterations by default) through
// Describe/AlterUserScramCredentials:
//
//	Quota configs for user-principal 'alice', client-id 'c1' are producer_byte_rate=1024.0
//	SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=8192
//
// Ips (--entity-type ips, --ip, --ip-defaults): connection_creation_rate.
//
// The text is that of Kafka 4.x's ConfigCommand. Where Kafka prints from
// hash maps, this tool sorts: quota entities by their text, quota values
// by name, SCRAM users by name and mechanisms by type.
//
// Run is the entry point; nothing here keeps state between calls.
package configs
