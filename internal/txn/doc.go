// Package txn is the transaction coordinator (KIP-98): it maps a
// transactional id to its producer id and epoch, tracks which partitions
// and group offsets a transaction touched, and drives each transaction
// through Kafka's states, writing COMMIT or ABORT markers through its Host
// when the producer ends it. It imports no network code; the broker's
// handlers (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn)
// call it with decoded kmsg requests, and answers the administrative
// DescribeTransactions and ListTransactions.
//
// # States
//
// Empty -> Ongoing (AddPartitionsToTxn/AddOffsetsToTxn) -> PrepareCommit or
// PrepareAbort (EndTxn, or an abort by InitProducerId or by the timeout)
// -> markers written to every partition -> CompleteCommit or
// CompleteAbort -> Ongoing again with the next AddPartitionsToTxn. Each
// change is written to __transaction_state before it is acknowledged.
// EndTxn answers once the markers are written (Kafka answers after the
// Prepare record and writes the markers in the background); when a marker
// cannot be written the transaction stays in Prepare*, is retried every
// RetryBackoff, and other requests for that id get CONCURRENT_TRANSACTIONS.
//
// Epochs: InitProducerId gives a new producer id with epoch 0, or bumps
// the epoch (a new producer id when it would overflow). A transaction
// still Ongoing is aborted first, with the bumped epoch, so the previous
// producer (a zombie) is fenced on every partition it wrote to and at the
// coordinator. A transaction open longer than its timeout is aborted the
// same way by a background check every AbortCheckInterval
// (transaction.abort.timed.out.transaction.cleanup.interval.ms); that
// check first loads every __transaction_state partition this node leads,
// so transactions left by a failed coordinator are completed or timed out
// without waiting for their producer.
//
// # KIP-890: verification and epoch bumps
//
// Part 1: a partition leader about to append a producer's first
// transactional batch asks the coordinator whether the partition is in
// the ongoing transaction (AddPartitionsToTxn v4+ with verify_only, from
// brokers: AddPartitionsToTxn and VerifyPartition). A partition that is
// not gets TRANSACTION_ABORTABLE, a stale epoch PRODUCER_FENCED.
//
// Part 2 (transaction version 2): Produce v12+ and TxnOffsetCommit v5 add
// their partition through the leader (AddPartitionsToTxn v5, not
// verify-only), and EndTxn v5 bumps the epoch on every transaction end
// (a new producer id when it is exhausted): markers carry the bumped
// epoch, the response names it, and a retry with the previous epoch gets
// the same answer. An abort with no transaction ongoing is accepted and
// bumps the epoch. A state written by such an EndTxn is Kafka's value
// version 1 with client transaction version 2 and the previous producer
// id, so that a retried EndTxn is recognised after a failover too.
//
// # Administration
//
// DescribeTransaction and List answer DescribeTransactions and
// ListTransactions (state, producer id, duration and id filters) for the
// ids this node coordinates.
//
// # Storage: __transaction_state
//
// A transactional id lives in partition abs(javaStringHashCode(id)) % N
// of the compacted topic __transaction_state, as Kafka's records: key
// kmsg.TxnMetadataKey version 0 (the id), value kmsg.TxnMetadataValue
// version 0 (producer id and epoch, timeout, state, partitions,
// timestamps), or version 1 after an EndTxn v5 (see KIP-890 below). The coordinator of an id is the leader of its partition.
// A partition is loaded (replayed, the last record per id winning) on
// first use after this node became its leader, and again whenever its
// leader epoch changed since the load; transactions found in a Prepare
// state are completed then.
//
// # Locks
//
// Coordinator.mu guards the map of transactions and loaded partitions;
// each transaction has its own mu, held for a whole request including
// marker writes, so one id's requests run one at a time. Lock order:
// Coordinator.mu, then a transaction's mu; Host methods are called with a
// transaction's mu held (never Coordinator.mu, except StateLog).
package txn
