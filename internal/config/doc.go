// Package config owns Silkworm's configuration: Kafka's server.properties for
// the broker and Kafka's topic-level configs, with Kafka's key names,
// defaults, precedence rules, bounds and the metadata DescribeConfigs needs.
//
// Broker configuration:
//
//   - ParseProperties reads the Java .properties format as Kafka does.
//   - Load reads a file, applies --override key=value entries (later wins),
//     checks every key and value and returns a *Broker with typed fields. All
//     errors are joined so a user sees every mistake at once: an unknown key
//     is an error naming it, an invalid value names the key, the value and
//     what is allowed. A key Kafka knows but Silkworm does not implement is
//     accepted and listed in Broker.Ignored for the caller to log once.
//   - The list of keys (kafkaBrokerKeys) is every broker key of Apache Kafka
//     3.0-3.9 plus 4.x additions, with Kafka's type, default, allowed values
//     and dynamic update mode. Keys starting with listener.name.,
//     config.providers., rlmm.config. and rsm.config. are accepted and
//     ignored. Keys starting with silkworm. are Silkworm's own.
//   - Precedence that spans keys follows Kafka: log.retention.ms, then
//     .minutes, then .hours; log.roll.ms, then log.roll.hours; log.dirs, then
//     log.dir; log.flush.interval.ms, then log.flush.scheduler.interval.ms;
//     node.id, alias broker.id.
//   - Dynamic broker configs (AlterConfigs on a broker) go through
//     ValidateBrokerDynamic and Broker.WithDynamic, which builds a new Broker.
//
// Topic configuration: TopicKeys lists every topic config with its type,
// documentation, the broker keys that supply its default and its validator.
// ResolveTopic computes a topic's effective Topic (override > broker setting
// > Kafka default); DescribeTopic and DescribeBroker produce DescribeConfigs
// entries with Kafka's sources and synonym chains.
//
// Everything here is pure computation on values: no goroutines, no I/O
// except Load reading its file. A *Broker is never modified after it is
// built and may be shared between goroutines.
package config
