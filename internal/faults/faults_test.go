package faults

import (
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

func TestCountAndMatching(t *testing.T) {
	var s Set
	if _, ok := s.Match("blob", "PutBlob", time.Now()); ok {
		t.Fatal("a match without rules")
	}
	if _, err := s.Add(Rule{Service: "blob", Operation: "PutBlob", Status: 503, Count: 2}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, ok := s.Match("queue", "PutBlob", now); ok {
		t.Error("matched another service")
	}
	if _, ok := s.Match("blob", "GetBlob", now); ok {
		t.Error("matched another operation")
	}
	for i := range 2 {
		a, ok := s.Match("blob", "PutBlob", now)
		if !ok || a.Err == nil || a.Err.Code != azerr.ServerBusy || a.Err.Status != 503 {
			t.Fatalf("hit %d: %+v %v", i, a, ok)
		}
	}
	if _, ok := s.Match("blob", "PutBlob", now); ok {
		t.Error("a third hit of a rule counted for two")
	}
	l := s.List()
	if len(l) != 1 || *l[0].Remaining != 0 || l[0].Hits != 2 {
		t.Errorf("list: %+v", l)
	}
	s.Clear()
	if len(s.List()) != 0 {
		t.Error("rules after Clear")
	}
}

func TestRateAndProbability(t *testing.T) {
	var s Set
	if _, err := s.Add(Rule{RatePerSecond: 2}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	hits := 0
	for range 5 {
		if a, ok := s.Match("table", "InsertEntity", t0); ok {
			if a.Err.Code != azerr.ServerBusy {
				t.Fatalf("throttled with %v", a.Err)
			}
			hits++
		}
	}
	if hits != 3 {
		t.Errorf("%d of 5 throttled at once at 2 a second, want 3", hits)
	}
	if _, ok := s.Match("table", "InsertEntity", t0.Add(time.Second)); ok {
		t.Error("throttled a second later")
	}
	s.Clear()
	s.Add(Rule{Probability: 0.5, LatencyMs: 1})
	hits = 0
	for range 2000 {
		if _, ok := s.Match("blob", "GetBlob", t0); ok {
			hits++
		}
	}
	if hits < 800 || hits > 1200 {
		t.Errorf("%d of 2000 hit at probability 0.5", hits)
	}
}

func TestBadRules(t *testing.T) {
	for _, r := range []Rule{
		{Status: 418}, {Status: 200, ErrorCode: "ServerBusy"}, {Service: "dfs", Status: 503}, {ErrorCode: "Nope"},
		{Probability: 1.5, Status: 503}, {Count: -1, Status: 503}, {Reset: true, Status: 503}, {},
		{RatePerSecond: 3, Count: 1},
	} {
		var s Set
		if _, err := s.Add(r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}
