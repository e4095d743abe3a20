package storagetool

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/storage"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

const metaPropertiesFile = "meta.properties"

// latestReleaseVersion is the metadata.version a new cluster is formatted
// with (Kafka's latest production version, the broker's top level).
const latestReleaseVersion = "4.2-IV1"

// releaseVersions are the metadata.version names format accepts, from
// 3.3-IV3 (Kafka's minimum bootstrap version).
var releaseVersions = []string{
	"3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
	"3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0",
	"4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1",
}

// releaseFeatures is the feature levels a cluster formatted for release
// starts with: its metadata.version (3.3-IV3 is level 7, each later
// version one more) and, for each other feature, the highest level whose
// bootstrap metadata.version the release reaches (Kafka's
// Feature.defaultLevel): transaction.version 2 and group.version 1 from
// 4.0 (4.0-IV2, 4.0-IV0), share.version and streams.version 1 from
// 4.1-IV0.
func releaseFeatures(release string) map[string]int16 {
	mv := int16(7 + slices.Index(releaseVersions, release))
	from := func(need, level int16) int16 {
		if mv >= need {
			return level
		}
		return 0
	}
	return map[string]int16{
		"metadata.version":    mv,
		"transaction.version": from(24, 2),
		"group.version":       from(22, 1),
		"share.version":       from(26, 1),
		"streams.version":     from(26, 1),
	}
}

// releaseVersion is MetadataVersion.fromVersionString: a full name, or a
// release ("3.9") meaning its last IV.
func releaseVersion(s string) (string, bool) {
	found := ""
	for _, v := range releaseVersions {
		if rel, _, _ := strings.Cut(v, "-"); v == s || rel == s {
			found = v
		}
	}
	return found, found != ""
}

// RandomUUID is Kafka's Uuid.randomUuid: a random version-4 UUID whose
// text does not start with '-' (so it is never taken for an option).
func RandomUUID() string {
	for {
		var id [16]byte
		_, _ = rand.Read(id[:])
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		if s := storage.FormatUUID(id); !strings.HasPrefix(s, "-") && id != ([16]byte{}) && id != ([16]byte{15: 1}) {
			return s
		}
	}
}

// MetaProperties is the content of a log dir's meta.properties (KRaft,
// version 1).
type MetaProperties struct {
	ClusterID   string
	NodeID      int32
	DirectoryID string
}

// encode writes the file as Silkworm's storage writes it.
func (m MetaProperties) encode() []byte {
	var b strings.Builder
	b.WriteString("#\n#Written by silkworm storage format\n")
	fmt.Fprintf(&b, "cluster.id=%s\n", m.ClusterID)
	if m.DirectoryID != "" {
		fmt.Fprintf(&b, "directory.id=%s\n", m.DirectoryID)
	}
	fmt.Fprintf(&b, "node.id=%d\nversion=1\n", m.NodeID)
	return []byte(b.String())
}

