package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Security protocols Kafka knows.
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

var securityProtocols = []string{ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL}

// Listener is one entry of listeners or advertised.listeners, such as
// PLAINTEXT://127.0.0.1:9092. Host "" means all interfaces (listeners) or
// the machine's canonical name (advertised listeners).
type Listener struct {
	Name             string // upper-cased, as Kafka normalises it
	Host             string // without IPv6 brackets
	Port             int
	SecurityProtocol string // resolved through listener.security.protocol.map
}

// Addr is host:port, with brackets around an IPv6 host, for net.Listen.
func (l Listener) Addr() string { return net.JoinHostPort(l.Host, strconv.Itoa(l.Port)) }

func (l Listener) String() string { return l.Name + "://" + l.Addr() }

// ParseListeners parses a comma-separated listener list:
// NAME://host:port, NAME://[::1]:port or NAME://:port.
func ParseListeners(key, value string) ([]Listener, error) {
	var out []Listener
	for _, item := range SplitList(value) {
		i := strings.Index(item, "://")
		if i <= 0 {
			return nil, invalidValue(key, value, fmt.Sprintf("listener %q must look like NAME://host:port", item))
		}
		name, hostPort := strings.ToUpper(item[:i]), item[i+3:]
		host, portStr, err := net.SplitHostPort(hostPort)
		if err != nil {
			return nil, invalidValue(key, value, fmt.Sprintf("listener %q must look like NAME://host:port", item))
		}
		port, err := strconv.Atoi(portStr)
		if err != nil || port < 0 || port > 65535 {
			return nil, invalidValue(key, value, fmt.Sprintf("listener %q has an invalid port (0-65535)", item))
		}
		out = append(out, Listener{Name: name, Host: host, Port: port})
	}
	return out, nil
}

// parseProtocolMap parses listener.security.protocol.map: NAME:PROTOCOL,...
func parseProtocolMap(key, value string) (map[string]string, error) {
	m := make(map[string]string)
	for _, item := range SplitList(value) {
		name, proto, ok := strings.Cut(item, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.TrimSpace(proto)
		if !ok || name == "" {
			return nil, invalidValue(key, value, fmt.Sprintf("entry %q must look like LISTENER_NAME:SECURITY_PROTOCOL", item))
		}
		if !contains(securityProtocols, strings.ToUpper(proto)) {
			return nil, invalidValue(key, value, fmt.Sprintf("security protocol %q must be one of %s", proto, strings.Join(securityProtocols, ", ")))
		}
		m[name] = strings.ToUpper(proto)
	}
	return m, nil
}

// Voter is one entry of controller.quorum.voters: id@host:port.
type Voter struct {
	ID   int32
	Host string
	Port int
}

// ParseVoters parses a controller.quorum.voters value (id@host:port,
// ...); key names the value's source in the error.
func ParseVoters(key, value string) ([]Voter, error) {
	var out []Voter
	for _, item := range SplitList(value) {
		idStr, hostPort, ok := strings.Cut(item, "@")
		id, err := strconv.ParseInt(idStr, 10, 32)
		if !ok || err != nil || id < 0 {
			return nil, invalidValue(key, value, fmt.Sprintf("voter %q must look like id@host:port", item))
		}
		host, portStr, err := net.SplitHostPort(hostPort)
		port, perr := strconv.Atoi(portStr)
		if err != nil || perr != nil || port < 0 || port > 65535 {
			return nil, invalidValue(key, value, fmt.Sprintf("voter %q must look like id@host:port", item))
		}
		out = append(out, Voter{ID: int32(id), Host: host, Port: port})
	}
	return out, nil
}
