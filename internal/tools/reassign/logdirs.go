package reassign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// MoveKind is the state of a replica's move between log directories
// (Kafka's LogDirMoveState classes).
type MoveKind int

const (
	// MoveMissingReplica: the broker has no such replica.
	MoveMissingReplica MoveKind = iota
	// MoveMissingLogDir: the replica is in no live log dir.
	MoveMissingLogDir
	// MoveActive: a future replica is being built in Future.
	MoveActive
	// MoveCancelled: no move is in progress and the replica is not in
	// the target dir.
	MoveCancelled
	// MoveCompleted: the replica is in the target dir.
	MoveCompleted
)

// MoveState is one replica's log dir move as --verify reports it.
type MoveState struct {
	Kind    MoveKind
	Current string // the replica's dir, if it has one
	Future  string // the future replica's dir, for MoveActive
	Target  string
}

// Done reports whether the move needs no more waiting (Kafka's
// LogDirMoveState.done): every state but an active move.
func (m MoveState) Done() bool { return m.Kind != MoveActive }

// logDirStates is Kafka's findLogDirMoveStates: where each replica of
// targets is (DescribeLogDirs of its broker).
func (a *Admin) logDirStates(ctx context.Context, targets map[Replica]string) (map[Replica]MoveState, error) {
	out := map[Replica]MoveState{}
	if len(targets) == 0 {
		return out, nil
	}
	byBroker := map[int32]kadm.TopicsSet{}
	for r := range targets {
		set := byBroker[r.Broker]
		set.Add(r.Topic, r.Partition.Partition)
		byBroker[r.Broker] = set
	}
	type where struct{ current, future string }
	found := map[Replica]*where{}
	for b, set := range byBroker {
		dirs, err := a.Client.DescribeBrokerLogDirs(ctx, b, set)
		if err != nil {
			return nil, fmt.Errorf("describe log dirs of broker %d: %w", b, err)
		}
		for _, d := range dirs {
			if d.Err != nil {
				continue
			}
			d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
				r := Replica{Partition{p.Topic, p.Partition}, b}
				w := found[r]
				if w == nil {
					w = &where{}
					found[r] = w
				}
				if p.IsFuture {
					w.future = d.Dir
				} else {
					w.current = d.Dir
				}
			})
		}
	}
	for r, target := range targets {
		w := found[r]
		switch {
		case w == nil:
			out[r] = MoveState{Kind: MoveMissingReplica, Target: target}
		case w.current == "":
			out[r] = MoveState{Kind: MoveMissingLogDir, Target: target}
		case w.future == "" && w.current == target:
			out[r] = MoveState{Kind: MoveCompleted, Current: w.current, Target: target}
		case w.future == "":
			out[r] = MoveState{Kind: MoveCancelled, Current: w.current, Target: target}
		default:
			out[r] = MoveState{Kind: MoveActive, Current: w.current, Future: w.future, Target: target}
		}
	}
	return out, nil
}

// FormatMoveStates is Kafka's replicaMoveStatesToString (empty for no
// moves, no final newline).
func FormatMoveStates(states map[Replica]MoveState) string {
	rs := make([]Replica, 0, len(states))
	for r := range states {
		rs = append(rs, r)
	}
	slices.SortFunc(rs, compareReplicas)
	var lines []string
	for _, r := range rs {
		s := states[r]
		var l string
		switch s.Kind {
		case MoveMissingLogDir:
			l = fmt.Sprintf("Partition %s is not found in any live log dir on broker %d. There is likely an offline log directory on the broker.", r.Partition, r.Broker)
		case MoveMissingReplica:
			l = fmt.Sprintf("Partition %s cannot be found in any live log directory on broker %d.", r.Partition, r.Broker)
		case MoveActive:
			if s.Target == s.Future {
				l = fmt.Sprintf("Reassignment of replica %s is still in progress.", r)
			} else {
				l = fmt.Sprintf("Partition %s on broker %d is being moved to log dir %s instead of %s.", r.Partition, r.Broker, s.Future, s.Target)
			}
		case MoveCancelled:
			l = fmt.Sprintf("Partition %s on broker %d is not being moved from log dir %s to %s.", r.Partition, r.Broker, s.Current, s.Target)
		case MoveCompleted:
			l = fmt.Sprintf("Reassignment of replica %s completed successfully.", r)
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// executeMoves is Kafka's executeMoves: it asks each broker to move its
// replicas to the given dirs (AlterReplicaLogDirs), retrying those whose
// replica is not there yet (REPLICA_NOT_AVAILABLE) until timeout.
func (a *Admin) executeMoves(ctx context.Context, moves map[Replica]string, timeout time.Duration) error {
	pending := make(map[Replica]string, len(moves))
	for r, d := range moves {
		pending[r] = d
	}
	poll := a.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	for {
		byBroker := map[int32]kadm.AlterReplicaLogDirsReq{}
		for r, d := range pending {
			req := byBroker[r.Broker]
			req.Add(d, kadm.TopicsSet{r.Topic: {r.Partition.Partition: struct{}{}}})
			byBroker[r.Broker] = req
		}
		var started []Replica
		for b, req := range byBroker {
			resps, err := a.Client.AlterBrokerReplicaLogDirs(ctx, b, req)
			if err != nil {
				return fmt.Errorf("alter replica log dirs on broker %d: %w", b, err)
			}
			var failed error
			resps.Each(func(r kadm.AlterReplicaLogDirsResponse) {
				rep := Replica{Partition{r.Topic, r.Partition}, b}
				switch {
				case r.Err == nil:
					started = append(started, rep)
				case errors.Is(r.Err, kerr.ReplicaNotAvailable):
				case failed == nil:
					failed = fmt.Errorf("Failed to alter dir for %s: %w", rep, r.Err)
				}
			})
			if failed != nil {
				return failed
			}
		}
		slices.SortFunc(started, compareReplicas)
		for _, r := range started {
			a.printf("Successfully started moving log directory to %s for replica %s-%d with broker %d \n",
				pending[r], r.Topic, r.Partition.Partition, r.Broker)
			delete(pending, r)
		}
		if len(pending) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			left := make([]Replica, 0, len(pending))
			for r := range pending {
				left = append(left, r)
			}
			slices.SortFunc(left, compareReplicas)
			names := make([]string, len(left))
			for i, r := range left {
				names[i] = r.String()
			}
			return fmt.Errorf("Timed out before log directory move%s could be started for: %s", plural(len(left)), strings.Join(names, ","))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}
