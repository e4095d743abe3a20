package broker

// UpdateFeatures: v0-2
//
// Changes finalized feature levels (KIP-584) as Kafka's controller does
// (FeatureControlManager): ALTER on CLUSTER or CLUSTER_AUTHORIZATION_FAILED;
// each update is checked in request order and the first invalid one fails
// the whole request with INVALID_UPDATE_VERSION ("Invalid update version N
// for feature F. <reason>"): an unknown upgrade type, a level below 0, a
// level this broker's binary does not support, a downgrade asked as an
// upgrade (v0: AllowDowngrade false), an upgrade asked as a downgrade, a
// metadata.version below the minimum or lowered at all (as Kafka, whose
// metadata.version downgrades would delete metadata: refused), and a level
// whose dependency (metadata.version) the update would not meet. Valid
// updates are stored in the metadata log together unless ValidateOnly.
// v0-1 answer one result per feature on success; v2 only the top-level
// error, as Kafka 4.
//
// Deviations: the levels are checked against this broker's binary, not
// every registered node's (all nodes of a cluster run the same binary);
// the new levels are computed on the broker that got the request and
// stored whole (metadata SetFeatures), so two UpdateFeatures racing on
// different brokers may lose one's change, where Kafka's controller
// serialises them; the only dependency checked is each level's
// metadata.version.

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
)

func init() { register(kmsg.UpdateFeatures, 0, 2, handleUpdateFeatures) }

// Feature names and metadata.version levels, as Kafka 4.2 has them.
const (
	featureMetadataVersion = "metadata.version"
	featureKRaftVersion    = "kraft.version"
	featureTxnVersion      = "transaction.version"
	featureGroupVersion    = "group.version"
	featureELRVersion      = "eligible.leader.replicas.version"
	featureShareVersion    = "share.version"
	featureStreamsVersion  = "streams.version"

	metadataVersionMin    = 7  // 3.3-IV3, the oldest KRaft production version
	metadataVersionLatest = 29 // 4.2-IV1
)

// featureRange is the range of levels this broker supports for a feature.
type featureRange struct{ min, max int16 }

// supportedFeatures is what this binary supports, from the APIs it
// serves: a feature's top level is supported only when the requests it
// tells clients to use are registered (transaction.version 2 makes
// franz-go and the Java producer use KIP-890 part 2, group.version 1 the
// KIP-848 protocol, share.version 1 share groups). kraft.version stays 0
// (no dynamic quorum) and eligible.leader.replicas.version 0 (no ELR).
func supportedFeatures() map[string]featureRange {
	has := func(k kmsg.Key, v int16) bool {
		a := apiFor(k.Int16())
		return a != nil && a.max >= v
	}
	level := func(ok bool) int16 {
		if ok {
			return 1
		}
		return 0
	}
	txn := int16(1)
	if has(kmsg.Produce, 12) && has(kmsg.EndTxn, 5) && has(kmsg.TxnOffsetCommit, 5) && has(kmsg.AddPartitionsToTxn, 5) {
		txn = 2
	}
	return map[string]featureRange{
		featureMetadataVersion: {metadataVersionMin, metadataVersionLatest},
		featureKRaftVersion:    {0, 0},
		featureTxnVersion:      {0, txn},
		featureGroupVersion:    {0, level(has(kmsg.ConsumerGroupHeartbeat, 0))},
		featureELRVersion:      {0, 0},
		featureShareVersion:    {0, level(has(kmsg.ShareGroupHeartbeat, 1))},
		featureStreamsVersion:  {0, level(has(kmsg.StreamsGroupHeartbeat, 0))},
	}
}

// featureDependencies is the metadata.version each feature level needs
// (Kafka's FeatureVersion.dependencies).
var featureDependencies = map[string]map[int16]int16{
	featureTxnVersion:     {2: 24}, // 4.0-IV2
	featureGroupVersion:   {1: 22}, // 4.0-IV0
	featureELRVersion:     {1: 23}, // 4.0-IV1
	featureShareVersion:   {1: 26}, // 4.1-IV0
	featureStreamsVersion: {1: 26}, // 4.1-IV0
}

// finalizedFeatures returns the cluster's finalized levels: those stored
// in the metadata, or, until an UpdateFeatures stored some, what a new
// Kafka cluster is formatted with: every feature at the top level this
// binary supports. Level-0 features are left out, as Kafka does.
func finalizedFeatures(im *metadata.Image) map[string]int16 {
	if im.Features != nil {
		return im.Features
	}
	out := map[string]int16{}
	for name, r := range supportedFeatures() {
		if r.max > 0 {
			out[name] = r.max
		}
	}
	return out
}

