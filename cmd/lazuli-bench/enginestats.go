package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// engineStats are a lazuli instance's engine counters (lazuli_engine_*
// on its admin listener's /metrics) at one moment. Sampled before and
// after a measurement (--engine-stats), they tell what stopped a durable
// write (how long the log's fsyncs took and how many Updates each
// carried) or an instance on PostgreSQL (how many transactions ran again
// after a serialization failure) in that very measurement, where the
// server's own summary at exit spans the whole run.
type engineStats map[string]float64

// engineStatsClient fetches /metrics; a slow answer must not stall the
// benchmark.
var engineStatsClient = &http.Client{Timeout: 5 * time.Second}

// sampleEngine reads the lazuli_engine_* values at url (nil on failure:
// the note is left out, the measurement stands).
func sampleEngine(url string) engineStats {
	if url == "" {
		return nil
	}
	resp, err := engineStatsClient.Get(url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	st := engineStats{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		name, found := strings.CutPrefix(name, "lazuli_engine_")
		if !ok || !found {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			st[name] = v
		}
	}
	if sc.Err() != nil {
		return nil
	}
	return st
}

// engineNote describes what the engine did between two samples taken
// elapsed apart: for the log, its fsyncs (Updates each, mean time, and the
// share of the time one ran, near 100 % when the disk's fsync latency
// bounds the durable writes); for PostgreSQL, the transactions run again
// and the round trips each took.
func engineNote(before, after engineStats, elapsed time.Duration) string {
	if before == nil || after == nil {
		return ""
	}
	d := func(name string) float64 { return after[name] - before[name] }
	var parts []string
	if fs := d("fsyncs_total"); fs > 0 {
		secs := d("fsync_seconds_total")
		parts = append(parts, fmt.Sprintf("%.0f fsyncs, %.1f Updates each, %.2f ms each, one running %.0f %% of the time",
			fs, d("fsynced_updates_total")/fs, 1000*secs/fs, 100*secs/elapsed.Seconds()))
	}
	if tx := d("transactions_total"); tx > 0 {
		note := fmt.Sprintf("%.0f transactions, %.3f attempts run again per transaction", tx, d("retries_total")/tx)
		if rt := d("round_trips_total"); rt > 0 {
			// PostgreSQL: the round trips to the database, and the
			// attempts run again because a hinted read was stale.
			note += fmt.Sprintf(" (%.3f after a stale hint), %.2f round trips per transaction", d("stale_hints_total")/tx, rt/tx)
		}
		parts = append(parts, note)
	}
	return strings.Join(parts, "; ")
}

// meanFsyncMS is the mean time of the log's fsyncs between two samples,
// 0 when there were none (or no samples).
func meanFsyncMS(before, after engineStats) float64 {
	if before == nil || after == nil {
		return 0
	}
	fs := after["fsyncs_total"] - before["fsyncs_total"]
	if fs <= 0 {
		return 0
	}
	return 1000 * (after["fsync_seconds_total"] - before["fsync_seconds_total"]) / fs
}
