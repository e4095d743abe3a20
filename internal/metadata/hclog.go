package metadata

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// newHCLogger adapts slog for hashicorp/raft: raft logs JSON lines through
// hclog, which slogWriter turns into slog records at the same level.
func newHCLogger(l *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       "raft",
		Level:      hclog.Debug,
		JSONFormat: true,
		Output:     slogWriter{l},
	})
}

type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		w.l.Info(string(p))
		return len(p), nil
	}
	level := slog.LevelInfo
	switch m["@level"] {
	case "trace", "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	msg, _ := m["@message"].(string)
	var attrs []any
	for k, v := range m {
		if k != "" && k[0] != '@' {
			attrs = append(attrs, k, v)
		}
	}
	if name, ok := m["@module"].(string); ok {
		attrs = append(attrs, "module", name)
	}
	w.l.Log(context.Background(), level, msg, attrs...)
	return len(p), nil
}
