package broker

// ApiVersions: v0-5
//
// An unsupported version is answered with a v0 body carrying
// UNSUPPORTED_VERSION and the supported ranges, as Kafka does, so that the
// client can retry with a version both sides know.
//
// From v3 the response carries the features (KIP-584, see
// updatefeatures.go): the levels this binary supports (v3 leaves out those
// whose minimum is 0, as Kafka before KAFKA-17011) and the cluster's
// finalized levels, with the metadata image's epoch as
// FinalizedFeaturesEpoch. v5 (KIP-1242): a request naming a cluster id and
// node id that are not this broker's gets REBOOTSTRAP_REQUIRED, one naming
// only one of them INVALID_REQUEST.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/metadata"
	"github.com/silkworm/silkworm/internal/wire"
)

func init() { register(kmsg.ApiVersions, 0, 5, handleApiVersions) }

// apiVersionsKeys lists the APIs we serve, as ApiVersions advertises them:
// without the client telemetry APIs, which Kafka serves but leaves out
// when no metrics receiver plugin is configured (never, here).
func apiVersionsKeys() []kmsg.ApiVersionsResponseApiKey {
	var keys []kmsg.ApiVersionsResponseApiKey
	for _, a := range supportedAPIs() {
		if a.key == kmsg.GetTelemetrySubscriptions.Int16() || a.key == kmsg.PushTelemetry.Int16() {
			continue
		}
		keys = append(keys, kmsg.ApiVersionsResponseApiKey{ApiKey: a.key, MinVersion: a.min, MaxVersion: a.max})
	}
	return keys
}

func handleApiVersions(b *Broker, r *request) {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ApiKeys = apiVersionsKeys()
	if !b.cfg.ConsumerProtocolEnabled() {
		// group.coordinator.rebalance.protocols without consumer: the
		// KIP-848 APIs are not advertised, so clients use the classic ones.
		resp.ApiKeys = slices.DeleteFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
			return k.ApiKey == kmsg.ConsumerGroupHeartbeat.Int16() || k.ApiKey == kmsg.ConsumerGroupDescribe.Int16()
		})
	}
	req := r.kreq.(*kmsg.ApiVersionsRequest)
	v := r.hdr.APIVersion
	switch {
	case v >= 3 && !validClientSoftware(req.ClientSoftwareName, req.ClientSoftwareVersion):
		resp.ErrorCode = kerr.InvalidRequest.Code
	case v >= 5 && (req.ClusterID == nil) != (req.NodeID < 0):
		resp.ErrorCode = kerr.InvalidRequest.Code
	case v >= 5 && req.ClusterID != nil && (*req.ClusterID != b.meta.Image().ClusterID || req.NodeID != b.nodeID):
		resp.ErrorCode = kerr.RebootstrapRequired.Code
	}
	if v >= 3 {
		addFeatures(resp, b.meta.Image(), v)
	}
	r.respond(resp)
}

// addFeatures fills the supported and finalized features of a v3+ answer.
func addFeatures(resp *kmsg.ApiVersionsResponse, im *metadata.Image, version int16) {
	supported := supportedFeatures()
	for _, name := range slices.Sorted(maps.Keys(supported)) {
		fr := supported[name]
		if version < 4 && fr.min == 0 {
			continue
		}
		f := kmsg.NewApiVersionsResponseSupportedFeature()
		f.Name, f.MinVersion, f.MaxVersion = name, fr.min, fr.max
		resp.SupportedFeatures = append(resp.SupportedFeatures, f)
	}
	finalized := finalizedFeatures(im)
	resp.FinalizedFeaturesEpoch = im.Epoch
	for _, name := range slices.Sorted(maps.Keys(finalized)) {
		f := kmsg.NewApiVersionsResponseFinalizedFeature()
		f.Name, f.MinVersionLevel, f.MaxVersionLevel = name, finalized[name], finalized[name]
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
	}
}

// validClientSoftware applies Kafka's rule for the KIP-511 fields:
// alphanumerics, '.', '-', starting and ending with an alphanumeric.
func validClientSoftware(name, version string) bool {
	ok := func(s string) bool {
		if s == "" {
			return false
		}
		for i, c := range s {
			alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
			if !alnum && (i == 0 || i == len(s)-1 || (c != '.' && c != '-')) {
				return false
			}
		}
		return true
	}
	return ok(name) && ok(version)
}

// apiVersionsUnsupported is the v0 answer to an ApiVersions request with a
// version we do not know.
func apiVersionsUnsupported(correlationID int32) *wire.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = apiVersionsKeys()
	return wire.EncodeResponse(correlationID, false, resp)
}
