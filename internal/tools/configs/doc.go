// Package configs is `silkworm configs`, Kafka's kafka-configs.sh for the
// topics and brokers entity types: --describe prints
//
//	Dynamic configs for topic t are:
//	  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, DEFAULT_CONFIG:log.retention.ms=...}
//
// (All configs ... with --all), and --alter --add-config k=v,k2=[a,b]
// --delete-config k3 uses IncrementalAlterConfigs and prints "Completed
// updating config for topic t.".
package configs
