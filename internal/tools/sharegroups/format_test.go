package sharegroups

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), got)
}

func TestFormatsGolden(t *testing.T) {
	var b bytes.Buffer
	WriteGroupList(&b, []ListedGroup{{"orders-workers", "Stable"}, {"a-very-long-share-group-name", "Empty"}}, true)
	checkGolden(t, "list-state", b.Bytes())

	rows := []OffsetRow{
		{Topic: "orders", Partition: 1, StartOffset: 42, LeaderEpoch: 3, Lag: 8},
		{Topic: "orders", Partition: 0, StartOffset: 10, LeaderEpoch: 3, Lag: -1},
		{Topic: "a-much-longer-topic-name", Partition: 2, StartOffset: -1, LeaderEpoch: -1, Lag: -1},
	}
	b.Reset()
	WriteOffsets(&b, "workers", rows, false)
	checkGolden(t, "describe-offsets", b.Bytes())
	b.Reset()
	WriteOffsets(&b, "workers", rows, true)
	checkGolden(t, "describe-offsets-verbose", b.Bytes())
	b.Reset()
	WriteOffsets(&b, "workers", nil, false)
	checkGolden(t, "describe-offsets-none", b.Bytes())

	b.Reset()
	WriteState(&b, GroupState{Group: "workers", CoordinatorHost: "127.0.0.1", CoordinatorPort: 9092, CoordinatorID: 1, State: "Stable", GroupEpoch: 4, AssignmentEpoch: 4, Members: 2}, true)
	checkGolden(t, "describe-state-verbose", b.Bytes())

	members := []Member{
		{ConsumerID: "Zx9q-member-b", Host: "/127.0.0.1", ClientID: "c-2", Epoch: 4, Assignment: map[string][]int32{"orders": {1}}},
		{ConsumerID: "Ab1c-member-a", Host: "/127.0.0.1", ClientID: "c-1", Epoch: 3, Assignment: map[string][]int32{"orders": {2, 0}, "audit": {0}}},
	}
	b.Reset()
	WriteMembers(&b, "workers", members, false)
	checkGolden(t, "describe-members", b.Bytes())
	b.Reset()
	WriteMembers(&b, "workers", members, true)
	checkGolden(t, "describe-members-verbose", b.Bytes())

	b.Reset()
	WriteDeleteOffsets(&b, []DeleteOffsetRow{{Topic: "orders"}, {Topic: "gone", Err: errors.New("This server does not host this topic-partition.")}})
	checkGolden(t, "delete-offsets", b.Bytes())
}
