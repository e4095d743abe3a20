package transactions

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Kafka's column headers (tools/TransactionsCommand.java).
var (
	listHeaders     = []string{"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}
	describeHeaders = []string{"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"}
	producersHeaders = []string{"ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
		"LastTimestamp", "CurrentTransactionStartOffset"}
	hangingHeaders = []string{"Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
		"StartOffset", "LastTimestamp", "Duration(min)"}
)

// printTable is Kafka's ToolsUtils.prettyPrintTable: each column padded
// to its widest cell, each cell followed by a tab.
func printTable(w io.Writer, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i := range headers {
			widths[i] = max(widths[i], len(r[i]))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-len(c)))
			b.WriteByte('\t')
		}
		fmt.Fprintln(w, b.String())
	}
	line(headers)
	for _, r := range rows {
		line(r)
	}
}

func itoa[T ~int16 | ~int32 | ~int64](v T) string { return strconv.FormatInt(int64(v), 10) }

// listRows are the rows of `list`, by coordinator and transactional id.
func listRows(ls []kadm.ListedTransaction) [][]string {
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].Coordinator != ls[j].Coordinator {
			return ls[i].Coordinator < ls[j].Coordinator
		}
		return ls[i].TxnID < ls[j].TxnID
	})
	rows := make([][]string, 0, len(ls))
	for _, l := range ls {
		rows = append(rows, []string{l.TxnID, itoa(l.Coordinator), itoa(l.ProducerID), l.State})
	}
	return rows
}

// describeRow is the row of `describe` at time now: the start time and
// duration are "None" when the transactional id never began one.
func describeRow(d kadm.DescribedTransaction, now time.Time) []string {
	start, duration := "None", "None"
	if d.StartTimestamp >= 0 {
		start = itoa(d.StartTimestamp)
		duration = itoa(now.UnixMilli() - d.StartTimestamp)
	}
	var tps []string
	for _, tp := range d.Topics.Sorted() {
		for _, p := range tp.Partitions {
			tps = append(tps, fmt.Sprintf("%s-%d", tp.Topic, p))
		}
	}
	return []string{itoa(d.Coordinator), d.TxnID, itoa(d.ProducerID), itoa(d.ProducerEpoch), d.State,
		itoa(d.TimeoutMillis), start, duration, strings.Join(tps, ",")}
}

// producer is one active producer of a partition as DescribeProducers
// answers it.
type producer struct {
	ProducerID            int64
	ProducerEpoch         int32
	LastSequence          int32
	LastTimestamp         int64
	CoordinatorEpoch      int32
	CurrentTxnStartOffset int64
}

// producerRows are the rows of `describe-producers`, by producer id.
func producerRows(ps []producer) [][]string {
	sort.Slice(ps, func(i, j int) bool { return ps[i].ProducerID < ps[j].ProducerID })
	rows := make([][]string, 0, len(ps))
	for _, p := range ps {
		start := "None"
		if p.CurrentTxnStartOffset >= 0 {
			start = itoa(p.CurrentTxnStartOffset)
		}
		rows = append(rows, []string{itoa(p.ProducerID), itoa(p.ProducerEpoch), itoa(p.CoordinatorEpoch),
			itoa(p.LastSequence), itoa(p.LastTimestamp), start})
	}
	return rows
}

// openTxn is a producer with a transaction open in a partition.
type openTxn struct {
	Topic     string
	Partition int32
	producer
}

// hangingRows are the rows of `find-hanging` at time now, sorted by
// topic, partition and producer id.
func hangingRows(txns []openTxn, now time.Time) [][]string {
	sort.Slice(txns, func(i, j int) bool {
		a, b := txns[i], txns[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.ProducerID < b.ProducerID
	})
	rows := make([][]string, 0, len(txns))
	for _, t := range txns {
		minutes := (now.UnixMilli() - t.LastTimestamp) / time.Minute.Milliseconds()
		rows = append(rows, []string{t.Topic, itoa(t.Partition), itoa(t.ProducerID), itoa(t.ProducerEpoch),
			itoa(t.CoordinatorEpoch), itoa(t.CurrentTxnStartOffset), itoa(t.LastTimestamp), itoa(minutes)})
	}
	return rows
}
