package cli

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestJavaErrorClass(t *testing.T) {
	for code, want := range map[int16]string{
		kerr.NotEnoughReplicas.Code:          "NotEnoughReplicasException",
		kerr.TopicAuthorizationFailed.Code:   "TopicAuthorizationException",
		kerr.InvalidTopicException.Code:      "InvalidTopicException",
		kerr.ElectionNotNeeded.Code:          "ElectionNotNeededException",
		kerr.NotLeaderForPartition.Code:      "NotLeaderOrFollowerException",
		kerr.UnknownServerError.Code:         "UnknownServerException",
		kerr.ClusterAuthorizationFailed.Code: "ClusterAuthorizationException",
		kerr.RequestTimedOut.Code:            "TimeoutException",
		9999:                                 "UnknownServerException",
	} {
		if got := JavaErrorClass(code); got != want {
			t.Errorf("code %d: %s, want %s", code, got, want)
		}
	}
}
