package transactions

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

var now = time.UnixMilli(1_700_000_600_000)

func TestFormatGolden(t *testing.T) {
	for _, c := range []struct {
		name    string
		headers []string
		rows    [][]string
	}{
		{"list", listHeaders, listRows([]kadm.ListedTransaction{
			{Coordinator: 2, TxnID: "payments", ProducerID: 1001, State: "Ongoing"},
			{Coordinator: 1, TxnID: "orders-7", ProducerID: 17, State: "CompleteCommit"},
			{Coordinator: 1, TxnID: "a", ProducerID: 3, State: "Empty"},
		})},
		{"list-empty", listHeaders, listRows(nil)},
		{"describe", describeHeaders, [][]string{describeRow(kadm.DescribedTransaction{
			Coordinator: 1, TxnID: "payments", State: "Ongoing", TimeoutMillis: 60000,
			StartTimestamp: now.UnixMilli() - 1500, ProducerID: 1001, ProducerEpoch: 4,
			Topics: kadm.TopicsSet{"orders": {2: {}, 0: {}}, "audit": {1: {}}},
		}, now)}},
		{"describe-empty", describeHeaders, [][]string{describeRow(kadm.DescribedTransaction{
			Coordinator: 3, TxnID: "idle", State: "Empty", TimeoutMillis: 60000, StartTimestamp: -1, ProducerID: 5,
		}, now)}},
		{"describe-producers", producersHeaders, producerRows([]producer{
			{ProducerID: 2000, ProducerEpoch: 0, LastSequence: 41, LastTimestamp: now.UnixMilli(), CoordinatorEpoch: -1, CurrentTxnStartOffset: -1},
			{ProducerID: 1001, ProducerEpoch: 4, LastSequence: 9, LastTimestamp: now.UnixMilli() - 10, CoordinatorEpoch: 3, CurrentTxnStartOffset: 120},
		})},
		{"find-hanging", hangingHeaders, hangingRows([]openTxn{
			{Topic: "orders", Partition: 1, producer: producer{ProducerID: 77, ProducerEpoch: 2, CoordinatorEpoch: -1,
				CurrentTxnStartOffset: 5, LastTimestamp: now.Add(-95 * time.Minute).UnixMilli()}},
			{Topic: "audit", Partition: 0, producer: producer{ProducerID: 78, ProducerEpoch: 0, CoordinatorEpoch: 1,
				CurrentTxnStartOffset: 0, LastTimestamp: now.Add(-20 * time.Minute).UnixMilli()}},
		}, now)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			printTable(&buf, c.headers, c.rows)
			golden.Check(t, "testdata/"+c.name+".golden", buf.Bytes())
		})
	}
}
