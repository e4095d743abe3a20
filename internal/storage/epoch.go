package storage

// epochCache is Kafka's LeaderEpochFileCache: for each leader epoch, the
// first offset written in it. Not safe for concurrent use; the Log guards it
// with its mu.
type epochCache struct {
	entries []EpochEntry
}

func (c *epochCache) latest() (EpochEntry, bool) {
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// assign records that epoch starts at offset; it returns true when the cache
// changed. Like Kafka it ignores epochs that are not newer than the latest
// and drops entries that start at or after offset.
func (c *epochCache) assign(epoch int32, offset int64) bool {
	if epoch < 0 {
		return false
	}
	if l, ok := c.latest(); ok && (epoch <= l.Epoch) {
		return false
	}
	c.truncateFromEnd(offset)
	c.entries = append(c.entries, EpochEntry{Epoch: epoch, StartOffset: offset})
	return true
}

// truncateFromEnd drops entries starting at or after endOffset.
func (c *epochCache) truncateFromEnd(endOffset int64) bool {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= endOffset {
		n--
	}
	changed := n != len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// truncateFromStart drops entries wholly before startOffset, keeping the
// one in force at startOffset with its start moved up to startOffset.
func (c *epochCache) truncateFromStart(startOffset int64) bool {
	i := 0
	for i < len(c.entries) && c.entries[i].StartOffset <= startOffset {
		i++
	}
	// entries[:i] start at or before startOffset; keep the last of them.
	if i == 0 {
		return false
	}
	keep := c.entries[i-1]
	if i == 1 && keep.StartOffset == startOffset {
		return false
	}
	keep.StartOffset = startOffset
	rest := append([]EpochEntry{keep}, c.entries[i:]...)
	c.entries = rest
	return true
}

// endOffsetFor answers OffsetForLeaderEpoch like Kafka's endOffsetFor: the
// largest epoch <= requested and the start offset of the next epoch (the
// log end offset for the latest epoch); -1, -1 when unknown.
func (c *epochCache) endOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	if requested < 0 {
		return -1, -1
	}
	if l, ok := c.latest(); ok && l.Epoch == requested {
		return requested, logEndOffset
	}
	hi := -1
	for i, e := range c.entries {
		if e.Epoch > requested {
			hi = i
			break
		}
	}
	if hi < 0 {
		return -1, -1
	}
	if hi == 0 {
		return requested, c.entries[0].StartOffset
	}
	return c.entries[hi-1].Epoch, c.entries[hi].StartOffset
}

func (c *epochCache) clone() []EpochEntry { return append([]EpochEntry(nil), c.entries...) }
