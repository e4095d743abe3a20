package broker

// Wiring of the transaction coordinator (internal/txn): the
// __transaction_state topic, created on first need like
// __consumer_offsets (replication factor min(
// transaction.state.log.replication.factor, live brokers)), and the
// adapters the coordinator uses: its state log, producer ids, and marker
// writes. A marker goes to a partition this broker leads by a local
// append (then, on __consumer_offsets, the group coordinator's pending
// transactional offsets are decided), and to other leaders with
// WriteTxnMarkers sent by a kgo client per broker. A marker append waits
// until the high watermark passes it (acks=all), bounded by
// markerTimeout.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/partition"
	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/storage"
	"github.com/silkworm/silkworm/internal/txn"
)

// transactionStateTopic is Kafka's internal topic of transaction state.
const transactionStateTopic = "__transaction_state"

// markerTimeout bounds how long a marker (or a state record) append waits
// for the ISR.
const markerTimeout = 30 * time.Second

// txnWiring is the broker's transaction coordinator and the clients it
// sends WriteTxnMarkers with. Safe for concurrent use.
type txnWiring struct {
	coord       *txn.Coordinator
	interBroker interBrokerSecurity // how marker clients reach other brokers
	dial        func(ctx context.Context, network, address string) (net.Conn, error)

	mu      sync.Mutex // guards clients
	clients map[int32]markerClient
}

type markerClient struct {
	addr string
	cl   *kgo.Client
}

// txnConfig maps the broker's transaction.* settings.
func (b *Broker) txnConfig() txn.Config {
	c := txn.DefaultConfig()
	c.NumPartitions = int32(b.cfg.TransactionStateLogNumPartitions)
	if t := b.meta.Image().Topics[transactionStateTopic]; t != nil {
		c.NumPartitions = int32(len(t.Partitions)) // the topic as created wins
	}
	c.MaxTimeout = time.Duration(b.cfg.TransactionMaxTimeoutMs) * time.Millisecond
	c.AbortCheckInterval = time.Duration(intConfig(b.cfg, "transaction.abort.timed.out.transaction.cleanup.interval.ms", 10000)) * time.Millisecond
	return c
}

// startTxns creates the transaction coordinator and loads every
// __transaction_state partition this node leads.
func (b *Broker) startTxns() error {
	tc, err := txn.New(b.txnConfig(), txnHost{b}, b.log.With("component", "transaction-coordinator"))
	if err != nil {
		return err
	}
	b.txns = &txnWiring{coord: tc, interBroker: b.interBroker, dial: b.dialFunc(), clients: map[int32]markerClient{}}
	if ts := b.topic(transactionStateTopic); ts != nil {
		for _, p := range ts.partitions {
			if !p.IsLeader() {
				continue
			}
			if err := tc.LoadPartition(p.Index, coordLog{stateLog{p}, b.stopWatch}); err != nil {
				tc.Close()
				return err
			}
		}
	}
	return nil
}

// stopTxns stops the coordinator and its clients; called before the logs
// close.
func (b *Broker) stopTxns() {
	if b.txns == nil {
		return
	}
	b.txns.coord.Close()
	b.txns.mu.Lock()
	defer b.txns.mu.Unlock()
	for _, c := range b.txns.clients {
		c.cl.Close()
	}
	b.txns.clients = map[int32]markerClient{}
}

// ensureTxnTopic returns __transaction_state, creating it if needed.
func (b *Broker) ensureTxnTopic() (*topicState, error) {
	return b.ensureInternalTopic(transactionStateTopic)
}

// txnHost gives the transaction coordinator the broker's partitions.
type txnHost struct{ b *Broker }

func (h txnHost) StateLog(p int32) (txn.Log, error) {
	ts, err := h.b.ensureTxnTopic()
	if err != nil {
		return nil, err
	}
	if p < 0 || int(p) >= len(ts.partitions) {
		return nil, fmt.Errorf("%s has no partition %d", transactionStateTopic, p)
	}
	part := ts.partitions[p]
	if !part.IsLeader() {
		return nil, fmt.Errorf("%s-%d: %w", transactionStateTopic, p, partition.ErrNotLeader)
	}
	return coordLog{stateLog{part}, h.b.stopWatch}, nil
}

func (h txnHost) NextProducerID() (int64, error) { return h.b.nextProducerID() }

func (h txnHost) PartitionExists(topic string, p int32) bool {
	ts := h.b.topic(topic)
	return ts != nil && p >= 0 && int(p) < len(ts.partitions)
}

