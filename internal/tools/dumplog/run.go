package dumplog

import (
	"errors"
	"io"
	"strings"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Run is `silkworm dump-log`: it parses Kafka's kafka-dump-log.sh options
// from args and dumps the files. Help goes to stdout and returns nil.
func Run(args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("dump-log", "This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly corrupt log segment.")
	p.Output = stdout
	def := DefaultOptions()
	files := p.String("files", "file1, file2, ...", "REQUIRED: The comma separated list of data and index log files to be dumped.", "")
	printData := p.Flag("print-data-log", "If set, print the keys and values of the records when dumping data logs. Implies --deep-iteration.")
	verify := p.Flag("verify-index-only", "If set, only check the index against the log without printing its entries.")
	sanity := p.Flag("index-sanity-check", "If set, only check that the index is well formed without printing its entries.")
	deep := p.Flag("deep-iteration", "If set, print every record instead of only the batches. Implied by --print-data-log.")
	skipMeta := p.Flag("skip-record-metadata", "If set, leave out the offset, timestamp and size of each record.")
	maxBytes := p.Int("max-bytes", "size", "Read at most this many bytes of each .log file instead of the whole file.", def.MaxBytes)
	maxMsg := p.Int("max-message-size", "size", "Size of the largest batch looked at when checking an index.", def.MaxMessageSize)
	p.Ignored("value-decoder-class", "class", "Accepted for compatibility; values are always printed as UTF-8 strings.")
	p.Ignored("key-decoder-class", "class", "Accepted for compatibility; keys are always printed as UTF-8 strings.")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if err := p.Require("files"); err != nil {
		return err
	}
	opts := Options{
		PrintDataLog: *printData, DeepIteration: *deep, VerifyIndexOnly: *verify, IndexSanityCheck: *sanity,
		SkipRecordMetadata: *skipMeta, MaxBytes: *maxBytes, MaxMessageSize: *maxMsg,
	}
	for _, f := range strings.Split(*files, ",") {
		if f = strings.TrimSpace(f); f != "" {
			opts.Files = append(opts.Files, f)
		}
	}
	return Dump(opts, stdout, stderr)
}
