package storagetool

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/silkworm/silkworm/internal/storage"
)

// dynamicVoter is one entry of --initial-controllers:
// id@host:port:directoryId (KIP-853).
type dynamicVoter struct {
	id          int32
	host        string
	port        int
	directoryID string
}

// parseDynamicVoters parses --initial-controllers with the rules and
// messages of Kafka's DynamicVoters.parse and DynamicVoter.parse.
func parseDynamicVoters(s string) ([]dynamicVoter, error) {
	var out []dynamicVoter
	for _, item := range strings.Split(strings.TrimSpace(s), ",") {
		if item == "" {
			continue
		}
		v, err := parseDynamicVoter(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o.id == v.id {
				return nil, fmt.Errorf("Node id %d was specified more than once.", v.id)
			}
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("No initial dynamic voters were specified.")
	}
	return out, nil
}

func parseDynamicVoter(s string) (dynamicVoter, error) {
	var v dynamicVoter
	at := strings.Index(s, "@")
	switch {
	case at < 0:
		return v, errors.New("No @ found in dynamic voter string.")
	case at == 0:
		return v, errors.New("Invalid @ at beginning of dynamic voter string.")
	}
	id, err := strconv.ParseInt(s[:at], 10, 32)
	if err != nil {
		return v, errors.New("Failed to parse node id in dynamic voter string.")
	}
	if id < 0 {
		return v, fmt.Errorf("Invalid negative node id %d in dynamic voter string.", id)
	}
	v.id = int32(id)
	s = s[at+1:]
	if s == "" {
		return v, errors.New("No hostname found after node id.")
	}
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return v, errors.New("Hostname began with left bracket, but no right bracket was found.")
		}
		v.host, s = s[1:end], s[end+1:]
	} else {
		colon := strings.Index(s, ":")
		if colon < 0 {
			return v, errors.New("No colon following hostname could be found.")
		}
		v.host, s = s[:colon], s[colon:]
	}
	if !strings.HasPrefix(s, ":") {
		return v, errors.New("Port section must start with a colon.")
	}
	s = s[1:]
	colon := strings.Index(s, ":")
	if colon < 0 {
		return v, errors.New("No colon following port could be found.")
	}
	port, err := strconv.Atoi(s[:colon])
	if err != nil {
		return v, errors.New("Failed to parse port in dynamic voter string.")
	}
	if port < 0 || port > 65535 {
		return v, fmt.Errorf("Invalid port %d in dynamic voter string.", port)
	}
	v.port = port
	if _, err := storage.ParseUUID(s[colon+1:]); err != nil {
		return v, errors.New("Failed to parse directory ID in dynamic voter string.")
	}
	v.directoryID = s[colon+1:]
	return v, nil
}

// votersValue is voters as a controller.quorum.voters value.
func votersValue(voters []dynamicVoter) string {
	items := make([]string, len(voters))
	for i, v := range voters {
		items[i] = fmt.Sprintf("%d@%s", v.id, net.JoinHostPort(v.host, strconv.Itoa(v.port)))
	}
	return strings.Join(items, ",")
}
