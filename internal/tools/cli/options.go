package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ErrHelp is returned by [Parser.Parse] when --help (or -h) was given. The
// usage has then already been written to the parser's Output; a tool returns
// nil so that the command exits 0.
var ErrHelp = errors.New("help requested")

type optionKind int

const (
	kindFlag  optionKind = iota // no value: --from-beginning
	kindValue                   // one value: --topic t, --topic=t
	kindList                    // repeatable, one value each: --property a=b --property c=d
	kindMulti                   // one or more values: --producer-props a=b c=d
)

// Option is one declared option. Its fields are for help output; tools read
// values through the pointers the Parser's declaring methods return.
type Option struct {
	Name    string // without the leading "--"
	Arg     string // what the value is, shown as <Type: Arg>, or <Type> when empty
	Type    string // String, Integer, Long, Double, A|B|C for a choice; empty for a switch
	Help    string
	Default string // shown as (default: ...); empty for none
	kind    optionKind
	set     func(string) error
	given   bool
	ignored bool // accepted for compatibility, does nothing
}

// Parser parses one command line in Kafka's option syntax. Declare options
// first, then call Parse once. Not safe for concurrent use.
type Parser struct {
	// Name is the subcommand name, used in messages.
	Name string
	// Description opens the usage text.
	Description string
	// Output receives the usage text for --help. NewParser sets io.Discard;
	// a tool sets its standard output.
	Output io.Writer

	opts   []*Option
	byName map[string]*Option
	args   []string
	seen   []Occurrence
}

// Occurrence is one option as it was given on the command line: its name
// and its value ("" for a switch).
type Occurrence struct {
	Name  string
	Value string
}

// NewParser returns a parser for the subcommand name. Every parser knows
// --help; the usage text goes to Output.
func NewParser(name, description string) *Parser {
	return &Parser{Name: name, Description: description, Output: io.Discard, byName: map[string]*Option{}}
}

func (p *Parser) add(o *Option) *Option {
	if _, dup := p.byName[o.Name]; dup {
		panic("cli: option --" + o.Name + " declared twice")
	}
	p.opts = append(p.opts, o)
	p.byName[o.Name] = o
	return o
}

// Flag declares a switch that takes no value.
func (p *Parser) Flag(name, help string) *bool {
	v := new(bool)
	p.add(&Option{Name: name, Help: help, kind: kindFlag, set: func(string) error { *v = true; return nil }})
	return v
}

// Ignored declares a switch or valued option that is accepted for
// compatibility with older Kafka versions and has no effect. arg is empty
// for a switch.
func (p *Parser) Ignored(name, arg, help string) {
	k := kindFlag
	typ := ""
	if arg != "" {
		k, typ = kindValue, "String"
	}
	p.add(&Option{Name: name, Arg: arg, Type: typ, Help: help, kind: k, ignored: true, set: func(string) error { return nil }})
}

// String declares an option with one string value.
func (p *Parser) String(name, arg, help, def string) *string {
	v := new(string)
	*v = def
	p.add(&Option{Name: name, Arg: arg, Type: "String", Help: help, Default: def, kind: kindValue,
		set: func(s string) error { *v = s; return nil }})
	return v
}

// Int declares an option with one 32-bit integer value.
func (p *Parser) Int(name, arg, help string, def int) *int {
	v := new(int)
	*v = def
	p.add(&Option{Name: name, Arg: arg, Type: "Integer", Help: help, Default: defaultString(def != 0, strconv.Itoa(def)), kind: kindValue,
		set: func(s string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
			if err != nil {
				return fmt.Errorf("cannot parse argument %q of option --%s: not an integer", s, name)
			}
			*v = int(n)
			return nil
		}})
	return v
}

// Int64 declares an option with one 64-bit integer value (Kafka's Long).
func (p *Parser) Int64(name, arg, help string, def int64) *int64 {
	v := new(int64)
	*v = def
	p.add(&Option{Name: name, Arg: arg, Type: "Long", Help: help, Default: defaultString(def != 0, strconv.FormatInt(def, 10)), kind: kindValue,
		set: func(s string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return fmt.Errorf("cannot parse argument %q of option --%s: not an integer", s, name)
			}
			*v = n
			return nil
		}})
	return v
}

// Float64 declares an option with one floating-point value (Kafka's Double).
func (p *Parser) Float64(name, arg, help string, def float64) *float64 {
	v := new(float64)
	*v = def
	p.add(&Option{Name: name, Arg: arg, Type: "Double", Help: help, Default: defaultString(def != 0, strconv.FormatFloat(def, 'g', -1, 64)), kind: kindValue,
		set: func(s string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return fmt.Errorf("cannot parse argument %q of option --%s: not a number", s, name)
			}
			*v = f
			return nil
		}})
	return v
}

