package cli

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// javaErrorClasses are the Kafka errors whose Java exception class is not
// the error's name in camel case.
var javaErrorClasses = map[*kerr.Error]string{
	kerr.UnknownServerError:                 "UnknownServerException",
	kerr.CorruptMessage:                     "CorruptRecordException",
	kerr.RequestTimedOut:                    "TimeoutException",
	kerr.KafkaStorageError:                  "KafkaStorageException",
	kerr.NotController:                      "NotControllerException",
	kerr.PolicyViolation:                    "PolicyViolationException",
	kerr.NotLeaderForPartition:              "NotLeaderOrFollowerException",
	kerr.MessageTooLarge:                    "RecordTooLargeException",
	kerr.RecordListTooLarge:                 "RecordBatchTooLargeException",
	kerr.TransactionalIDAuthorizationFailed: "TransactionalIdAuthorizationException",
	kerr.OutOfOrderSequenceNumber:           "OutOfOrderSequenceException",
	kerr.DuplicateSequenceNumber:            "DuplicateSequenceException",
}

// JavaErrorClass is the simple name of the exception Kafka's Java clients
// raise for a broker error code, as Kafka's tools print it:
// NOT_ENOUGH_REPLICAS is NotEnoughReplicasException,
// TOPIC_AUTHORIZATION_FAILED TopicAuthorizationException,
// INVALID_TOPIC_EXCEPTION InvalidTopicException. An unknown code is
// UnknownServerException.
func JavaErrorClass(code int16) string {
	var ke *kerr.Error
	if !errors.As(kerr.ErrorForCode(code), &ke) {
		return "UnknownServerException"
	}
	if c, ok := javaErrorClasses[ke]; ok {
		return c
	}
	name := strings.TrimSuffix(strings.TrimSuffix(ke.Message, "_EXCEPTION"), "_ERROR")
	name = strings.TrimSuffix(name, "_FAILED")
	var class strings.Builder
	for _, word := range strings.Split(name, "_") {
		if word != "" {
			class.WriteString(word[:1] + strings.ToLower(word[1:]))
		}
	}
	return class.String() + "Exception"
}
