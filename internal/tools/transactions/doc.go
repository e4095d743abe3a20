// Package transactions is `silkworm transactions`, Kafka's
// kafka-transactions.sh: it lists and describes transactions and the
// producers of a partition, aborts a hanging transaction and finds
// hanging ones, over ListTransactions, DescribeTransactions,
// DescribeProducers and WriteTxnMarkers.
//
// The command line is Kafka's: global options, then a command and its
// options:
//
//	silkworm transactions --bootstrap-server HOST:PORT [--command-config FILE] COMMAND ...
//	  list [--duration-filter MS] [--transactional-id-pattern REGEX]
//	  describe --transactional-id ID
//	  describe-producers --topic T --partition P [--broker-id N]
//	  abort --topic T --partition P (--start-offset O |
//	        --producer-id ID --producer-epoch E --coordinator-epoch C)
//	  find-hanging (--broker-id N | --topic T [--partition P]) [--max-transaction-timeout MIN]
//
// Output is Kafka's ToolsUtils.prettyPrintTable: a header row and one row
// per item, every column padded to its widest value and followed by a tab,
// with Kafka's column names. Where Kafka prints in hash order, rows are
// sorted (list: by coordinator then transactional id; describe-producers:
// by producer id; find-hanging: by topic, partition and producer id).
// find-hanging follows Kafka's FindHangingTransactionsCommand: producers
// with an open transaction whose last write is older than
// --max-transaction-timeout minutes are candidates, and a candidate hangs
// when no coordinator knows its producer id, or its transactional id's
// ongoing transaction does not include the partition.
//
// Run is the only entry point; nothing here keeps state between calls.
package transactions
