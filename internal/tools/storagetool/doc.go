// Package storagetool is `silkworm storage`, Kafka's kafka-storage.sh
// (core/.../StorageTool.scala, metadata/.../storage/Formatter.java), over
// Silkworm's data dir layout:
//
//		<log.dir>/meta.properties            version=1, cluster.id, node.id, directory.id
//		<first log dir>/__cluster_metadata-0  the metadata log (Raft) of a cluster node
//
//	  - random-uuid prints a new Kafka Uuid (22 characters of URL-safe base64);
//	  - format -t <cluster-id> -c server.properties writes meta.properties in
//	    every log dir of the configuration ("Formatting metadata directory
//	    /d with metadata.version 4.2-IV1."), refusing a formatted dir unless
//	    --ignore-formatted, as Kafka's Formatter;
//	  - info -c server.properties prints "Found log directory:", "Found
//	    metadata: {...}" and "Found problem(s):" as Kafka's infoCommand.
//
// Differences from Kafka: format writes no bootstrap.checkpoint. The
// feature levels of --release-version (its metadata.version and the levels
// that release starts with) go to a file in the metadata directory that
// the broker applies at its first start (metadata.BootstrapFeaturesFile);
// the latest release needs none. --feature is not supported.
// --standalone, --initial-controllers and --no-initial-controllers are
// checked as Kafka checks them but write no quorum snapshot: Silkworm's
// voter set is static. --initial-controllers' voters go to a file in the
// metadata directory (metadata.BootstrapVotersFile) that the node takes
// as its controller.quorum.voters; --standalone makes a single node.
// --add-scram's
// credentials go to a file in the metadata directory that the broker
// applies at its first start (metadata.BootstrapScramFile). The first log dir is the metadata directory (Silkworm ignores
// metadata.log.dir). An empty process.roles is Silkworm's combined
// broker,controller node.
//
// Run is the only command-line entry point; Format and Info are what it
// calls. Nothing here keeps state between calls.
//
// The types here are plain values: safe for concurrent reads, not for
// concurrent changes.
package storagetool