// readMetaProperties returns the properties of dir's meta.properties; a
// missing file is os.ErrNotExist.
func readMetaProperties(dir string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(dir, metaPropertiesFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return config.ParseProperties(f)
}

// FormatOptions are format's arguments besides the configuration.
type FormatOptions struct {
	ClusterID            string
	IgnoreFormatted      bool
	ReleaseVersion       string // "" for the latest
	Standalone           bool
	InitialControllers   string
	NoInitialControllers bool
	// Scram are the --add-scram credentials, written next to the metadata
	// directory's meta.properties for the broker's first start.
	Scram []metadata.ScramChange
}

// dirs are the directories of a configuration, sorted (Kafka's
// configToLogDirectories), and the metadata directory among them.
func dirs(cfg *config.Broker) (all []string, metadataDir string) {
	all = slices.Clone(cfg.LogDirs)
	sort.Strings(all)
	all = slices.Compact(all)
	if len(cfg.LogDirs) > 0 {
		metadataDir = cfg.LogDirs[0]
	}
	return all, metadataDir
}

func isController(cfg *config.Broker) bool {
	return len(cfg.ProcessRoles) == 0 || slices.Contains(cfg.ProcessRoles, "controller")
}

// Format writes meta.properties in every log dir of cfg, printing
// Kafka's lines to w.
func Format(w io.Writer, cfg *config.Broker, o FormatOptions) error {
	if o.ClusterID == "" {
		return errors.New("You must specify the cluster id.")
	}
	// Kafka 4's format takes the id as given (3.x parsed it as a UUID):
	// kafka-python's fixture passes standard base64 ids with '+' and '/'.
	release := latestReleaseVersion
	if o.ReleaseVersion != "" {
		v, ok := releaseVersion(o.ReleaseVersion)
		if !ok {
			return fmt.Errorf("Unknown release version '%s'. Supported versions are: %s to %s",
				o.ReleaseVersion, releaseVersions[0], latestReleaseVersion)
		}
		release = v
	}
	n := 0
	for _, b := range []bool{o.Standalone, o.InitialControllers != "", o.NoInitialControllers} {
		if b {
			n++
		}
	}
	if n > 1 {
		return errors.New("argument --standalone/-s: not allowed with argument --initial-controllers/-I or --no-initial-controllers/-N")
	}
	if o.Standalone && !isController(cfg) {
		return errors.New("You can only use --standalone on a controller.")
	}
	var initial []dynamicVoter
	if o.InitialControllers != "" {
		var err error
		if initial, err = parseDynamicVoters(o.InitialControllers); err != nil {
			return err
		}
	}
	if isController(cfg) && len(cfg.ControllerQuorumVoters) == 0 && n == 0 {
		return errors.New("Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.")
	}
	all, metadataDir := dirs(cfg)
	if len(all) == 0 {
		return errors.New("You must specify at least one directory to format")
	}
	var empty []string
	var formatted []string
	for _, d := range all {
		props, err := readMetaProperties(d)
		switch {
		case errors.Is(err, os.ErrNotExist):
			empty = append(empty, d)
			continue
		case err != nil:
			fmt.Fprintf(w, "I/O error trying to read log directory %s. Ignoring...\n", d)
			continue
		}
		if c := props["cluster.id"]; c != "" && c != o.ClusterID {
			return fmt.Errorf("Invalid cluster.id in: %s. Expected %s, but read %s", filepath.Join(d, metaPropertiesFile), o.ClusterID, c)
		}
		if id := props["node.id"]; id != "" && id != strconv.Itoa(int(cfg.NodeID)) {
			return fmt.Errorf("Stored node id %s doesn't match previous node id %d in %s. If you moved your data, make sure your configured node id matches. If you intend to create a new node, you should remove all data in your data directories.",
				id, cfg.NodeID, filepath.Join(d, metaPropertiesFile))
		}
		formatted = append(formatted, d)
	}
	if len(formatted) > 0 && !o.IgnoreFormatted {
		return fmt.Errorf("Log directory %s is already formatted. Use --ignore-formatted to ignore this directory and format the others.", formatted[0])
	}
	if len(empty) == 0 {
		if len(formatted) == 0 {
			return errors.New("No available log directories to format.")
		}
		_, err := fmt.Fprintln(w, "All of the log directories are already formatted.")
		return err
	}
	for _, d := range empty {
		kind := "data directory"
		mp := MetaProperties{ClusterID: o.ClusterID, NodeID: cfg.NodeID, DirectoryID: RandomUUID()}
		if d == metadataDir {
			kind = "metadata directory"
			switch {
			case o.Standalone:
				kind = "dynamic metadata voter directory"
			case initial != nil:
				kind = "dynamic metadata directory"
				for _, v := range initial {
					if v.id == cfg.NodeID {
						kind, mp.DirectoryID = "dynamic metadata voter directory", v.directoryID
					}
				}
			}
		}
		fmt.Fprintf(w, "Formatting %s %s with metadata.version %s.\n", kind, d, release)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("Error while writing meta.properties file %s: %v", d, err)
		}
		if err := writeFileAtomic(filepath.Join(d, metaPropertiesFile), mp.encode()); err != nil {
			return fmt.Errorf("Error while writing meta.properties file %s: %v", d, err)
		}
		// A standalone quorum is Silkworm's single node; an initial voter
		// set becomes the node's controller.quorum.voters.
		if d == metadataDir && initial != nil {
			if err := metadata.WriteBootstrapVoters(d, votersValue(initial)); err != nil {
				return fmt.Errorf("Error while writing the initial controllers in %s: %v", d, err)
			}
		}
		if d == metadataDir && release != latestReleaseVersion {
			if err := metadata.WriteBootstrapFeatures(d, releaseFeatures(release)); err != nil {
				return fmt.Errorf("Error while writing the feature levels in %s: %v", d, err)
			}
		}
		if d == metadataDir && len(o.Scram) > 0 {
			if err := metadata.WriteBootstrapScram(d, o.Scram); err != nil {
				return fmt.Errorf("Error while writing the SCRAM credentials in %s: %v", d, err)
			}
		}
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// ErrProblems is returned by Info when it reported problems (Kafka exits 1).
var ErrProblems = errors.New("found problems with the log directories")

// Info prints Kafka's `info` report for directories and returns
// ErrProblems when it found any.
func Info(w io.Writer, directories []string) error {
	directories = slices.Clone(directories)
	sort.Strings(directories)
	var problems, found []string
	var first map[string]string
	for _, d := range directories {
		st, err := os.Stat(d)
		switch {
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, d+" does not exist")
			continue
		case err != nil || !st.IsDir():
			problems = append(problems, d+" is not a directory")
			continue
		}
		found = append(found, d)
		props, err := readMetaProperties(d)
		switch {
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, d+" is not formatted.")
			continue
		case err != nil:
			problems = append(problems, fmt.Sprintf("Error loading %s: %v", filepath.Join(d, metaPropertiesFile), err))
			continue
		}
		switch {
		case first == nil:
			first = props
		case first["cluster.id"] != props["cluster.id"]:
			problems = append(problems, "Mismatched cluster IDs between storage directories.")
		case first["node.id"] != props["node.id"]:
			problems = append(problems, "Mismatched node IDs between storage directories.")
		}
	}
	if first != nil && first["version"] == "0" {
		problems = append(problems, "The kafka configuration file appears to be for a cluster in KRaft mode, but the directories are formatted for legacy mode.")
	}
	var b strings.Builder
	if len(directories) == 0 {
		b.WriteString("No directories specified.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	if len(found) > 0 {
		if len(found) == 1 {
			b.WriteString("Found log directory:\n")
		} else {
			b.WriteString("Found log directories:\n")
		}
		for _, d := range found {
			b.WriteString("  " + d + "\n")
		}
		b.WriteString("\n")
	}
	if first != nil {
		keys := make([]string, 0, len(first))
		for k := range first {
			if k == "version" || k == "cluster.id" || k == "node.id" || k == "broker.id" || k == "directory.id" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + first[k]
		}
		b.WriteString("Found metadata: {" + strings.Join(parts, ", ") + "}\n\n")
	}
	if len(problems) > 0 {
		if len(problems) == 1 {
			b.WriteString("Found problem:\n")
		} else {
			b.WriteString("Found problems:\n")
		}
		for _, p := range problems {
			b.WriteString("  " + p + "\n")
		}
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(problems) > 0 {
		return ErrProblems
	}
	return nil
}

// Run runs `silkworm storage` with args (without the command name),
// writing results to stdout.
func Run(args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("storage", "The Kafka storage tool. Commands: info, format, random-uuid.")
	p.Output = stdout
	configPath := p.String("config", "", "The Kafka configuration file to use (info, format).", "")
	clusterID := p.String("cluster-id", "", "format: The cluster ID to use.", "")
	ignoreFormatted := p.Flag("ignore-formatted", "format: When this option is passed, the format command will skip over already formatted directories rather than failing.")
	release := p.String("release-version", "", "format: The release version to use for the initial feature settings. The minimum is 3.3-IV3; the default is "+latestReleaseVersion+".", "")
	standalone := p.Flag("standalone", "format: Used to initialize a controller as a single-node dynamic quorum.")
	noInitial := p.Flag("no-initial-controllers", "format: Used to initialize a server without a dynamic quorum topology.")
	initial := p.String("initial-controllers", "", "format: Used to initialize a server with a specific dynamic quorum topology.", "")
	addScram := p.List("add-scram", "", "format: A SCRAM_CREDENTIAL to add to the __cluster_metadata log e.g. 'SCRAM-SHA-256=[name=alice,password=alice-secret]' or 'SCRAM-SHA-512=[name=alice,iterations=8192,salt=\"N3E=\",saltedpassword=\"YCE=\"]'; the broker adds it at its first start.")
	p.List("feature", "", "format: The setting to use for a specific feature, in feature=level format (not supported).")
	// Kafka's short forms.
	args = expandShort(args, map[string]string{"-c": "--config", "-t": "--cluster-id", "-g": "--ignore-formatted",
		"-r": "--release-version", "-s": "--standalone", "-N": "--no-initial-controllers", "-I": "--initial-controllers",
		"-S": "--add-scram", "-f": "--feature"})
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	rest := p.Args()
	if len(rest) == 0 {
		return errors.New("too few arguments: a command is required (info, format, random-uuid)")
	}
	cmd := rest[0]
	if len(rest) > 1 {
		return fmt.Errorf("unrecognized arguments: '%s'", strings.Join(rest[1:], " "))
	}
	allowed := map[string][]string{
		"random-uuid": {},
		"info":        {"config"},
		"format":      {"config", "cluster-id", "ignore-formatted", "release-version", "standalone", "no-initial-controllers", "initial-controllers", "add-scram", "feature"},
	}
	opts, ok := allowed[cmd]
	if !ok {
		return fmt.Errorf("invalid choice: '%s' (choose from 'info', 'format', 'random-uuid')", cmd)
	}
	for _, o := range allowed["format"] {
		if p.Has(o) && !slices.Contains(opts, o) {
			return fmt.Errorf("unrecognized arguments: '--%s'", o)
		}
	}
	if cmd == "random-uuid" {
		_, err := fmt.Fprintln(stdout, RandomUUID())
		return err
	}
	if err := p.Require("config"); err != nil {
		return fmt.Errorf("argument --config/-c is required")
	}
	if cmd == "format" && !p.Has("cluster-id") {
		return errors.New("argument --cluster-id/-t is required")
	}
	if p.Has("feature") {
		return errors.New("--feature is not supported by silkworm storage format")
	}
	var scram []metadata.ScramChange
	for _, a := range *addScram {
		c, err := parseAddScram(a)
		if err != nil {
			return err
		}
		scram = append(scram, c)
	}
	cfg, err := config.Load(*configPath, nil)
	if err != nil {
		return err
	}
	if cmd == "info" {
		all, _ := dirs(cfg)
		return Info(stdout, all)
	}
	return Format(stdout, cfg, FormatOptions{ClusterID: *clusterID, IgnoreFormatted: *ignoreFormatted, ReleaseVersion: *release,
		Standalone: *standalone, InitialControllers: *initial, NoInitialControllers: *noInitial, Scram: scram})
}

// expandShort turns Kafka's one-letter options into their long names.
func expandShort(args []string, short map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if long, ok := short[a]; ok {
			a = long
		}
		out[i] = a
	}
	return out
}
