// Package faults holds the fault-injection rules of the admin listener:
// per service and operation, answer with an Azure error, add latency,
// cut the connection mid-response, or throttle beyond a rate. The HTTP
// plumbing (httpx) asks Match once per request, when the service has
// named the operation and before it runs.
//
// It is a leaf: it knows Azure's error codes, no service.
package faults

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// Rule is one fault, as posted to the admin listener.
type Rule struct {
	// Service ("blob", "queue", "table", "file") and Operation (as in the
	// access log, e.g. "PutBlob") select requests; empty matches any.
	Service   string `json:"service,omitempty"`
	Operation string `json:"operation,omitempty"`
	// Status answers the request with Azure's error for it without
	// running it: 503 ServerBusy, 500 InternalError, or the status of
	// ErrorCode when that names another code (500 OperationTimedOut).
	Status    int    `json:"status,omitempty"`
	ErrorCode string `json:"errorCode,omitempty"`
	// Count is how many requests the rule hits (0: every one);
	// Probability, if set, is the chance (0 to 1) that a request is hit.
	Count       int     `json:"count,omitempty"`
	Probability float64 `json:"probability,omitempty"`
	// LatencyMs delays hit requests before they run.
	LatencyMs int `json:"latencyMs,omitempty"`
	// Reset runs the request, then cuts the connection mid-response:
	// after the head and part of the body, or before the head when there
	// is no body to cut.
	Reset bool `json:"reset,omitempty"`
	// RatePerSecond throttles: requests beyond this rate (a bucket of one
	// second's worth, at least one request) are answered 503 ServerBusy.
	RatePerSecond float64 `json:"ratePerSecond,omitempty"`
}

// State is a rule as listed: its id, the rule, and what is left of it.
type State struct {
	ID int `json:"id"`
	Rule
	// Remaining is how many more requests a counted rule hits.
	Remaining *int `json:"remaining,omitempty"`
	// Hits counts the requests the rule has hit so far.
	Hits int64 `json:"hits"`
}

// Action is what a request must suffer.
type Action struct {
	Latency time.Duration
	// Err answers the request instead of running it.
	Err *azerr.Error
	// Reset cuts the connection mid-response.
	Reset bool
}

// Set is the rules in force. The zero value has none.
type Set struct {
	mu     sync.Mutex
	nextID int
	// rules is read without the lock on every request (copy on write).
	rules atomic.Pointer[[]*rule]
}

type rule struct {
	id   int
	r    Rule
	err  *azerr.Error
	hits atomic.Int64
	mu   sync.Mutex // guards left, tokens, last
	left int
	// Token bucket of a throttling rule.
	tokens float64
	last   time.Time
}

// Add validates r and puts it in force, returning its id.
func (s *Set) Add(r Rule) (int, error) {
	nr := &rule{r: r, left: r.Count}
	switch {
	case r.Count < 0:
		return 0, errors.New("count must not be negative")
	case r.Probability < 0 || r.Probability > 1:
		return 0, errors.New("probability must be between 0 and 1")
	case r.LatencyMs < 0:
		return 0, errors.New("latencyMs must not be negative")
	case r.RatePerSecond < 0:
		return 0, errors.New("ratePerSecond must not be negative")
	case r.RatePerSecond > 0 && (r.Reset || r.Count > 0 || r.Probability > 0):
		return 0, errors.New("ratePerSecond throttles on its own: it takes no reset, count or probability")
	case r.Reset && (r.Status != 0 || r.ErrorCode != ""):
		return 0, errors.New("reset answers nothing: it takes no status or errorCode")
	}
	switch r.Service {
	case "", "blob", "queue", "table", "file":
	default:
		return 0, fmt.Errorf("service %q: want blob, queue, table or file", r.Service)
	}
	code, status := azerr.Code(0), r.Status
	if r.ErrorCode != "" {
		c, ok := azerr.Lookup(r.ErrorCode)
		if !ok {
			return 0, fmt.Errorf("errorCode %q is not an Azure Storage error code lazuli knows", r.ErrorCode)
		}
		code = c
		if status == 0 {
			status = c.Status()
		}
	} else {
		switch status {
		case 0:
			if r.RatePerSecond > 0 {
				code, status = azerr.ServerBusy, 503
			}
		case 503:
			code = azerr.ServerBusy
		case 500:
			code = azerr.InternalError
		default:
			return 0, fmt.Errorf("status %d: give the errorCode Azure answers with it (503 is ServerBusy, 500 InternalError)", status)
		}
	}
	if status != 0 {
		if status < 400 || status > 599 {
			return 0, fmt.Errorf("status %d is not an error status", status)
		}
		nr.err = azerr.New(code).WithStatus(status)
	}
	if nr.err == nil && !r.Reset && r.LatencyMs == 0 {
		return 0, errors.New("the rule does nothing: give status, errorCode, latencyMs, reset or ratePerSecond")
	}
	nr.tokens = max(1, r.RatePerSecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	nr.id = s.nextID
	var cur []*rule
	if p := s.rules.Load(); p != nil {
		cur = *p
	}
	next := append(append(make([]*rule, 0, len(cur)+1), cur...), nr)
	s.rules.Store(&next)
	return nr.id, nil
}

// Clear removes every rule.
func (s *Set) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules.Store(nil)
}

// List returns the rules in force, oldest first.
func (s *Set) List() []State {
	p := s.rules.Load()
	out := []State{}
	if p == nil {
		return out
	}
	for _, r := range *p {
		st := State{ID: r.id, Rule: r.r, Hits: r.hits.Load()}
		if r.r.Count > 0 {
			r.mu.Lock()
			left := r.left
			r.mu.Unlock()
			st.Remaining = &left
		}
		out = append(out, st)
	}
	return out
}

// Match returns what a request for operation of service must suffer:
// the first rule that hits it decides. Without rules it costs one atomic
// load.
func (s *Set) Match(service, operation string, now time.Time) (Action, bool) {
	p := s.rules.Load()
	if p == nil {
		return Action{}, false
	}
	for _, r := range *p {
		if (r.r.Service != "" && r.r.Service != service) || (r.r.Operation != "" && !strings.EqualFold(r.r.Operation, operation)) {
			continue
		}
		if !r.hit(now) {
			continue
		}
		r.hits.Add(1)
		return Action{Latency: time.Duration(r.r.LatencyMs) * time.Millisecond, Err: r.err, Reset: r.r.Reset}, true
	}
	return Action{}, false
}

// hit decides whether the rule hits one more request.
func (r *rule) hit(now time.Time) bool {
	if r.r.RatePerSecond > 0 {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.last.IsZero() {
			r.tokens = min(max(1, r.r.RatePerSecond), r.tokens+now.Sub(r.last).Seconds()*r.r.RatePerSecond)
		}
		r.last = now
		if r.tokens >= 1 {
			r.tokens--
			return false // within the rate
		}
		return true
	}
	if r.r.Probability > 0 && rand.Float64() >= r.r.Probability {
		return false
	}
	if r.r.Count > 0 {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.left == 0 {
			return false
		}
		r.left--
	}
	return true
}