// List declares a repeatable option taking one value each time it is given:
// --property a=b --property c=d yields [a=b c=d].
func (p *Parser) List(name, arg, help string) *[]string {
	v := new([]string)
	p.add(&Option{Name: name, Arg: arg, Type: "String", Help: help, kind: kindList,
		set: func(s string) error { *v = append(*v, s); return nil }})
	return v
}

// Multi declares an option that takes one or more values, all arguments up to
// the next one starting with "--": --producer-props a=b c=d. It may also be
// repeated.
func (p *Parser) Multi(name, arg, help string) *[]string {
	v := new([]string)
	p.add(&Option{Name: name, Arg: arg, Type: "String", Help: help, kind: kindMulti,
		set: func(s string) error { *v = append(*v, s); return nil }})
	return v
}

// ListWithDefault is List with a value used when the option is not given:
// the first value given replaces def. Help shows def joined by commas.
func (p *Parser) ListWithDefault(name, arg, help string, def ...string) *[]string {
	v := new([]string)
	*v = append([]string(nil), def...)
	replaced := false
	p.add(&Option{Name: name, Arg: arg, Type: "String", Help: help, Default: strings.Join(def, ","), kind: kindList,
		set: func(s string) error {
			if !replaced {
				*v, replaced = nil, true
			}
			*v = append(*v, s)
			return nil
		}})
	return v
}

// Choice declares an option with one value out of choices, matched without
// regard to case (as joptsimple's enum converter does); the value stored is
// the choice as spelt in choices. Help shows <A|B|C>.
func (p *Parser) Choice(name string, choices []string, help, def string) *string {
	v := new(string)
	*v = def
	pattern := strings.Join(choices, "|")
	p.add(&Option{Name: name, Type: pattern, Help: help, Default: def, kind: kindValue,
		set: func(s string) error {
			for _, c := range choices {
				if strings.EqualFold(strings.TrimSpace(s), c) {
					*v = c
					return nil
				}
			}
			return fmt.Errorf("cannot parse argument %q of option --%s: expected one of %s", s, name, pattern)
		}})
	return v
}

func defaultString(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

// Parse reads args (without the subcommand name). It returns ErrHelp after
// writing the usage for --help, and an error naming the option for an
// unknown option, a missing value or a value of the wrong type. Arguments
// that are not options are kept for [Parser.Args].
func (p *Parser) Parse(args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--help" || a == "-h" {
			p.PrintUsage(p.Output)
			return ErrHelp
		}
		if a == "--" {
			p.args = append(p.args, args[i+1:]...)
			return nil
		}
		if !strings.HasPrefix(a, "--") || a == "--" {
			p.args = append(p.args, a)
			continue
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		o, ok := p.byName[name]
		if !ok {
			if name == "zookeeper" {
				return fmt.Errorf("option --zookeeper is not supported: Silkworm does not use ZooKeeper; pass --bootstrap-server host:port instead")
			}
			return fmt.Errorf("%s is not a recognized option (see --help)", a)
		}
		o.given = true
		switch o.kind {
		case kindFlag:
			if hasValue {
				return fmt.Errorf("option --%s does not take a value", name)
			}
			if err := o.set(""); err != nil {
				return err
			}
			p.seen = append(p.seen, Occurrence{Name: name})
		case kindValue, kindList:
			if !hasValue {
				if i+1 >= len(args) {
					return fmt.Errorf("option --%s requires an argument", name)
				}
				i++
				value = args[i]
			}
			if err := o.set(value); err != nil {
				return err
			}
			p.seen = append(p.seen, Occurrence{Name: name, Value: value})
		case kindMulti:
			n := 0
			if hasValue {
				if err := o.set(value); err != nil {
					return err
				}
				p.seen = append(p.seen, Occurrence{Name: name, Value: value})
				n++
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				if err := o.set(args[i]); err != nil {
					return err
				}
				p.seen = append(p.seen, Occurrence{Name: name, Value: args[i]})
				n++
			}
			if n == 0 {
				return fmt.Errorf("option --%s requires at least one argument", name)
			}
		}
	}
	return nil
}

// Args returns the arguments that were not options, in order.
func (p *Parser) Args() []string { return p.args }

