package apiversions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// APIVersion is one API a broker supports, with its version range.
type APIVersion struct {
	Key        int16
	MinVersion int16
	MaxVersion int16
}

// Node is one broker as Kafka's Node prints it.
type Node struct {
	ID   int32
	Host string
	Port int32
	Rack *string
}

// String is Kafka 4's Node.toString: host:port (id: 1 rack: null isFenced: false).
func (n Node) String() string {
	rack := "null"
	if n.Rack != nil {
		rack = *n.Rack
	}
	return fmt.Sprintf("%s:%d (id: %d rack: %s isFenced: false)", n.Host, n.Port, n.ID, rack)
}

// notClientAPIs are the keys Kafka 4 does not serve on a broker listener
// (controller-only and removed ZooKeeper-era APIs, and UnregisterController): Kafka leaves them out
// of the UNSUPPORTED lines.
var notClientAPIs = map[int16]bool{4: true, 5: true, 6: true, 7: true, 52: true, 53: true, 54: true, 56: true,
	58: true, 59: true, 62: true, 63: true, 67: true, 70: true, 73: true, 82: true, 94: true}

// javaNames are Kafka's ApiKeys names where kmsg spells them otherwise.
var javaNames = map[int16]string{
	4: "LeaderAndIsr", 17: "SaslHandshake", 22: "InitProducerId", 29: "DescribeAcls", 30: "CreateAcls",
	31: "DeleteAcls", 36: "SaslAuthenticate", 45: "AlterPartitionReassignments",
	50: "DescribeUserScramCredentials", 51: "AlterUserScramCredentials", 67: "AllocateProducerIds",
}

// apiName is Kafka's name for key, or "" for a key this client does not know.
func apiName(key int16) string {
	if n, ok := javaNames[key]; ok {
		return n
	}
	if kmsg.RequestForKey(key) == nil {
		return ""
	}
	return kmsg.NameForKey(key)
}

// clientMax is the newest version of key this tool's client knows, or -1.
func clientMax(key int16) int16 {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return -1
	}
	return req.MaxVersion()
}

// Format is NodeApiVersions.toString(true) for a broker's versions.
func Format(versions []APIVersion) string {
	text := map[int16]string{}
	for _, v := range versions {
		var b strings.Builder
		name := apiName(v.Key)
		if name == "" {
			fmt.Fprintf(&b, "UNKNOWN(%d): ", v.Key)
		} else {
			fmt.Fprintf(&b, "%s(%d): ", name, v.Key)
		}
		if v.MinVersion == v.MaxVersion {
			fmt.Fprintf(&b, "%d", v.MinVersion)
		} else {
			fmt.Fprintf(&b, "%d to %d", v.MinVersion, v.MaxVersion)
		}
		if name != "" {
			latest := clientMax(v.Key)
			switch {
			case latest < v.MinVersion:
				b.WriteString(" [unusable: node too new]")
			case v.MaxVersion < 0:
				b.WriteString(" [unusable: node too old]")
			default:
				fmt.Fprintf(&b, " [usable: %d]", min(latest, v.MaxVersion))
			}
		}
		text[v.Key] = b.String()
	}
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		name := apiName(key)
		if _, ok := text[key]; ok || name == "" || notClientAPIs[key] {
			continue
		}
		text[key] = fmt.Sprintf("%s(%d): UNSUPPORTED", name, key)
	}
	keys := make([]int16, 0, len(text))
	for k := range text {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = text[k]
	}
	return "(\n\t" + strings.Join(lines, ",\n\t") + "\n)"
}

// Describe asks each broker of the cluster for its API versions. A broker
// that does not answer has a non-nil error in errs.
func Describe(ctx context.Context, cl *kgo.Client, nodes []Node) (versions map[int32][]APIVersion, errs map[int32]error) {
	versions, errs = map[int32][]APIVersion{}, map[int32]error{}
	for _, n := range nodes {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName = "silkworm-broker-api-versions"
		req.ClientSoftwareVersion = "1"
		resp, err := req.RequestWith(ctx, cl.Broker(int(n.ID)))
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			errs[n.ID] = err
			continue
		}
		for _, k := range resp.ApiKeys {
			versions[n.ID] = append(versions[n.ID], APIVersion{Key: k.ApiKey, MinVersion: k.MinVersion, MaxVersion: k.MaxVersion})
		}
	}
	return versions, errs
}

// Run runs `silkworm broker-api-versions` with args (without the command
// name), writing results to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("broker-api-versions", "This tool helps to retrieve broker version information.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "server(s) to use for bootstrapping", "REQUIRED: The server to connect to.", "")
	bootstrapController := p.String("bootstrap-controller", "controller(s) to use for bootstrapping", "A comma-separated list of host:port pairs to use for establishing the connection to the KRaft controllers. Silkworm's controllers answer on the brokers' listeners: give broker addresses.", "")
	commandConfig := p.String("command-config", "command config property file", "A property file containing configs to be passed to Admin Client.", "")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if rest := p.Args(); len(rest) > 0 {
		return fmt.Errorf("unrecognized arguments: '%s'", strings.Join(rest, " "))
	}
	if err := p.RequireOneOf("bootstrap-server", "bootstrap-controller"); err != nil {
		return err
	}
	addr := *bootstrap
	if addr == "" {
		addr = *bootstrapController
	}
	cl, adm, err := cli.NewAdmin(ctx, *commandConfig, addr)
	if err != nil {
		return err
	}
	defer cl.Close()
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	var nodes []Node
	for _, b := range meta.Brokers {
		nodes = append(nodes, Node{ID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
	}
	slices.SortFunc(nodes, func(a, b Node) int { return int(a.ID - b.ID) })
	versions, errs := Describe(ctx, cl, nodes)
	var b strings.Builder
	for _, n := range nodes {
		if err := errs[n.ID]; err != nil {
			fmt.Fprintf(&b, "%s -> ERROR: %v\n", n, err)
			continue
		}
		fmt.Fprintf(&b, "%s -> %s\n", n, Format(versions[n.ID]))
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}
