package sasl

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// keySource holds the verification keys of a JWKS. keys and notFound are
// called from connection goroutines concurrently.
type keySource interface {
	// keys returns the current keys; the caller must not modify them.
	keys() []jose.JSONWebKey
	// notFound reports that a token named a key id the keys lack.
	notFound(kid string)
	// close stops background work and waits for it.
	close()
}

// maxJWKSSize bounds a JWKS document, from a file or over HTTP.
const maxJWKSSize = 4 << 20

func newKeySource(cfg OAuthConfig) (keySource, error) {
	u, err := url.Parse(cfg.JWKSURL)
	if err != nil {
		return nil, fmt.Errorf("OAUTHBEARER: sasl.oauthbearer.jwks.endpoint.url %q: %w", cfg.JWKSURL, err)
	}
	if strings.EqualFold(u.Scheme, "file") {
		keys, err := readJWKSFile(u)
		if err != nil {
			return nil, fmt.Errorf("OAUTHBEARER: read JWKS %s: %w", cfg.JWKSURL, err)
		}
		return staticKeys(keys), nil
	}
	return newRemoteKeys(cfg)
}

// readJWKSFile reads a file:// JWKS once, as Kafka's
// JwksFileVerificationKeyResolver does at start.
func readJWKSFile(u *url.URL) ([]jose.JSONWebKey, error) {
	path := u.Path
	if path == "" {
		path = u.Opaque
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxJWKSSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJWKSSize {
		return nil, fmt.Errorf("larger than %d bytes", maxJWKSSize)
	}
	return parseJWKS(data)
}

// staticKeys is a JWKS read once.
type staticKeys []jose.JSONWebKey

func (k staticKeys) keys() []jose.JSONWebKey { return k }
func (staticKeys) notFound(string)           {}
func (staticKeys) close()                    {}

// parseJWKS reads a JWK Set (RFC 7517 §5). Keys that cannot verify
// signatures are skipped, as jose4j skips what it does not know: unknown
// key types, encryption keys (use "enc"), symmetric keys. Private keys are
// reduced to their public half. A document without a "keys" array is an
// error; a set with no usable key is not (every token then fails).
func parseJWKS(data []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("malformed JWKS: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New(`malformed JWKS: no "keys" array`)
	}
	keys := make([]jose.JSONWebKey, 0, len(doc.Keys))
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() || k.Use == "enc" {
			continue
		}
		if !k.IsPublic() {
			k = k.Public()
			if !k.Valid() { // symmetric keys have no public half
				continue
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// candidateKeys are the keys that may have signed a JWS with this kid and
// alg, chosen as jose4j's VerificationJwkSelector chooses: kid, use and
// alg must match where both the token and the key state them (a key
// without kid is a candidate for any kid), and the key type must fit alg.
func candidateKeys(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid != "" && k.KeyID != "" && k.KeyID != kid {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		if keyFitsAlg(k.Key, alg) {
			out = append(out, k)
		}
	}
	return out
}

func keyFitsAlg(key any, alg string) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return k.Curve == elliptic.P256()
		case "ES384":
			return k.Curve == elliptic.P384()
		case "ES512":
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// Limits on refreshes asked for by unknown key ids, as Kafka's
// RefreshingHttpsJwks: a key id triggers at most one refresh a minute, at
// most 16 key ids are remembered, and absurdly long ones are ignored.
const (
	missingKeyIDInterval = time.Minute
	missingKeyIDMax      = 16
	missingKeyIDMaxLen   = 1000
)

// remoteKeys is a JWKS fetched over HTTP(S) and refreshed by one goroutine
// every cfg.JWKSRefresh, and soon after a token names an unknown key id.
// A failed refresh keeps the previous keys. Safe for concurrent use.
type remoteKeys struct {
	url    string
	client *http.Client
	cfg    OAuthConfig

	mu      sync.RWMutex
	current []jose.JSONWebKey
	missing map[string]time.Time // key id → when it may trigger a refresh again

	expedite chan struct{} // capacity 1: a refresh is wanted now
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{} // closed when the goroutine has returned
}

// newRemoteKeys fetches the JWKS once (failing if it cannot, as Kafka's
// init does) and starts the refresh goroutine.
func newRemoteKeys(cfg OAuthConfig) (*remoteKeys, error) {
	r := &remoteKeys{
		url:      cfg.JWKSURL,
		client:   cfg.HTTPClient,
		cfg:      cfg,
		missing:  map[string]time.Time{},
		expedite: make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	keys, err := r.fetch()
	if err != nil {
		r.cancel()
		return nil, fmt.Errorf("OAUTHBEARER: could not fetch the JWKS: %w", err)
	}
	r.current = keys
	go r.run()
	return r, nil
}

func (r *remoteKeys) keys() []jose.JSONWebKey {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.current
}

func (r *remoteKeys) notFound(kid string) {
	if len(kid) > missingKeyIDMaxLen {
		return
	}
	now := r.cfg.Now()
	r.mu.Lock()
	next, seen := r.missing[kid]
	if seen && next.After(now) {
		r.mu.Unlock()
		return
	}
	r.missing[kid] = now.Add(missingKeyIDInterval)
	if len(r.missing) > missingKeyIDMax {
		r.evictOldestLocked()
	}
	r.mu.Unlock()
	select {
	case r.expedite <- struct{}{}:
	default: // a refresh is already pending
	}
}

// evictOldestLocked forgets the key id whose refresh was asked for first.
func (r *remoteKeys) evictOldestLocked() {
	var oldest string
	var at time.Time
	for kid, t := range r.missing {
		if at.IsZero() || t.Before(at) {
			oldest, at = kid, t
		}
	}
	delete(r.missing, oldest)
}

func (r *remoteKeys) close() {
	r.cancel()
	<-r.done
}

// run is the refresh goroutine; it returns when close cancels r.ctx.
func (r *remoteKeys) run() {
	defer close(r.done)
	t := time.NewTimer(r.cfg.JWKSRefresh)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
			r.refresh()
			t.Reset(r.cfg.JWKSRefresh)
		case <-r.expedite:
			r.refresh()
		}
	}
}

// refresh fetches the JWKS, retrying with a doubling backoff from
// JWKSRetryBackoff for up to JWKSRetryBackoffMax; on success it replaces
// the keys, else it keeps the old ones.
func (r *remoteKeys) refresh() {
	deadline := time.Now().Add(r.cfg.JWKSRetryBackoffMax)
	wait := r.cfg.JWKSRetryBackoff
	for {
		keys, err := r.fetch()
		if err == nil {
			r.mu.Lock()
			r.current = keys
			for _, k := range keys {
				delete(r.missing, k.KeyID)
			}
			r.mu.Unlock()
			return
		}
		left := time.Until(deadline)
		if left <= 0 || r.ctx.Err() != nil {
			return
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait *= 2
	}
}

// fetchTimeout bounds one JWKS request whatever the HTTP client's own
// timeout.
const fetchTimeout = 30 * time.Second

// fetch GETs and parses the JWKS; the body is bounded by maxJWKSSize.
func (r *remoteKeys) fetch() ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(r.ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", r.url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSSize+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", r.url, err)
	}
	if len(data) > maxJWKSSize {
		return nil, fmt.Errorf("GET %s: JWKS larger than %d bytes", r.url, maxJWKSSize)
	}
	return parseJWKS(data)
}
