package broker

// ApiVersions: v0-4
//
// An unsupported version is answered with a v0 body carrying
// UNSUPPORTED_VERSION and the supported ranges, as Kafka does, so that the
// client can retry with a version both sides know.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/wire"
)

func init() { register(kmsg.ApiVersions, 0, 4, handleApiVersions) }

func apiVersionsKeys() []kmsg.ApiVersionsResponseApiKey {
	var keys []kmsg.ApiVersionsResponseApiKey
	for _, a := range supportedAPIs() {
		keys = append(keys, kmsg.ApiVersionsResponseApiKey{ApiKey: a.key, MinVersion: a.min, MaxVersion: a.max})
	}
	return keys
}

func handleApiVersions(b *Broker, r *request) {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ApiKeys = apiVersionsKeys()
	req := r.kreq.(*kmsg.ApiVersionsRequest)
	if r.hdr.APIVersion >= 3 && !validClientSoftware(req.ClientSoftwareName, req.ClientSoftwareVersion) {
		resp.ErrorCode = kerr.InvalidRequest.Code
	}
	r.respond(resp)
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
