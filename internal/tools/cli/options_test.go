package cli

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/silkworm/silkworm/internal/tools/golden"
)

// checkGolden compares got with testdata/name, or rewrites the file under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

type testOpts struct {
	p        *Parser
	topic    *string
	n        *int64
	parts    *int
	tput     *float64
	begin    *bool
	props    *[]string
	producer *[]string
}

func newTestParser() testOpts {
	p := NewParser("test", "A tool to test the option parser.")
	return testOpts{
		p:        p,
		topic:    p.String("topic", "topic", "The topic to use.", ""),
		n:        p.Int64("num-records", "NUM-RECORDS", "Number of records.", 10),
		parts:    p.Int("partitions", "# of partitions", "The number of partitions.", 0),
		tput:     p.Float64("throughput", "THROUGHPUT", "Records per second; -1 for no limit.", 0),
		begin:    p.Flag("from-beginning", "Start with the earliest message present in the log rather than the latest message."),
		props:    p.List("property", "prop", "A property, key=value; repeat for more."),
		producer: p.Multi("producer-props", "PROP-NAME=PROP-VALUE", "Producer properties like bootstrap.servers."),
	}
}

func TestParseKafkaForms(t *testing.T) {
	o := newTestParser()
	args := []string{"--topic", "t1", "--num-records=5", "--throughput", "-1", "--from-beginning",
		"--producer-props", "acks=1", "linger.ms=5", "--property", "a=b", "--property=c=d", "extra", "--partitions", "3"}
	if err := o.p.Parse(args); err != nil {
		t.Fatal(err)
	}
	if *o.topic != "t1" || *o.n != 5 || *o.tput != -1 || !*o.begin || *o.parts != 3 {
		t.Errorf("topic=%q n=%d throughput=%v begin=%v partitions=%d", *o.topic, *o.n, *o.tput, *o.begin, *o.parts)
	}
	if want := []string{"acks=1", "linger.ms=5"}; !reflect.DeepEqual(*o.producer, want) {
		t.Errorf("producer-props = %q, want %q", *o.producer, want)
	}
	if want := []string{"a=b", "c=d"}; !reflect.DeepEqual(*o.props, want) {
		t.Errorf("property = %q, want %q", *o.props, want)
	}
	if want := []string{"extra"}; !reflect.DeepEqual(o.p.Args(), want) {
		t.Errorf("args = %q, want %q", o.p.Args(), want)
	}
	if !o.p.Has("topic") || o.p.Has("partitions") == false || o.p.Has("property") == false {
		t.Error("Has does not report given options")
	}
	if err := o.p.Require("topic", "num-records"); err != nil {
		t.Error(err)
	}
}

func TestParseDefaults(t *testing.T) {
	o := newTestParser()
	if err := o.p.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if *o.n != 10 || o.p.Has("num-records") {
		t.Errorf("default num-records = %d, given=%v", *o.n, o.p.Has("num-records"))
	}
	err := o.p.Require("topic")
	if err == nil || err.Error() != `missing required argument "[topic]"` {
		t.Errorf("Require error = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "--nope is not a recognized option"},
		{[]string{"--zookeeper", "localhost:2181"}, "ZooKeeper"},
		{[]string{"--num-records", "ten"}, `cannot parse argument "ten" of option --num-records`},
		{[]string{"--partitions", "99999999999"}, "--partitions"},
		{[]string{"--throughput", "fast"}, "--throughput"},
		{[]string{"--topic"}, "option --topic requires an argument"},
		{[]string{"--producer-props", "--topic", "x"}, "--producer-props requires at least one argument"},
		{[]string{"--from-beginning=yes"}, "does not take a value"},
	} {
		o := newTestParser()
		err := o.p.Parse(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestRequireOneOf(t *testing.T) {
	o := newTestParser()
	if err := o.p.Parse([]string{"--topic", "a", "--partitions", "1"}); err != nil {
		t.Fatal(err)
	}
	if err := o.p.RequireOneOf("topic", "throughput"); err != nil {
		t.Error(err)
	}
	if err := o.p.RequireOneOf("topic", "partitions"); err == nil {
		t.Error("two given: want error")
	}
	if err := o.p.RequireOneOf("throughput", "num-records"); err == nil {
		t.Error("none given: want error")
	}
}

func TestHelpGolden(t *testing.T) {
	o := newTestParser()
	var out bytes.Buffer
	o.p.Output = &out
	if err := o.p.Parse([]string{"--topic", "x", "--help"}); !errors.Is(err, ErrHelp) {
		t.Fatalf("Parse(--help) = %v, want ErrHelp", err)
	}
	checkGolden(t, "help.golden", out.Bytes())
}

func TestListWithDefaultChoiceAndOccurrences(t *testing.T) {
	p := NewParser("test", "")
	ops := p.ListWithDefault("operation", "", "An operation.", "All")
	pattern := p.Choice("resource-pattern-type", []string{"ANY", "LITERAL"}, "A pattern type.", "LITERAL")
	p.List("entity-name", "", "A name.")
	p.Flag("entity-default", "The default.")
	p.Flag("list", "List.")
	p.Flag("add", "Add.")
	if err := p.Parse([]string{"--entity-name", "a", "--entity-default", "--resource-pattern-type", "any", "--entity-name=b", "--list"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"All"}; !reflect.DeepEqual(*ops, want) {
		t.Errorf("default list = %q, want %q", *ops, want)
	}
	if *pattern != "ANY" {
		t.Errorf("choice = %q, want the spelling of the choices, ANY", *pattern)
	}
	want := []Occurrence{{"entity-name", "a"}, {"entity-default", ""}, {"entity-name", "b"}}
	if got := p.Occurrences("entity-name", "entity-default"); !reflect.DeepEqual(got, want) {
		t.Errorf("Occurrences = %v, want %v", got, want)
	}
	if err := p.CheckInvalid("list", "add"); err != nil {
		t.Error(err)
	}
	if err := p.CheckInvalid("list", "add", "entity-name"); err == nil || err.Error() != `Option "[list]" can't be used with option "[entity-name]"` {
		t.Errorf("CheckInvalid = %v", err)
	}

	p = NewParser("test", "")
	ops = p.ListWithDefault("operation", "", "An operation.", "All")
	pattern = p.Choice("resource-pattern-type", []string{"ANY", "LITERAL"}, "A pattern type.", "LITERAL")
	if err := p.Parse([]string{"--operation", "Read", "--operation", "Write"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"Read", "Write"}; !reflect.DeepEqual(*ops, want) || *pattern != "LITERAL" {
		t.Errorf("given list = %q (want %q), choice default = %q", *ops, want, *pattern)
	}
	if err := p.Parse([]string{"--resource-pattern-type", "regex"}); err == nil || !strings.Contains(err.Error(), "expected one of ANY|LITERAL") {
		t.Errorf("bad choice: %v", err)
	}
	var out bytes.Buffer
	p.PrintUsage(&out)
	for _, line := range []string{"--operation <String>", "(default: All)", "--resource-pattern-type <ANY|LITERAL>"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("usage lacks %q:\n%s", line, out.String())
		}
	}
}
