package sasl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	kgosasl "github.com/twmb/franz-go/pkg/sasl"
)

// errClient marks a failure of the client side of a conversation.
type errClient struct{ err error }

func (e errClient) Error() string { return "client: " + e.err.Error() }

// converse drives a franz-go client mechanism against a server session the
// way franz-go's broker connection does: the client's first message, then
// each server token is handed to the client until both sides are done. It
// returns the server's error (an *Error) or an errClient.
func converse(t *testing.T, server Session, client kgosasl.Mechanism) error {
	t.Helper()
	cs, msg, err := client.Authenticate(context.Background(), "broker:9092")
	if err != nil {
		return errClient{err}
	}
	for range 5 {
		out, done, err := server.Step(msg)
		if err != nil {
			return err
		}
		clientDone, next, cerr := cs.Challenge(out)
		if cerr != nil {
			return errClient{cerr}
		}
		if clientDone {
			if !done {
				return errClient{errors.New("client finished before the server")}
			}
			if len(next) != 0 {
				return errClient{fmt.Errorf("client has a token after the end: %q", next)}
			}
			return nil
		}
		if done {
			return errClient{errors.New("server finished, client wants more")}
		}
		msg = next
	}
	return errors.New("conversation did not end")
}

// asError asserts that err is a *Error and returns it.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *sasl.Error", err, err)
	}
	return e
}

// wantMessage asserts that err is an *Error whose client message is want.
func wantMessage(t *testing.T, err error, want string) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	e := asError(t, err)
	if got := e.Error(); got != want {
		t.Fatalf("error message %q, want %q (reason: %v)", got, want, e.Reason)
	}
	return e
}

// wantReason asserts that the error's reason mentions every fragment.
func wantReason(t *testing.T, err error, fragments ...string) {
	t.Helper()
	e := asError(t, err)
	for _, f := range fragments {
		if e.Reason == nil || !strings.Contains(e.Reason.Error(), f) {
			t.Fatalf("reason %v does not mention %q", e.Reason, f)
		}
	}
}

// wantIllegalState asserts that another Step is refused as Kafka's
// IllegalSaslStateException.
func wantIllegalState(t *testing.T, s Session) {
	t.Helper()
	out, done, err := s.Step([]byte("anything"))
	if !errors.Is(err, ErrIllegalState) || done || out != nil {
		t.Fatalf("Step after the end = %q, %v, %v; want ErrIllegalState", out, done, err)
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// bound. It never asserts on timing.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
