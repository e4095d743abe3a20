package reassign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// actions are the tool's actions, in Kafka's order.
var actions = []string{"generate", "execute", "verify", "cancel", "list"}

// required and permitted are, per action, the options Kafka's
// validateAndParseArgs requires and allows besides the action itself.
var (
	required = map[string][]string{
		"generate": {"topics-to-move-json-file", "broker-list"},
		"execute":  {"reassignment-json-file"},
		"verify":   {"reassignment-json-file"},
		"cancel":   {"reassignment-json-file"},
		"list":     {},
	}
	permitted = map[string][]string{
		"generate": {"bootstrap-server", "broker-list", "command-config", "disable-rack-aware"},
		"execute":  {"additional", "bootstrap-server", "command-config", "throttle", "replica-alter-log-dirs-throttle", "timeout"},
		"verify":   {"bootstrap-server", "command-config", "preserve-throttles"},
		"cancel":   {"command-config", "preserve-throttles", "timeout"},
		"list":     {"command-config"},
	}
)

// Run runs `silkworm reassign-partitions` with args (without the command
// name), printing results to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("reassign-partitions", "This tool helps to move topic partitions between replicas.")
	p.Output = stdout
	p.Flag("verify", "Verify if the reassignment completed as specified by the --reassignment-json-file option. "+
		"If there is a throttle engaged for the replicas specified, and the rebalance has completed, the throttle will be removed")
	p.Flag("generate", "Generate a candidate partition reassignment configuration. Note that this only generates a "+
		"candidate assignment, it does not execute it.")
	p.Flag("execute", "Kick off the reassignment as specified by the --reassignment-json-file option.")
	p.Flag("cancel", "Cancel an active reassignment.")
	p.Flag("list", "List all active partition reassignments.")
	bootstrap := p.String("bootstrap-server", "Server(s) to use for bootstrapping", "the server(s) to use for bootstrapping.", "")
	controller := p.String("bootstrap-controller", "bootstrap controller to connect to", "The controller to use for "+
		"reassignment. By default, the tool will get the quorum controller. This option supports the actions --cancel and --list.", "")
	commandConfig := p.String("command-config", "Admin client property file", "Property file containing configs to be passed to Admin Client.", "")
	reassignmentFile := p.String("reassignment-json-file", "manual assignment json file path",
		`The JSON file with the partition reassignment configurationThe format to use is - {"partitions": [{"topic": "foo", `+
			`"partition": 1, "replicas": [1,2,3], "log_dirs": ["dir1","dir2","dir3"] }], "version":1 } Note that "log_dirs" is `+
			`optional. When it is specified, its length must equal the length of the replicas list. The value in this list can be `+
			`either "any" or the absolution path of the log directory on the broker. If absolute log directory path is specified, `+
			`the replica will be moved to the specified log directory on the broker.`, "")
	topicsFile := p.String("topics-to-move-json-file", "topics to reassign json file path",
		`Generate a reassignment configuration to move the partitions of the specified topics to the list of brokers `+
			`specified by the --broker-list option. The format to use is - {"topics": [{"topic": "foo"},{"topic": "foo1"}], "version":1 }`, "")
	brokerList := p.String("broker-list", "brokerlist", `The list of brokers to which the partitions need to be reassigned in `+
		`the form "0,1,2". This is required if --topics-to-move-json-file is used to generate reassignment configuration`, "")
	disableRackAware := p.Flag("disable-rack-aware", "Disable rack aware replica assignment")
	throttle := p.Int64("throttle", "throttle", "The movement of partitions between brokers will be throttled to this "+
		"value (bytes/sec). This option can be included with --execute when a reassignment is started, and it can be "+
		"altered by resubmitting the current reassignment along with the --additional flag. The throttle rate should be at least 1 KB/s.", -1)
	logDirThrottle := p.Int64("replica-alter-log-dirs-throttle", "replicaAlterLogDirsThrottle", "The movement of replicas "+
		"between log directories on the same broker will be throttled to this value (bytes/sec). This option can be included "+
		"with --execute when a reassignment is started, and it can be altered by resubmitting the current reassignment along "+
		"with the --additional flag. The throttle rate should be at least 1 KB/s.", -1)
	timeoutMs := p.Int64("timeout", "timeout", "The maximum time in ms to wait for log directory replica assignment to begin.", 10000)
	p.Flag("additional", "Execute this reassignment in addition to any other ongoing ones. This option can also be used to "+
		"change the throttle of an ongoing reassignment.")
	preserve := p.Flag("preserve-throttles", "Do not modify broker or topic throttles.")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if rest := p.Args(); len(rest) > 0 {
		return fmt.Errorf("Found non argument parameters: %s", strings.Join(rest, ","))
	}
	action, err := checkArgs(p)
	if err != nil {
		return err
	}
	readFile := func(name string) (string, error) {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", name, err)
		}
		return string(b), nil
	}
	var data string
	switch action {
	case "generate":
		data, err = readFile(*topicsFile)
	case "execute", "verify", "cancel":
		data, err = readFile(*reassignmentFile)
	}
	if err != nil {
		return err
	}
	cl, adm, err := cli.NewAdmin(ctx, *commandConfig, cmp.Or(*bootstrap, *controller))
	if err != nil {
		return err
	}
	defer cl.Close()
	a := &Admin{Client: adm, Kafka: cl, Out: stdout, Rand: rand.IntN}
	timeout := time.Duration(*timeoutMs) * time.Millisecond
	switch action {
	case "generate":
		_, _, err = a.Generate(ctx, data, *brokerList, !*disableRackAware)
	case "execute":
		err = a.Execute(ctx, data, ExecuteOptions{Additional: p.Has("additional"), Throttle: *throttle,
			LogDirThrottle: *logDirThrottle, Timeout: timeout})
	case "verify":
		_, err = a.Verify(ctx, data, *preserve)
	case "cancel":
		err = a.Cancel(ctx, data, *preserve, timeout)
	case "list":
		err = a.List(ctx)
	}
	return err
}

