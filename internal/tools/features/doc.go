// Package features is `silkworm features`, Kafka's kafka-features.sh
// (tools/FeatureCommand.java), for the feature flags of KIP-584:
//
//   - describe: one line per feature the broker supports (ApiVersions),
//     "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\t
//     SupportedMaxVersion: 4.2-IV1\tFinalizedVersionLevel: 4.2-IV1\tEpoch: 12";
//   - upgrade, downgrade (--unsafe), disable: UpdateFeatures with
//     --feature name=level, --metadata 3.9 (deprecated) or
//     --release-version 4.0-IV3, and --dry-run (ValidateOnly), printing
//     "metadata.version was upgraded to 25." or "Could not upgrade ...";
//   - version-mapping and feature-dependencies: offline look-ups in the
//     tables below.
//
// The metadata.version names and the feature levels each release version
// sets (versionMapping) follow Kafka 4.2's MetadataVersion and Features;
// the levels share.version and streams.version default to are this
// package's reading of Kafka 4.2 (both on from 4.2-IV0).
//
// Kafka's tool parses with argparse4j; Silkworm's takes the same options
// through the shared Kafka-style parser, so its --help is an option table.
//
// Run is the only command-line entry point; nothing here keeps state
// between calls.
//
// The types here are plain values: safe for concurrent reads, not for
// concurrent changes.
package features
