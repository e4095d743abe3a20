package metadataquorum

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// zeroDirectoryID is Uuid.ZERO_UUID as Kafka prints it.
const zeroDirectoryID = "AAAAAAAAAAAAAAAAAAAAAA"

// Replica is one replica of the metadata log as DescribeQuorum reports it.
// Times are Unix milliseconds, -1 when unknown.
type Replica struct {
	NodeID                int32
	DirectoryID           [16]byte
	LogEndOffset          int64
	LastFetchTimestamp    int64
	LastCaughtUpTimestamp int64
}

// Endpoint is one listener of a voter (Kafka's RaftVoterEndpoint).
type Endpoint struct {
	Name string
	Host string
	Port uint16
}

// String is RaftVoterEndpoint.toString: NAME://host:port, an IPv6 host in
// brackets.
func (e Endpoint) String() string {
	host := e.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return e.Name + "://" + host + ":" + strconv.Itoa(int(e.Port))
}

// Quorum is Kafka's QuorumInfo: what `describe` prints.
type Quorum struct {
	ClusterID     string
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []Replica
	Observers     []Replica
	Nodes         map[int32][]Endpoint
}

// Describe asks the cluster for its quorum's state (DescribeQuorum at the
// newest version both sides know).
func Describe(ctx context.Context, cl *kgo.Client) (*Quorum, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := errWithMessage(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, errors.New("the DescribeQuorum response did not contain exactly one partition")
	}
	p := resp.Topics[0].Partitions[0]
	if err := errWithMessage(p.ErrorCode, p.ErrorMessage); err != nil {
		return nil, err
	}
	q := &Quorum{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark,
		Nodes: map[int32][]Endpoint{}}
	conv := func(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) []Replica {
		out := make([]Replica, 0, len(rs))
		for _, r := range rs {
			out = append(out, Replica{NodeID: r.ReplicaID, DirectoryID: r.ReplicaDirectoryID, LogEndOffset: r.LogEndOffset,
				LastFetchTimestamp: r.LastFetchTimestamp, LastCaughtUpTimestamp: r.LastCaughtUpTimestamp})
		}
		return out
	}
	q.Voters, q.Observers = conv(p.CurrentVoters), conv(p.Observers)
	for _, n := range resp.Nodes {
		for _, l := range n.Listeners {
			q.Nodes[n.NodeID] = append(q.Nodes[n.NodeID], Endpoint{Name: l.Name, Host: l.Host, Port: l.Port})
		}
	}
	return q, nil
}

