package features

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Feature is one feature as ApiVersions describes it.
type Feature struct {
	Name         string
	SupportedMin int16
	SupportedMax int16
	Finalized    int16 // 0 when not finalized
}

// Metadata is Kafka's FeatureMetadata. Epoch is -1 when the broker did
// not say.
type Metadata struct {
	Features []Feature
	Epoch    int64
}

// Describe asks a broker for the features (ApiVersions v3+).
func Describe(ctx context.Context, cl *kgo.Client) (*Metadata, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName = "silkworm-features"
	req.ClientSoftwareVersion = "1"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	md := &Metadata{Epoch: resp.FinalizedFeaturesEpoch}
	finalized := map[string]int16{}
	for _, f := range resp.FinalizedFeatures {
		finalized[f.Name] = f.MaxVersionLevel
	}
	for _, f := range resp.SupportedFeatures {
		md.Features = append(md.Features, Feature{Name: f.Name, SupportedMin: f.MinVersion, SupportedMax: f.MaxVersion,
			Finalized: finalized[f.Name]})
	}
	return md, nil
}

func levelString(feature string, level int16) string {
	if feature == MetadataVersionFeature {
		return MetadataVersionName(level)
	}
	return strconv.Itoa(int(level))
}

// WriteDescribe prints `describe`: one line per supported feature, in
// name order.
func WriteDescribe(w io.Writer, md *Metadata) error {
	features := slices.Clone(md.Features)
	slices.SortFunc(features, func(a, b Feature) int { return cmp.Compare(a.Name, b.Name) })
	epoch := "-"
	if md.Epoch >= 0 {
		epoch = strconv.FormatInt(md.Epoch, 10)
	}
	var b strings.Builder
	for _, f := range features {
		fmt.Fprintf(&b, "Feature: %s\tSupportedMinVersion: %s\tSupportedMaxVersion: %s\tFinalizedVersionLevel: %s\tEpoch: %s\n",
			f.Name, levelString(f.Name, f.SupportedMin), levelString(f.Name, f.SupportedMax), levelString(f.Name, f.Finalized), epoch)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Upgrade types of UpdateFeatures (Kafka's FeatureUpdate.UpgradeType).
const (
	Upgrade         int8 = 1
	SafeDowngrade   int8 = 2
	UnsafeDowngrade int8 = 3
)

// Update is one feature change.
type Update struct {
	Feature     string
	Level       int16
	UpgradeType int8
}

// Apply sends UpdateFeatures (ValidateOnly for a dry run) and returns the
// error of each feature: nil for success. Kafka 4's v2 answer carries only
// the top-level error, which then applies to every feature.
func Apply(ctx context.Context, cl *kgo.Client, updates []Update, dryRun bool) (map[string]error, error) {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.TimeoutMillis = 30000
	req.ValidateOnly = dryRun
	for _, u := range updates {
		fu := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		fu.Feature = u.Feature
		fu.MaxVersionLevel = u.Level
		fu.UpgradeType = u.UpgradeType
		fu.AllowDowngrade = u.UpgradeType != Upgrade
		req.FeatureUpdates = append(req.FeatureUpdates, fu)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := map[string]error{}
	top := errWithMessage(resp.ErrorCode, resp.ErrorMessage)
	for _, u := range updates {
		out[u.Feature] = top
	}
	for _, r := range resp.Results {
		if top == nil {
			out[r.Feature] = errWithMessage(r.ErrorCode, r.ErrorMessage)
		}
	}
	return out, nil
}

// errWithMessage is the error the admin client raises: the broker's
// message when there is one, else the error's description.
func errWithMessage(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if msg != nil && *msg != "" {
		return errors.New(*msg)
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return errors.New(ke.Description)
	}
	return err
}

// WriteUpdateResults prints the outcome of op ("upgrade", "downgrade" or
// "disable") per feature in name order, as Kafka, and returns "N out of M
// operation(s) failed." when any failed.
func WriteUpdateResults(w io.Writer, op string, updates []Update, results map[string]error, dryRun bool) error {
	sorted := slices.Clone(updates)
	slices.SortFunc(sorted, func(a, b Update) int { return cmp.Compare(a.Feature, b.Feature) })
	var b strings.Builder
	failures := 0
	for _, u := range sorted {
		if err := results[u.Feature]; err != nil {
			failures++
			helper := "Could not "
			if dryRun {
				helper = "Can not "
			}
			what := fmt.Sprintf("%s %s to %d", op, u.Feature, u.Level)
			if op == "disable" {
				what = "disable " + u.Feature
			}
			fmt.Fprintf(&b, "%s%s. %s\n", helper, what, err.Error())
			continue
		}
		verb := " was "
		if dryRun {
			verb = " can be "
		}
		obj := fmt.Sprintf("%sd to %d.", op, u.Level)
		if op == "disable" {
			obj = "disabled."
		}
		fmt.Fprintf(&b, "%s%s%s\n", u.Feature, verb, obj)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if failures > 0 {
		return fmt.Errorf("%d out of %d operation(s) failed.", failures, len(updates))
	}
	return nil
}

// WriteVersionMapping prints `version-mapping` for a release version
// ("" for the latest production one).
func WriteVersionMapping(w io.Writer, release string) error {
	if release == "" {
		release = MetadataVersionName(latestMetadataVersion)
	}
	mv, ok := ParseMetadataVersion(release)
	if !ok {
		return fmt.Errorf("Unknown release version '%s'. Supported versions are: %s to %s", release,
			MetadataVersionName(minMetadataVersion), MetadataVersionName(latestMetadataVersion))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "metadata.version=%d (%s)\n", mv, release)
	for _, f := range productionFeatures {
		fmt.Fprintf(&b, "%s=%d\n", f.name, f.defaultLevel(mv))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteDependencies prints `feature-dependencies` for feature=level
// arguments.
func WriteDependencies(w io.Writer, args []string) error {
	var b strings.Builder
	for _, a := range args {
		name, level, err := parseNameAndLevel(a)
		if err != nil {
			return err
		}
		if name == MetadataVersionFeature {
			if level < minMetadataVersion || int(level-minMetadataVersion) >= len(metadataVersions) {
				return fmt.Errorf("Unknown metadata.version %d", level)
			}
			fmt.Fprintf(&b, "%s=%d (%s) has no dependencies.\n", name, level, MetadataVersionName(level))
			continue
		}
		i := slices.IndexFunc(productionFeatures, func(f productionFeature) bool { return f.name == name })
		if i < 0 {
			return fmt.Errorf("Unknown feature: %s", name)
		}
		f := productionFeatures[i]
		if level < 0 || int(level) > len(f.needs) {
			return fmt.Errorf("No feature:%s with feature level %d", name, level)
		}
		if level == 0 || f.needs[level-1] == 0 {
			fmt.Fprintf(&b, "%s=%d has no dependencies.\n", name, level)
			continue
		}
		mv := f.needs[level-1]
		fmt.Fprintf(&b, "%s=%d requires:\n    %s=%d (%s)\n", name, level, MetadataVersionFeature, mv, MetadataVersionName(mv))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func parseNameAndLevel(s string) (string, int16, error) {
	name, levelText, ok := strings.Cut(s, "=")
	if !ok {
		return "", 0, fmt.Errorf("Can't parse feature=level string %s: equals sign not found.", s)
	}
	name, levelText = strings.TrimSpace(name), strings.TrimSpace(levelText)
	level, err := strconv.ParseInt(levelText, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("Can't parse feature=level string %s: unable to parse %s as a short.", s, levelText)
	}
	return name, int16(level), nil
}

// BuildUpdates turns the options of upgrade or downgrade into updates, as
// Kafka's handleUpgradeOrDowngrade. note receives Kafka's deprecation line
// for --metadata.
func BuildUpdates(upgradeType int8, metadata, release string, features []string, note io.Writer) ([]Update, error) {
	if release != "" && (metadata != "" || len(features) > 0) {
		return nil, errors.New("Can not specify `release-version` with other feature flags.")
	}
	unknown := func(v string) error {
		return fmt.Errorf("Unknown metadata.version %s. Supported metadata.version are %s", v, metadataVersionRange())
	}
	var updates []Update
	if release != "" {
		mv, ok := ParseMetadataVersion(release)
		if !ok {
			return nil, unknown(release)
		}
		updates = append(updates, Update{MetadataVersionFeature, mv, upgradeType})
		for _, f := range productionFeatures {
			if level := f.defaultLevel(mv); upgradeType != Upgrade || level > 0 {
				updates = append(updates, Update{f.name, level, upgradeType})
			}
		}
		return updates, nil
	}
	if metadata != "" {
		fmt.Fprintln(note, " `metadata` flag is deprecated and may be removed in a future release.")
		mv, ok := ParseMetadataVersion(metadata)
		if !ok {
			return nil, unknown(metadata)
		}
		updates = append(updates, Update{MetadataVersionFeature, mv, upgradeType})
	}
	for _, a := range features {
		name, level, err := parseNameAndLevel(a)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(updates, func(u Update) bool { return u.Feature == name }) {
			return nil, fmt.Errorf("Feature %s was specified more than once.", name)
		}
		updates = append(updates, Update{name, level, upgradeType})
	}
	return updates, nil
}

// Run runs `silkworm features` with args (without the command name),
// writing results to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := cli.NewParser("features", "This tool manages feature flags in Kafka. Commands: describe, upgrade, downgrade, disable, version-mapping, feature-dependencies.")
	p.Output = stdout
	bootstrap := p.String("bootstrap-server", "", "A comma-separated list of host:port pairs to use for establishing the connection to the Kafka cluster.", "")
	controllers := p.String("bootstrap-controller", "", "A comma-separated list of host:port pairs to use for establishing the connection to the KRaft quorum. Silkworm's controllers answer on the brokers' listeners: give broker addresses.", "")
	commandConfig := p.String("command-config", "", "Property file containing configs to be passed to Admin Client.", "")
	metadata := p.String("metadata", "", "upgrade, downgrade: DEPRECATED -- The level to which we should upgrade the metadata. For example, 3.3-IV3.", "")
	release := p.String("release-version", "", "upgrade, downgrade, version-mapping: The release version to update all features to. For example, 3.9-IV0 will set metadata.version=21 and kraft.version=1. Use the version-mapping command to learn which features will be set for any given version.", "")
	features := p.List("feature", "", "upgrade, downgrade, disable, feature-dependencies: A feature we should change (feature=level; for disable the name only), or look up. For example: `metadata.version=5`.")
	unsafe := p.Flag("unsafe", "downgrade, disable: Perform this downgrade even if it may irreversibly destroy metadata.")
	dryRun := p.Flag("dry-run", "upgrade, downgrade, disable: Validate this change, but do not perform it.")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if err := p.RequireOneOf("bootstrap-server", "bootstrap-controller"); err != nil {
		return err
	}
	rest := p.Args()
	commands := []string{"describe", "upgrade", "downgrade", "disable", "version-mapping", "feature-dependencies"}
	if len(rest) == 0 {
		return errors.New("too few arguments: a command is required (describe, upgrade, downgrade, disable, version-mapping, feature-dependencies)")
	}
	cmd := rest[0]
	if !slices.Contains(commands, cmd) {
		return fmt.Errorf("invalid choice: '%s' (choose from 'describe', 'upgrade', 'downgrade', 'disable', 'version-mapping', 'feature-dependencies')", cmd)
	}
	if len(rest) > 1 {
		return fmt.Errorf("unrecognized arguments: '%s'", strings.Join(rest[1:], " "))
	}
	allowed := map[string][]string{
		"describe":             {},
		"upgrade":              {"metadata", "release-version", "feature", "dry-run"},
		"downgrade":            {"metadata", "release-version", "feature", "unsafe", "dry-run"},
		"disable":              {"feature", "unsafe", "dry-run"},
		"version-mapping":      {"release-version"},
		"feature-dependencies": {"feature"},
	}[cmd]
	for _, o := range []string{"metadata", "release-version", "feature", "unsafe", "dry-run"} {
		if p.Has(o) && !slices.Contains(allowed, o) {
			return fmt.Errorf("unrecognized arguments: '--%s'", o)
		}
	}
	switch cmd {
	case "version-mapping":
		return WriteVersionMapping(stdout, *release)
	case "feature-dependencies":
		if len(*features) == 0 {
			return errors.New("argument --feature is required")
		}
		return WriteDependencies(stdout, *features)
	}
	downgradeType := SafeDowngrade
	if *unsafe {
		downgradeType = UnsafeDowngrade
	}
	var updates []Update
	switch cmd {
	case "upgrade", "downgrade":
		t := Upgrade
		if cmd == "downgrade" {
			t = downgradeType
		}
		var err error
		if updates, err = BuildUpdates(t, *metadata, *release, *features, stdout); err != nil {
			return err
		}
	case "disable":
		for _, f := range *features {
			if slices.ContainsFunc(updates, func(u Update) bool { return u.Feature == f }) {
				return fmt.Errorf("Feature %s was specified more than once.", f)
			}
			updates = append(updates, Update{f, 0, downgradeType})
		}
	}
	if cmd != "describe" && len(updates) == 0 {
		return fmt.Errorf("You must specify at least one feature to %s", cmd)
	}
	cl, _, err := cli.NewAdmin(ctx, *commandConfig, cmp.Or(*bootstrap, *controllers))
	if err != nil {
		return err
	}
	defer cl.Close()
	if cmd == "describe" {
		md, err := Describe(ctx, cl)
		if err != nil {
			return err
		}
		return WriteDescribe(stdout, md)
	}
	results, err := Apply(ctx, cl, updates, *dryRun)
	if err != nil {
		return err
	}
	return WriteUpdateResults(stdout, cmd, updates, results, *dryRun)
}