// Occurrences returns the options among names in the order they were given,
// one entry per value (an option given twice appears twice). Kafka's
// kafka-configs.sh pairs each --entity-type with the --entity-name or
// --entity-default given at its position this way.
func (p *Parser) Occurrences(names ...string) []Occurrence {
	var out []Occurrence
	for _, o := range p.seen {
		for _, n := range names {
			if o.Name == n {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// CheckInvalid returns an error in Kafka's wording (CommandLineUtils.
// checkInvalidArgs) when used was given together with any of invalid:
// Option "[list]" can't be used with option "[producer]".
func (p *Parser) CheckInvalid(used string, invalid ...string) error {
	if !p.Has(used) {
		return nil
	}
	for _, n := range invalid {
		if p.Has(n) {
			return fmt.Errorf("Option \"[%s]\" can't be used with option \"[%s]\"", used, n)
		}
	}
	return nil
}

// Has reports whether the option was given on the command line. It panics
// for an undeclared name, which is a programming error.
func (p *Parser) Has(name string) bool {
	o, ok := p.byName[name]
	if !ok {
		panic("cli: Has of undeclared option --" + name)
	}
	return o.given
}

// Require returns an error in Kafka's wording for the first of names that was
// not given: Missing required argument "[topic]".
func (p *Parser) Require(names ...string) error {
	for _, n := range names {
		if !p.Has(n) {
			return fmt.Errorf("missing required argument \"[%s]\"", n)
		}
	}
	return nil
}

// RequireOneOf returns an error unless exactly one of names was given.
func (p *Parser) RequireOneOf(names ...string) error {
	var given []string
	for _, n := range names {
		if p.Has(n) {
			given = append(given, "--"+n)
		}
	}
	if len(given) == 1 {
		return nil
	}
	dashed := make([]string, len(names))
	for i, n := range names {
		dashed[i] = "--" + n
	}
	if len(given) == 0 {
		return fmt.Errorf("exactly one of %s must be specified", strings.Join(dashed, ", "))
	}
	return fmt.Errorf("only one of %s may be specified, got %s", strings.Join(dashed, ", "), strings.Join(given, " and "))
}

const (
	usageLeftWidth  = 40
	usageRightWidth = 40
)

// PrintUsage writes the description and an option table laid out like
// Kafka's (joptsimple) help: option and argument on the left, description on
// the right, both wrapped.
func (p *Parser) PrintUsage(w io.Writer) {
	var b strings.Builder
	if p.Description != "" {
		b.WriteString(p.Description)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%-*s %s\n", usageLeftWidth, "Option", "Description")
	fmt.Fprintf(&b, "%-*s %s\n", usageLeftWidth, "------", "-----------")
	opts := make([]*Option, 0, len(p.opts)+1)
	opts = append(opts, p.opts...)
	opts = append(opts, &Option{Name: "help", Help: "Print usage information."})
	sortOptions(opts)
	for _, o := range opts {
		left := "--" + o.Name
		switch {
		case o.Type != "" && o.Arg != "":
			left += " <" + o.Type + ": " + o.Arg + ">"
		case o.Type != "":
			left += " <" + o.Type + ">"
		}
		help := o.Help
		if o.Default != "" {
			help += " (default: " + o.Default + ")"
		}
		ls := wrap(left, usageLeftWidth, "  ")
		rs := wrap(help, usageRightWidth, "  ")
		for i := 0; i < len(ls) || i < len(rs); i++ {
			l, r := "", ""
			if i < len(ls) {
				l = ls[i]
			}
			if i < len(rs) {
				r = rs[i]
			}
			line := fmt.Sprintf("%-*s %s", usageLeftWidth, l, r)
			b.WriteString(strings.TrimRight(line, " "))
			b.WriteString("\n")
		}
	}
	io.WriteString(w, b.String())
}

// sortOptions orders options by name, as joptsimple does.
func sortOptions(opts []*Option) {
	for i := 1; i < len(opts); i++ {
		for j := i; j > 0 && opts[j].Name < opts[j-1].Name; j-- {
			opts[j], opts[j-1] = opts[j-1], opts[j]
		}
	}
}

// wrap breaks s into lines of at most width runes at spaces; continuation
// lines start with indent. A word longer than width gets a line of its own.
func wrap(s string, width int, indent string) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			if len(lines) > 0 {
				line = indent
			}
			line += word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = indent + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// OptionalValues lets the named options stand alone, as Kafka's options
// with an optional value do (--state, --type): one followed by another
// option or by nothing gets an empty value before parsing.
func OptionalValues(args []string, names ...string) []string {
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		out = append(out, a)
		if slices.Contains(names, a) && (i+1 == len(args) || strings.HasPrefix(args[i+1], "--")) {
			out = append(out, "")
		}
	}
	return out
}
