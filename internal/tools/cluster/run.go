package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// ClusterID asks the cluster for its id (DescribeCluster); "" when the
// broker has none.
func ClusterID(ctx context.Context, cl *kgo.Client) (string, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return "", err
	}
	if err := errWithMessage(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return "", err
	}
	return resp.ClusterID, nil
}

// ErrUnsupported is returned by Unregister when the cluster does not
// serve UnregisterBroker.
var ErrUnsupported = errors.New("the cluster does not support UnregisterBroker")

// Unregister removes broker id's registration (UnregisterBroker, sent to
// the controller through cl).
func Unregister(ctx context.Context, cl *kgo.Client, id int32) error {
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = id
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		if errors.Is(err, kerr.UnsupportedVersion) || strings.Contains(err.Error(), "broker is too old") {
			return ErrUnsupported
		}
		return err
	}
	if errors.Is(kerr.ErrorForCode(resp.ErrorCode), kerr.UnsupportedVersion) {
		return ErrUnsupported
	}
	return errWithMessage(resp.ErrorCode, resp.ErrorMessage)
}

// errWithMessage is how Kafka's tool prints a failed call: the exception's
// class and the broker's message (or the error's description).
func errWithMessage(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err
	}
	text := ke.Description
	if msg != nil && *msg != "" {
		text = *msg
	}
	return fmt.Errorf("%s: %s", "org.apache.kafka.common.errors."+cli.JavaErrorClass(code), text)
}

// Run runs `silkworm cluster` with args (without the command name),
// writing results to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("cluster", "The Kafka cluster tool. Commands: cluster-id (get information about the ID of a cluster), unregister (unregister a broker).")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "", "A list of host/port pairs to use for establishing the connection to the Kafka cluster.", "")
	controllers := p.String("bootstrap-controller", "", "A list of host/port pairs to use for establishing the connection to the KRaft controllers. Silkworm's controllers answer on the brokers' listeners: give broker addresses.", "")
	configPath := p.String("config", "", "A property file containing configurations for the Admin client.", "")
	commandConfig := p.String("command-config", "", "Property file containing configs to be passed to Admin Client (the same as --config).", "")
	id := p.Int("id", "", "unregister: The ID of the broker to unregister.", 0)
	short := map[string]string{"-b": "--bootstrap-server", "-C": "--bootstrap-controller", "-c": "--config", "-i": "--id"}
	expanded := make([]string, len(args))
	for i, a := range args {
		if long, ok := short[a]; ok {
			a = long
		}
		expanded[i] = a
	}
	if err := p.Parse(expanded); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	rest := p.Args()
	if len(rest) == 0 {
		return errors.New("too few arguments: a command is required (cluster-id, unregister)")
	}
	cmd := rest[0]
	if cmd != "cluster-id" && cmd != "unregister" {
		return fmt.Errorf("invalid choice: '%s' (choose from 'cluster-id', 'unregister')", cmd)
	}
	if len(rest) > 1 {
		return fmt.Errorf("unrecognized arguments: '%s'", strings.Join(rest[1:], " "))
	}
	if err := p.RequireOneOf("bootstrap-server", "bootstrap-controller"); err != nil {
		return err
	}
	if cmd == "unregister" && !p.Has("id") {
		return errors.New("argument --id/-i is required")
	}
	if cmd == "cluster-id" && p.Has("id") {
		return errors.New("unrecognized arguments: '--id'")
	}
	cl, _, err := cli.NewAdmin(ctx, cmp.Or(*commandConfig, *configPath), cmp.Or(*bootstrap, *controllers))
	if err != nil {
		return err
	}
	defer cl.Close()
	switch cmd {
	case "cluster-id":
		cid, err := ClusterID(ctx, cl)
		if err != nil {
			return err
		}
		if cid == "" {
			_, err = fmt.Fprintln(stdout, "No cluster ID found. The Kafka version is probably too old.")
			return err
		}
		_, err = fmt.Fprintf(stdout, "Cluster ID: %s\n", cid)
		return err
	default:
		err := Unregister(ctx, cl, int32(*id))
		switch {
		case errors.Is(err, ErrUnsupported):
			_, err = fmt.Fprintln(stdout, "The target cluster does not support the broker unregistration API.")
			return err
		case err != nil:
			return err
		}
		_, err = fmt.Fprintf(stdout, "Broker %d is no longer registered.\n", *id)
		return err
	}
}
