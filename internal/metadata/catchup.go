package metadata

import (
	"encoding/json"
	"time"
)

// CatchUp blocks until this node has applied the metadata image the
// active controller had when asked, or until stop is closed. A restarted
// node replays the metadata log only once the leader tells it the commit
// index, so until then its image is historical; a broker must not act on
// it (serve metadata from it, take leadership at an old epoch, or delete
// logs of topics it has not replayed yet). It logs every 10 s while it
// waits, like Kafka's broker waiting to catch up with the metadata log.
func (q *Quorum) CatchUp(stop <-chan struct{}) error {
	start := time.Now()
	lastLog := start
	for {
		target, ok := q.controllerEpoch()
		if ok && q.image.Load().Epoch >= target {
			return nil
		}
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			q.log.Info("waiting to catch up with the metadata log", "applied", q.image.Load().Epoch,
				"controller", target, "controller_known", ok, "waited", time.Since(start).Round(time.Second))
		}
		select {
		case <-stop:
			return ErrNotController
		case <-q.stop:
			return ErrNotController
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// controllerEpoch asks the active controller (possibly this node) for the
// epoch of the image it has applied.
func (q *Quorum) controllerEpoch() (int64, bool) {
	if q.IsActiveController() {
		return q.image.Load().Epoch, true
	}
	addr := q.leaderAddr()
	if addr == "" {
		return 0, false
	}
	resp, err := q.mux.forward(addr, &request{Op: opAppliedEpoch}, time.Second)
	if err != nil || resp.Code != "" {
		return 0, false
	}
	var epoch int64
	if json.Unmarshal(resp.Result, &epoch) != nil {
		return 0, false
	}
	return epoch, true
}
