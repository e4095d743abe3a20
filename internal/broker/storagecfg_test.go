package broker

import (
	"testing"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/storage"
)

// The defaults of silkworm.log.max.open.segment.files and
// silkworm.log.index.cache.bytes are the storage package's own.
func TestStorageCacheBoundDefaults(t *testing.T) {
	b := config.DefaultBroker()
	if b.MaxOpenSegmentFiles != storage.DefaultMaxOpenSegmentFiles || b.IndexCacheBytes != storage.DefaultIndexCacheBytes {
		t.Fatalf("config defaults %d files, %d bytes; storage's %d, %d", b.MaxOpenSegmentFiles, b.IndexCacheBytes,
			storage.DefaultMaxOpenSegmentFiles, storage.DefaultIndexCacheBytes)
	}
}