func (h txnHost) GroupPartition(group string) (string, int32) {
	return offsetsTopic, h.b.groups.PartitionFor(group)
}

// WriteMarkers writes m's markers: local leaders first, then one
// WriteTxnMarkers request per remote leader.
func (h txnHost) WriteMarkers(m txn.Markers) error {
	b := h.b
	im := b.meta.Image()
	remote := map[int32]map[string][]int32{}
	var errs []error
	for topic, parts := range m.Partitions {
		t := im.Topics[topic]
		for _, p := range parts {
			if t == nil || int(p) >= len(t.Partitions) {
				continue // the topic is gone: nothing to mark
			}
			leader := t.Partitions[p].Leader
			if leader == b.nodeID {
				if code := b.writeMarker(topic, p, m.ProducerID, m.ProducerEpoch, m.Commit, m.CoordinatorEpoch); code != 0 {
					errs = append(errs, fmt.Errorf("marker on %s-%d: %w", topic, p, kerr.ErrorForCode(code)))
				}
				continue
			}
			if remote[leader] == nil {
				remote[leader] = map[string][]int32{}
			}
			remote[leader][topic] = append(remote[leader][topic], p)
		}
	}
	for node, parts := range remote {
		if err := b.sendMarkers(im, node, m, parts); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sendMarkers sends one WriteTxnMarkers request to broker node.
func (b *Broker) sendMarkers(im *metadata.Image, node int32, m txn.Markers, parts map[string][]int32) error {
	br := onListener(im.BrokerByID(node), b.cfg.InterBrokerListenerName)
	if node < 0 || br == nil {
		return fmt.Errorf("markers for leader %d: no such broker", node)
	}
	cl, err := b.txns.client(node, net.JoinHostPort(br.Host, strconv.Itoa(int(br.Port))))
	if err != nil {
		return err
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = m.ProducerID, m.ProducerEpoch, m.Commit, m.CoordinatorEpoch
	for topic, ps := range parts {
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = topic, ps
		mk.Topics = append(mk.Topics, mt)
	}
	req.Markers = append(req.Markers, mk)
	ctx, cancel := b.closingContext(markerTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return fmt.Errorf("WriteTxnMarkers to broker %d: %w", node, err)
	}
	var errs []error
	for _, rm := range resp.Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if rp.ErrorCode != 0 {
					errs = append(errs, fmt.Errorf("marker on %s-%d at broker %d: %w", rt.Topic, rp.Partition, node, kerr.ErrorForCode(rp.ErrorCode)))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// client returns the marker client for broker node at addr.
func (w *txnWiring) client(node int32, addr string) (*kgo.Client, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.clients[node]; ok {
		if c.addr == addr {
			return c.cl, nil
		}
		c.cl.Close()
	}
	cl, err := kgo.NewClient(append(w.interBroker.kgoOpts(w.dial), kgo.SeedBrokers(addr))...)
	if err != nil {
		return nil, fmt.Errorf("client for broker %d: %w", node, err)
	}
	w.clients[node] = markerClient{addr: addr, cl: cl}
	return cl, nil
}

// controlBatch is a transaction marker: a v2 control batch of the
// producer with one record, key (version 0, type) and value (version 0,
// coordinator epoch).
func controlBatch(producerID int64, epoch int16, commit bool, coordinatorEpoch int32) []byte {
	typ := storage.MarkerAbort
	if commit {
		typ = storage.MarkerCommit
	}
	key := []byte{0, 0, byte(uint16(typ) >> 8), byte(typ)}
	value := []byte{0, 0, byte(coordinatorEpoch >> 24), byte(coordinatorEpoch >> 16), byte(coordinatorEpoch >> 8), byte(coordinatorEpoch)}
	return record.BuildBatch(record.BuildOptions{
		FirstTimestamp: time.Now().UnixMilli(), Transactional: true, Control: true,
		ProducerID: producerID, ProducerEpoch: epoch, BaseSequence: -1,
	}, []record.Record{{Key: key, Value: value}})
}

// writeMarker appends a marker to a partition this broker leads and
// waits for the ISR; on __consumer_offsets it then decides the pending
// transactional offsets of the producer. It returns a Kafka error code.
func (b *Broker) writeMarker(topic string, index int32, producerID int64, epoch int16, commit bool, coordinatorEpoch int32) int16 {
	_, p := b.partition(topic, index)
	if p == nil {
		return kerr.UnknownTopicOrPartition.Code
	}
	if err := appendCommittedUntil(p, controlBatch(producerID, epoch, commit, coordinatorEpoch), b.stopWatch); err != nil {
		b.log.Debug("write transaction marker", "partition", p.String(), "err", err)
		return errorCode(err)
	}
	if topic == offsetsTopic && b.groups != nil {
		b.groups.CompleteTxn(index, producerID, commit)
	}
	return 0
}

// appendCommitted appends batch as leader and waits until the high
// watermark passes it.
func appendCommitted(p *partition.Partition, batch []byte) error {
	return appendCommittedUntil(p, batch, nil)
}

// appendCommittedUntil is appendCommitted that gives up when stop is
// closed (the broker is closing: its ISR may never catch up again).
func appendCommittedUntil(p *partition.Partition, batch []byte, stop <-chan struct{}) error {
	return appendCommittedWithin(p, batch, stop, markerTimeout)
}

// errBrokerClosing is a wait for the ISR cut short by Close.
var errBrokerClosing = errors.New("broker is shutting down")

// appendCommittedWithin is appendCommittedUntil with its own timeout.
func appendCommittedWithin(p *partition.Partition, batch []byte, stop <-chan struct{}, timeout time.Duration) error {
	res, err := p.AppendAsLeader(batch, 0)
	if err != nil {
		return err
	}
	if p.HighWatermark() > res.LastOffset {
		return nil
	}
	wake := make(chan struct{}, 1)
	p.WatchHighWatermark(wake, res.LastOffset+1)
	defer p.Unwatch(wake)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for p.HighWatermark() <= res.LastOffset {
		if !p.IsLeader() {
			return partition.ErrNotLeader
		}
		select {
		case <-wake:
		case <-stop:
			return fmt.Errorf("%s: waiting for the high watermark to reach %d: %w", p, res.LastOffset+1, errBrokerClosing)
		case <-timer.C:
			return fmt.Errorf("%s: high watermark did not reach %d: %w", p, res.LastOffset+1, errMarkerTimeout)
		}
	}
	return nil
}

var errMarkerTimeout = errors.New("timed out waiting for replication")

// stateLog is one __transaction_state partition as a txn.Log.
type stateLog struct{ p *partition.Partition }

func (l stateLog) Append(batch []byte) error {
	if err := appendCommitted(l.p, batch); err != nil {
		return fmt.Errorf("append to %s: %w", l.p, err)
	}
	return nil
}

func (l stateLog) Replay(fn func(batch []byte) error) error { return offsetsLog{p: l.p}.Replay(fn) }

func (l stateLog) LeaderEpoch() int32 { return l.p.LeaderEpoch() }

// coordLog is the transaction coordinator's stateLog: its appends stop
// waiting for the ISR when the broker closes.
type coordLog struct {
	stateLog
	stop <-chan struct{}
}

func (l coordLog) Append(batch []byte) error {
	if err := appendCommittedUntil(l.p, batch, l.stop); err != nil {
		return fmt.Errorf("append to %s: %w", l.p, err)
	}
	return nil
}

// StateLogs returns the __transaction_state partitions this node leads.
func (h txnHost) StateLogs() map[int32]txn.Log {
	out := map[int32]txn.Log{}
	ts := h.b.topic(transactionStateTopic)
	if ts == nil {
		return out
	}
	for i, p := range ts.partitions {
		if p != nil && p.IsLeader() {
			out[int32(i)] = coordLog{stateLog{p}, h.b.stopWatch}
		}
	}
	return out
}

// verificationTimeout bounds an AddPartitionsToTxn sent to a remote
// coordinator to verify a transactional produce.
const verificationTimeout = 10 * time.Second

// verifyTxn asks the coordinator of transactional id whether parts are in
// the producer's ongoing transaction (KIP-890 part 1, VerifyOnly), or with
// add set adds them (part 2: Produce v12+, TxnOffsetCommit v5+). The
// coordinator is this node (a direct call) or another broker (an
// AddPartitionsToTxn v4/v5 request, as Kafka's AddPartitionsToTxnManager
// sends). It returns the coordinator's code per partition; failing to
// reach it is COORDINATOR_NOT_AVAILABLE or NETWORK_EXCEPTION.
func (b *Broker) verifyTxn(id string, producerID int64, epoch int16, parts map[string][]int32, add bool) map[string]map[int32]int16 {
	all := func(code int16) map[string]map[int32]int16 {
		out := map[string]map[int32]int16{}
		for topic, ps := range parts {
			out[topic] = map[int32]int16{}
			for _, p := range ps {
				out[topic][p] = code
			}
		}
		return out
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	if add {
		req.Version = 5
	}
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, producerID, epoch, !add
	for topic, ps := range parts {
		rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		rt.Topic, rt.Partitions = topic, ps
		tx.Topics = append(tx.Topics, rt)
	}
	req.Transactions = append(req.Transactions, tx)

	im := b.meta.Image()
	st := im.Topics[transactionStateTopic]
	if st == nil || len(st.Partitions) == 0 {
		return all(kerr.CoordinatorNotAvailable.Code)
	}
	leader := st.Partitions[txn.PartitionFor(id, int32(len(st.Partitions)))].Leader
	var resp *kmsg.AddPartitionsToTxnResponse
	if leader == b.nodeID {
		resp = b.txns.coord.AddPartitionsToTxn(req)
	} else {
		br := onListener(im.BrokerByID(leader), b.cfg.InterBrokerListenerName)
		if leader < 0 || br == nil {
			return all(kerr.CoordinatorNotAvailable.Code)
		}
		cl, err := b.txns.client(leader, net.JoinHostPort(br.Host, strconv.Itoa(int(br.Port))))
		if err != nil {
			return all(kerr.CoordinatorNotAvailable.Code)
		}
		ctx, cancel := b.closingContext(verificationTimeout)
		defer cancel()
		resp, err = req.RequestWith(ctx, cl.SeedBrokers()[0])
		if err != nil {
			b.log.Debug("transaction verification", "transactional.id", id, "coordinator", leader, "err", err)
			return all(kerr.NetworkException.Code)
		}
		if resp.ErrorCode != 0 {
			code := resp.ErrorCode
			if code == kerr.ClusterAuthorizationFailed.Code {
				code = kerr.InvalidTxnState.Code // as Kafka's AddPartitionsToTxnManager
			}
			return all(code)
		}
	}
	out := all(kerr.UnknownServerError.Code)
	for _, rtx := range resp.Transactions {
		for _, rt := range rtx.Topics {
			for _, rp := range rt.Partitions {
				if out[rt.Topic] != nil {
					out[rt.Topic][rp.Partition] = rp.ErrorCode
				}
			}
		}
	}
	return out
}

// verificationError turns a coordinator's answer to a transaction
// verification into the error a produce (or TxnOffsetCommit) partition
// gets, as Kafka's ReplicaManager does: retriable coordinator trouble is
// NOT_ENOUGH_REPLICAS (which old clients retry without a metadata
// refresh), a fenced producer INVALID_PRODUCER_EPOCH, and
// TRANSACTION_ABORTABLE only for clients that know it (genericErrors);
// others get INVALID_TXN_STATE.
func verificationError(code int16, genericErrors bool) (int16, string) {
	switch code {
	case 0:
		return 0, ""
	case kerr.InvalidTxnState.Code:
		return code, "Partition was not added to the transaction"
	case kerr.ConcurrentTransactions.Code, kerr.NetworkException.Code, kerr.CoordinatorLoadInProgress.Code,
		kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code:
		return kerr.NotEnoughReplicas.Code, "Unable to verify the partition has been added to the transaction. Underlying error: " +
			kerr.ErrorForCode(code).(*kerr.Error).Message
	case kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code, ""
	case kerr.TransactionAbortable.Code:
		if !genericErrors {
			return kerr.InvalidTxnState.Code, "Partition was not added to the transaction"
		}
	}
	return code, ""
}

// txnVerificationEnabled is transaction.partition.verification.enable, a
// dynamic config in Kafka: AlterConfigs turns it off without a restart.
func (b *Broker) txnVerificationEnabled() bool {
	const key = "transaction.partition.verification.enable"
	im := b.meta.Image()
	for _, dyn := range []map[string]string{im.NodeConfigsOf(b.nodeID), im.BrokerConfigs} {
		if v, ok := dyn[key]; ok {
			if on, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
				return on
			}
		}
	}
	return boolConfig(b.cfg, key, true)
}

// closingContext is a context with timeout d that Close cancels too.
func (b *Broker) closingContext(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	go func() { // ends with ctx: the caller cancels it when done
		select {
		case <-b.stopWatch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// txnVersion2 reports whether the cluster's finalized transaction.version
// is 2 or more (KIP-890 part 2): Produce v12+ and TxnOffsetCommit v5 then
// add their partition to the transaction, as Kafka does only then.
func (b *Broker) txnVersion2() bool {
	return finalizedFeatures(b.meta.Image())[featureTxnVersion] >= 2
}