func errWithMessage(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

// leader returns the leader's replica among the voters.
func (q *Quorum) leader() (Replica, error) {
	for _, v := range q.Voters {
		if v.NodeID == q.LeaderID {
			return v, nil
		}
	}
	return Replica{}, fmt.Errorf("the leader %d is not among the voters", q.LeaderID)
}

// WriteStatus prints `describe --status`.
func WriteStatus(w io.Writer, q *Quorum) error {
	leader, err := q.leader()
	if err != nil {
		return err
	}
	maxLag := leader
	for _, v := range q.Voters {
		if v.LogEndOffset < maxLag.LogEndOffset {
			maxLag = v
		}
	}
	var lagTime int64
	switch {
	case maxLag.NodeID == leader.NodeID:
		lagTime = 0
	case leader.LastCaughtUpTimestamp >= 0 && maxLag.LastCaughtUpTimestamp >= 0:
		lagTime = leader.LastCaughtUpTimestamp - maxLag.LastCaughtUpTimestamp
	default:
		lagTime = -1
	}
	_, err = fmt.Fprintf(w, "ClusterId:              %s\nLeaderId:               %d\nLeaderEpoch:            %d\n"+
		"HighWatermark:          %d\nMaxFollowerLag:         %d\nMaxFollowerLagTimeMs:   %d\n"+
		"CurrentVoters:          %s\nCurrentObservers:       %s\n",
		q.ClusterID, q.LeaderID, q.LeaderEpoch, q.HighWatermark, leader.LogEndOffset-maxLag.LogEndOffset, lagTime,
		replicaList(q, q.Voters), replicaList(q, q.Observers))
	return err
}

// replicaList is Kafka's printReplicaState:
// [{"id": 1, "directoryId": null, "endpoints": ["CONTROLLER://h:9093"]}, ...].
func replicaList(q *Quorum, rs []Replica) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		var b strings.Builder
		fmt.Fprintf(&b, `{"id": %d, "directoryId": `, r.NodeID)
		if r.DirectoryID == ([16]byte{}) {
			b.WriteString("null")
		} else {
			fmt.Fprintf(&b, "%q", directoryID(r.DirectoryID))
		}
		if eps := q.Nodes[r.NodeID]; len(eps) > 0 {
			names := make([]string, len(eps))
			for j, e := range eps {
				names[j] = `"` + e.String() + `"`
			}
			b.WriteString(`, "endpoints": [` + strings.Join(names, ", ") + "]")
		}
		b.WriteString("}")
		parts[i] = b.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// WriteReplication prints `describe --replication`: the leader, the other
// voters, then the observers, in Kafka's table (each cell padded to its
// column and followed by a tab). With humanReadable the times are "N ms
// ago" relative to now.
func WriteReplication(w io.Writer, q *Quorum, humanReadable bool, now time.Time) error {
	leader, err := q.leader()
	if err != nil {
		return err
	}
	rows := [][]string{}
	add := func(r Replica, status string) error {
		ts := func(v int64, desc string) (string, error) {
			if v < 0 {
				return "-1", nil
			}
			if !humanReadable {
				return strconv.FormatInt(v, 10), nil
			}
			if v <= 0 || v > now.UnixMilli() {
				return "", fmt.Errorf("Error while computing relative time, possible drift in system clock.\n"+
					"Current timestamp is %d, %s timestamp is %d", now.UnixMilli(), desc, v)
			}
			return fmt.Sprintf("%d ms ago", now.UnixMilli()-v), nil
		}
		fetch, err := ts(r.LastFetchTimestamp, "last fetch")
		if err != nil {
			return err
		}
		caught, err := ts(r.LastCaughtUpTimestamp, "last caught up")
		if err != nil {
			return err
		}
		rows = append(rows, []string{strconv.Itoa(int(r.NodeID)), directoryID(r.DirectoryID),
			strconv.FormatInt(r.LogEndOffset, 10), strconv.FormatInt(leader.LogEndOffset-r.LogEndOffset, 10),
			fetch, caught, status})
		return nil
	}
	if err := add(leader, "Leader"); err != nil {
		return err
	}
	for _, v := range q.Voters {
		if v.NodeID != leader.NodeID {
			if err := add(v, "Follower"); err != nil {
				return err
			}
		}
	}
	for _, o := range q.Observers {
		if err := add(o, "Observer"); err != nil {
			return err
		}
	}
	headers := []string{"NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"}
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range append([][]string{headers}, rows...) {
		for i, c := range r {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-len(c)))
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// directoryID is Kafka's Uuid.toString: unpadded URL-safe base64.
func directoryID(id [16]byte) string {
	if id == ([16]byte{}) {
		return zeroDirectoryID
	}
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b strings.Builder
	var acc, bits uint
	for _, c := range id {
		acc = acc<<8 | uint(c)
		bits += 8
		for bits >= 6 {
			bits -= 6
			b.WriteByte(enc[acc>>bits&63])
		}
	}
	if bits > 0 {
		b.WriteByte(enc[acc<<(6-bits)&63])
	}
	return b.String()
}

// Run runs `silkworm metadata-quorum` with args (without the command
// name), writing results to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("metadata-quorum", "This tool describes kraft metadata quorum status.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "", "A comma-separated list of host:port pairs to use for establishing the connection to the Kafka cluster.", "")
	controllers := p.String("bootstrap-controller", "", "A comma-separated list of host:port pairs to use for establishing the connection to the Kafka controllers.", "")
	commandConfig := p.String("command-config", "", "Property file containing configs to be passed to Admin Client.", "")
	status := p.Flag("status", "A short summary of the quorum status and the other provides detailed information about the status of replication.")
	replication := p.Flag("replication", "Detailed information about the status of replication")
	humanReadable := p.Flag("human-readable", "Human-readable output")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if err := p.RequireOneOf("bootstrap-server", "bootstrap-controller"); err != nil {
		return err
	}
	addr := cmp.Or(*bootstrap, *controllers)
	rest := p.Args()
	if len(rest) == 0 {
		return errors.New("a command is required: describe (add-controller and remove-controller are not supported)")
	}
	switch rest[0] {
	case "describe":
	case "add-controller", "remove-controller":
		return fmt.Errorf("%s is not supported: Silkworm's controller quorum is static (controller.quorum.voters)", rest[0])
	default:
		return fmt.Errorf("invalid choice: '%s' (choose from 'describe', 'add-controller', 'remove-controller')", rest[0])
	}
	if len(rest) > 1 {
		return fmt.Errorf("unrecognized arguments: '%s'", strings.Join(rest[1:], " "))
	}
	switch {
	case *status && *replication:
		return errors.New("Only one of --status or --replication should be specified with describe sub-command")
	case !*status && !*replication:
		return errors.New("One of --status or --replication must be specified with describe sub-command")
	case *status && *humanReadable:
		return errors.New("The option --human-readable is only supported along with --replication")
	}
	cl, adm, err := cli.NewAdmin(ctx, *commandConfig, addr)
	if err != nil {
		return err
	}
	defer cl.Close()
	q, err := Describe(ctx, cl)
	if err != nil {
		return err
	}
	if *replication {
		return WriteReplication(stdout, q, *humanReadable, time.Now())
	}
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	q.ClusterID = meta.Cluster
	return WriteStatus(stdout, q)
}