// fitBootstrapFeatures checks the levels `storage format
// --release-version` stored for a new cluster: a metadata.version this
// binary does not support stops start-up, as in Kafka; other features are
// capped to the levels this binary supports (a release's default levels
// assume Kafka's binary), and unknown names are refused.
func fitBootstrapFeatures(levels map[string]int16) (map[string]int16, error) {
	supported := supportedFeatures()
	out := map[string]int16{}
	for name, level := range levels {
		r, ok := supported[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("unknown feature %s", name)
		case name == featureMetadataVersion && (level < r.min || level > r.max):
			return nil, fmt.Errorf("metadata.version %d is not supported by this broker (supported: %d to %d)", level, r.min, r.max)
		}
		out[name] = max(min(level, r.max), 0)
	}
	if _, ok := out[featureMetadataVersion]; !ok {
		return nil, errors.New("no metadata.version")
	}
	return out, nil
}

// featureStore is the part of the metadata store UpdateFeatures needs
// (metadata.Local and metadata.Quorum).
type featureStore interface {
	SetFeatures(levels map[string]int16) error
}

// UpgradeType codes of an UpdateFeatures request.
const (
	upgradeTypeUpgrade         = 1
	upgradeTypeSafeDowngrade   = 2
	upgradeTypeUnsafeDowngrade = 3
)

func handleUpdateFeatures(b *Broker, r *request) {
	req := r.kreq.(*kmsg.UpdateFeaturesRequest)
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	fail := func(code int16, msg string) {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		r.respond(resp)
	}
	if !b.authorizeCluster(r, kmsg.ACLOperationAlter) {
		fail(kerr.ClusterAuthorizationFailed.Code, "")
		return
	}
	fs, ok := b.meta.(featureStore)
	if !ok {
		fail(kerr.UnknownServerError.Code, "this metadata store cannot keep features")
		return
	}
	current := finalizedFeatures(b.meta.Image())
	proposed := maps.Clone(current)
	for _, u := range req.FeatureUpdates {
		proposed[u.Feature] = u.MaxVersionLevel
	}
	for _, u := range req.FeatureUpdates {
		upgradeType := u.UpgradeType
		if r.hdr.APIVersion == 0 {
			upgradeType = upgradeTypeUpgrade
			if u.AllowDowngrade {
				upgradeType = upgradeTypeSafeDowngrade
			}
		}
		if msg := checkFeatureUpdate(b.nodeID, u.Feature, u.MaxVersionLevel, upgradeType, current, proposed); msg != "" {
			fail(kerr.InvalidUpdateVersion.Code,
				"The update failed for all features since the following feature had an error: "+msg)
			return
		}
	}
	if !req.ValidateOnly && len(req.FeatureUpdates) > 0 {
		if err := fs.SetFeatures(proposed); err != nil {
			b.log.Warn("update features", "err", err)
			fail(errorCode(err), err.Error())
			return
		}
	}
	if r.hdr.APIVersion <= 1 {
		for _, u := range req.FeatureUpdates {
			res := kmsg.NewUpdateFeaturesResponseResult()
			res.Feature = u.Feature
			resp.Results = append(resp.Results, res)
		}
	}
	r.respond(resp)
}

// checkFeatureUpdate validates one update as Kafka's FeatureControlManager
// and returns why it is invalid, or "".
func checkFeatureUpdate(nodeID int32, name string, level int16, upgradeType int8, current, proposed map[string]int16) string {
	invalid := func(reason string) string {
		return fmt.Sprintf("Invalid update version %d for feature %s. %s", level, name, reason)
	}
	if upgradeType < upgradeTypeUpgrade || upgradeType > upgradeTypeUnsafeDowngrade {
		return invalid("The controller does not support the given upgrade type.")
	}
	if level < 0 {
		return invalid("A feature version cannot be less than 0.")
	}
	r, known := supportedFeatures()[name]
	switch {
	case !known || r.max == 0 && level != 0:
		return invalid(fmt.Sprintf("Local controller %d does not support this feature.", nodeID))
	case level < r.min || level > r.max:
		return invalid(fmt.Sprintf("Local controller %d only supports versions [%d-%d]", nodeID, r.min, r.max))
	}
	cur := current[name]
	switch {
	case level < cur && upgradeType == upgradeTypeUpgrade:
		return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
	case level > cur && upgradeType != upgradeTypeUpgrade:
		return invalid("Can't downgrade to a newer version.")
	}
	if name == featureMetadataVersion {
		switch {
		case level < cur && upgradeType == upgradeTypeUnsafeDowngrade:
			return fmt.Sprintf("Invalid metadata.version %d. Unsafe metadata downgrade is not supported in this version.", level)
		case level < cur:
			return fmt.Sprintf("Invalid metadata.version %d. Refusing to perform the requested downgrade because it might delete metadata information.", level)
		}
		return ""
	}
	for _, dl := range slices.Sorted(maps.Keys(featureDependencies[name])) {
		if level >= dl {
			if need := featureDependencies[name][dl]; proposed[featureMetadataVersion] < need {
				return invalid(fmt.Sprintf("%s level %d requires %s level %d or above, but %s is at level %d.",
					name, level, featureMetadataVersion, need, featureMetadataVersion, proposed[featureMetadataVersion]))
			}
		}
	}
	return ""
}
