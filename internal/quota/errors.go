package quota

import (
	"errors"
	"time"
)

// Sentinel errors, one per Kafka error code this package can cause. The
// errors returned wrap one of them (errors.Is) and their Error() is the
// message Kafka puts in the response, so a handler answers with
// the code the sentinel names and err.Error() as the error message.
var (
	// ErrInvalidRequest is Kafka's INVALID_REQUEST (42): a malformed
	// quota entity, an unknown or misplaced quota key, a bad value or
	// filter.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrUnsupportedEntityType is what DescribeClientQuotas answers with
	// UNSUPPORTED_VERSION (35): a filter names an entity type the broker
	// does not know.
	ErrUnsupportedEntityType = errors.New("unsupported entity type")
	// ErrThrottlingQuotaExceeded is Kafka's THROTTLING_QUOTA_EXCEEDED
	// (89): a strict controller mutation quota refused a topic or
	// partition change. The error is a *ThrottlingError carrying the
	// throttle time.
	ErrThrottlingQuotaExceeded = errors.New("throttling quota exceeded")
)

// kafkaError is an error whose text is exactly Kafka's message and which
// unwraps to the sentinel that names its error code.
type kafkaError struct {
	code error
	msg  string
}

func (e *kafkaError) Error() string { return e.msg }
func (e *kafkaError) Unwrap() error { return e.code }

func invalidRequest(msg string) error {
	return &kafkaError{code: ErrInvalidRequest, msg: msg}
}

// ThrottlingError is returned by a strict MutationQuota that refuses a
// mutation: the handler answers THROTTLING_QUOTA_EXCEEDED for that topic
// and ThrottleTime is how long until the client's bucket is back to zero
// (Kafka's ThrottlingQuotaExceededException).
type ThrottlingError struct {
	ThrottleTime time.Duration
}

// Error returns Kafka's message for THROTTLING_QUOTA_EXCEEDED.
func (e *ThrottlingError) Error() string { return "The throttling quota has been exceeded." }

// Unwrap returns ErrThrottlingQuotaExceeded.
func (e *ThrottlingError) Unwrap() error { return ErrThrottlingQuotaExceeded }
