package main

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestEngineNote: two scrapes of an admin listener's /metrics become a
// note of the fsyncs and retries between them; a listener that fails
// leaves no note.
func TestEngineNote(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := float64(n.Add(1) - 1)
		fmt.Fprintf(w, "# HELP lazuli_engine_fsyncs_total Fsyncs.\n# TYPE lazuli_engine_fsyncs_total counter\n")
		fmt.Fprintf(w, "lazuli_engine_fsyncs_total %g\n", 10+100*k)
		fmt.Fprintf(w, "lazuli_engine_fsynced_updates_total %g\n", 50+800*k)
		fmt.Fprintf(w, "lazuli_engine_fsync_seconds_total %g\n", 1+0.15*k)
		fmt.Fprintf(w, "lazuli_engine_transactions_total %g\n", 7+1000*k)
		fmt.Fprintf(w, "lazuli_engine_retries_total %g\n", 3+25*k)
		fmt.Fprintf(w, "lazuli_engine_stale_hints_total %g\n", 2+5*k)
		fmt.Fprintf(w, "lazuli_engine_round_trips_total %g\n", 9+1100*k)
		fmt.Fprintf(w, "lazuli_requests_total{service=\"blob\"} 99\n")
	}))
	defer srv.Close()
	before := sampleEngine(srv.URL)
	after := sampleEngine(srv.URL)
	got := engineNote(before, after, 300*time.Millisecond)
	for _, want := range []string{"100 fsyncs", "8.0 Updates each", "1.50 ms each", "50 % of the time",
		"1000 transactions", "0.025 attempts run again", "(0.005 after a stale hint)", "1.10 round trips per transaction"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	if _, ok := before["requests_total{service=\"blob\"}"]; ok {
		t.Error("a request counter was taken for an engine figure")
	}
	srv.Close()
	if st := sampleEngine(srv.URL); st != nil {
		t.Errorf("sample of a closed listener = %v, want nil", st)
	}
	if got := engineNote(nil, after, time.Second); got != "" {
		t.Errorf("note without a first sample = %q", got)
	}
}

// TestMeanFsyncMS: the mean fsync between two engine samples.
func TestMeanFsyncMS(t *testing.T) {
	before := engineStats{"fsyncs_total": 10, "fsync_seconds_total": 0.01}
	after := engineStats{"fsyncs_total": 110, "fsync_seconds_total": 0.21}
	if got := meanFsyncMS(before, after); math.Abs(got-2) > 1e-9 {
		t.Errorf("mean %v ms, want 2", got)
	}
	if meanFsyncMS(before, before) != 0 || meanFsyncMS(nil, after) != 0 {
		t.Error("a mean without fsyncs or samples")
	}
}