// checkArgs is Kafka's validateAndParseArgs: exactly one action, one of
// the bootstrap options, the action's required options, and no option the
// action does not take. It returns the action.
func checkArgs(p *cli.Parser) (string, error) {
	var given []string
	for _, a := range actions {
		if p.Has(a) {
			given = append(given, a)
		}
	}
	if len(given) != 1 {
		dashed := make([]string, len(actions))
		for i, a := range actions {
			dashed[i] = "--" + a
		}
		return "", fmt.Errorf("Command must include exactly one action: %s", strings.Join(dashed, ", "))
	}
	action := given[0]
	switch {
	case p.Has("bootstrap-server") && p.Has("bootstrap-controller"):
		return "", errors.New("Please don't specify both --bootstrap-server and --bootstrap-controller")
	case !p.Has("bootstrap-server") && !p.Has("bootstrap-controller"):
		return "", errors.New("Please specify either --bootstrap-server or --bootstrap-controller")
	}
	for _, r := range required[action] {
		if !p.Has(r) {
			return "", fmt.Errorf("Missing required argument \"[%s]\"", r)
		}
	}
	allowed := append([]string{action}, required[action]...)
	allowed = append(allowed, permitted[action]...)
	if action == "cancel" || action == "list" {
		// These two accept whichever bootstrap option was given.
		allowed = append(allowed, "bootstrap-server", "bootstrap-controller")
	}
	for _, o := range p.Occurrences(allOptions...) {
		if !slices.Contains(allowed, o.Name) {
			return "", fmt.Errorf("Option \"[%s]\" can't be used with action \"[%s]\"", o.Name, action)
		}
	}
	return action, nil
}

// allOptions are the names checkArgs looks for in the command line.
var allOptions = []string{"verify", "generate", "execute", "cancel", "list", "bootstrap-server", "bootstrap-controller",
	"command-config", "reassignment-json-file", "topics-to-move-json-file", "broker-list", "disable-rack-aware",
	"throttle", "replica-alter-log-dirs-throttle", "timeout", "additional", "preserve-throttles"}
