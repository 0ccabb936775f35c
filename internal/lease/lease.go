// Package lease is the lease state machine shared by blobs, containers,
// files and shares: a pure function of (state, action, now) giving the new
// state or an Azure error code, plus the enforcement rule other operations
// apply. Time-driven transitions (a fixed lease expiring, a break period
// ending) are computed lazily from now, so no background sweeper is needed.
package lease

import (
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// Phase is the stored lease phase. Expired and Broken-by-time are derived
// from Phase plus the stored times by Effective.
type Phase int

// Lease states, as in x-ms-lease-state.
const (
	Available Phase = iota
	Leased
	Breaking
	Broken
	Expired
)

func (p Phase) String() string {
	return [...]string{"available", "leased", "breaking", "broken", "expired"}[p]
}

// Infinite is the Duration of an infinite lease.
const Infinite = -1

// State is the stored lease of one resource. The zero value is Available.
type State struct {
	Phase Phase  `json:"p,omitempty"`
	ID    string `json:"id,omitempty"`
	// Duration is Infinite or the fixed duration in seconds (while Leased).
	Duration int `json:"d,omitempty"`
	// Expiry is when a fixed lease ends (Leased with Duration > 0).
	Expiry time.Time `json:"e,omitzero"`
	// BreakTime is when a Breaking lease becomes Broken.
	BreakTime time.Time `json:"b,omitzero"`
}

// Effective returns the state as of now, applying time-driven
// transitions: a fixed lease past its expiry is Expired, a breaking lease
// past its break time is Broken.
func (s State) Effective(now time.Time) State {
	switch s.Phase {
	case Leased:
		if s.Duration > 0 && !now.Before(s.Expiry) {
			return State{Phase: Expired, ID: s.ID, Duration: s.Duration}
		}
	case Breaking:
		if !now.Before(s.BreakTime) {
			return State{Phase: Broken, ID: s.ID}
		}
	}
	return s
}

// Status is x-ms-lease-status: "locked" while Leased or Breaking.
func (s State) Status(now time.Time) string {
	switch s.Effective(now).Phase {
	case Leased, Breaking:
		return "locked"
	}
	return "unlocked"
}

// StateName is x-ms-lease-state.
func (s State) StateName(now time.Time) string { return s.Effective(now).Phase.String() }

// DurationName is x-ms-lease-duration ("infinite" or "fixed"), empty
// unless Leased.
func (s State) DurationName(now time.Time) string {
	e := s.Effective(now)
	if e.Phase != Leased {
		return ""
	}
	if e.Duration == Infinite {
		return "infinite"
	}
	return "fixed"
}

// Active reports whether the lease is Leased or Breaking (writes need the id).
func (s State) Active(now time.Time) bool {
	p := s.Effective(now).Phase
	return p == Leased || p == Breaking
}

// ActionKind is x-ms-lease-action.
type ActionKind int

// Lease actions.
const (
	Acquire ActionKind = iota
	Renew
	Change
	Release
	Break
)

// ParseAction parses x-ms-lease-action.
func ParseAction(s string) (ActionKind, bool) {
	switch strings.ToLower(s) {
	case "acquire":
		return Acquire, true
	case "renew":
		return Renew, true
	case "change":
		return Change, true
	case "release":
		return Release, true
	case "break":
		return Break, true
	}
	return 0, false
}

// Action is one lease request. The caller has validated the headers
// (ValidDuration, ValidBreakPeriod, required ids).
type Action struct {
	Kind ActionKind
	// LeaseID is x-ms-lease-id (renew, change, release).
	LeaseID string
	// ProposedID is x-ms-proposed-lease-id (acquire, change). For an
	// acquire without a proposal the caller passes a freshly generated id
	// in NewID.
	ProposedID string
	NewID      string
	// Duration is x-ms-lease-duration for acquire (Infinite or 15..60).
	Duration int
	// BreakPeriod is x-ms-lease-break-period for break; nil when absent.
	BreakPeriod *int
}

// ValidDuration reports whether d is an acceptable x-ms-lease-duration.
func ValidDuration(d int) bool { return d == Infinite || (d >= 15 && d <= 60) }

// ValidBreakPeriod reports whether p is an acceptable x-ms-lease-break-period.
func ValidBreakPeriod(p int) bool { return p >= 0 && p <= 60 }

// Result is what a successful action reports.
type Result struct {
	// LeaseID is returned for acquire, renew and change (and release).
	LeaseID string
	// LeaseTime is the seconds until the lease is broken (break only).
	LeaseTime int
}

// SameID compares lease ids (GUIDs) case-insensitively.
func SameID(a, b string) bool { return a != "" && strings.EqualFold(a, b) }

// Apply runs action a on state s at time now. It returns the new state to
// store and the result, or a non-zero error code (the state is then
// unchanged).
func Apply(s State, a Action, now time.Time) (State, Result, azerr.Code) {
	s = s.Effective(now)
	switch a.Kind {
	case Acquire:
		id := a.ProposedID
		if id == "" {
			id = a.NewID
		}
		switch s.Phase {
		case Leased:
			if a.ProposedID == "" || !SameID(a.ProposedID, s.ID) {
				return s, Result{}, azerr.LeaseAlreadyPresent
			}
			id = s.ID
		case Breaking:
			if SameID(a.ProposedID, s.ID) {
				return s, Result{}, azerr.LeaseIsBreakingAndCannotBeAcquired
			}
			return s, Result{}, azerr.LeaseAlreadyPresent
		}
		n := State{Phase: Leased, ID: id, Duration: a.Duration}
		if a.Duration != Infinite {
			n.Expiry = now.Add(time.Duration(a.Duration) * time.Second)
		}
		return n, Result{LeaseID: id}, 0

	case Renew:
		if !SameID(a.LeaseID, s.ID) {
			return s, Result{}, azerr.LeaseIdMismatchWithLeaseOperation
		}
		switch s.Phase {
		case Leased:
			if s.Duration != Infinite {
				s.Expiry = now.Add(time.Duration(s.Duration) * time.Second)
			}
			return s, Result{LeaseID: s.ID}, 0
		case Expired:
			// The lease was not taken over or written through since it
			// expired (a write clears the id), so it comes back.
			n := State{Phase: Leased, ID: s.ID, Duration: s.Duration, Expiry: now.Add(time.Duration(s.Duration) * time.Second)}
			return n, Result{LeaseID: s.ID}, 0
		case Breaking, Broken:
			return s, Result{}, azerr.LeaseIsBrokenAndCannotBeRenewed
		}
		return s, Result{}, azerr.LeaseIdMismatchWithLeaseOperation

	case Change:
		switch s.Phase {
		case Leased:
			if SameID(a.LeaseID, s.ID) {
				s.ID = a.ProposedID
				return s, Result{LeaseID: s.ID}, 0
			}
			if SameID(a.ProposedID, s.ID) {
				return s, Result{LeaseID: s.ID}, 0
			}
			return s, Result{}, azerr.LeaseIdMismatchWithLeaseOperation
		case Breaking:
			if SameID(a.LeaseID, s.ID) {
				return s, Result{}, azerr.LeaseIsBreakingAndCannotBeChanged
			}
			return s, Result{}, azerr.LeaseIdMismatchWithLeaseOperation
		}
		return s, Result{}, azerr.LeaseNotPresentWithLeaseOperation

	case Release:
		if s.Phase == Available || !SameID(a.LeaseID, s.ID) {
			return s, Result{}, azerr.LeaseIdMismatchWithLeaseOperation
		}
		return State{}, Result{LeaseID: s.ID}, 0

	case Break:
		switch s.Phase {
		case Available:
			return s, Result{}, azerr.LeaseNotPresentWithLeaseOperation
		case Broken, Expired:
			return State{Phase: Broken, ID: s.ID}, Result{}, 0
		case Leased:
			var end time.Time
			switch {
			case a.BreakPeriod != nil:
				end = now.Add(time.Duration(*a.BreakPeriod) * time.Second)
				if s.Duration != Infinite && s.Expiry.Before(end) {
					end = s.Expiry
				}
			case s.Duration == Infinite:
				end = now
			default:
				end = s.Expiry
			}
			return breakAt(s.ID, end, now)
		case Breaking:
			end := s.BreakTime
			if a.BreakPeriod != nil {
				if p := now.Add(time.Duration(*a.BreakPeriod) * time.Second); p.Before(end) {
					end = p
				}
			}
			return breakAt(s.ID, end, now)
		}
	}
	return s, Result{}, azerr.LeaseNotPresentWithLeaseOperation
}

// breakAt returns Broken when end has come, else Breaking until end, with
// the remaining whole seconds (rounded up) as LeaseTime.
func breakAt(id string, end, now time.Time) (State, Result, azerr.Code) {
	if !now.Before(end) {
		return State{Phase: Broken, ID: id}, Result{LeaseTime: 0}, 0
	}
	left := end.Sub(now)
	secs := int((left + time.Second - 1) / time.Second)
	return State{Phase: Breaking, ID: id, BreakTime: end}, Result{LeaseTime: secs}, 0
}

// Target selects the error codes of the enforcement rule.
type Target int

// Enforcement targets.
const (
	BlobTarget Target = iota
	ContainerTarget
	FileTarget
	ShareTarget
)

func (t Target) codes() (mismatch, notPresent azerr.Code) {
	switch t {
	case ContainerTarget:
		return azerr.LeaseIdMismatchWithContainerOperation, azerr.LeaseNotPresentWithContainerOperation
	case FileTarget:
		return azerr.LeaseIdMismatchWithFileOperation, azerr.LeaseNotPresentWithFileOperation
	case ShareTarget:
		return azerr.LeaseIdMismatchWithShareOperation, azerr.LeaseNotPresentWithShareOperation
	}
	return azerr.LeaseIdMismatchWithBlobOperation, azerr.LeaseNotPresentWithBlobOperation
}

// Enforce applies the lease rule of an ordinary operation (not a lease
// action) carrying leaseID ("" when x-ms-lease-id is absent). write is true
// for operations that modify the resource. It returns the state to store
// (a write without an id through a Broken or Expired lease makes it
// Available and forgets the id) or a 412 error code:
//
//   - Leased/Breaking: a write without an id → LeaseIdMissing; any request
//     with another id → LeaseIdMismatchWith<Target>Operation.
//   - Available/Broken/Expired: any request with an id →
//     LeaseNotPresentWith<Target>Operation.
func Enforce(s State, leaseID string, write bool, now time.Time, t Target) (State, azerr.Code) {
	e := s.Effective(now)
	mismatch, notPresent := t.codes()
	switch e.Phase {
	case Leased, Breaking:
		if leaseID == "" {
			if write {
				return s, azerr.LeaseIdMissing
			}
			return s, 0
		}
		if !SameID(leaseID, e.ID) {
			return s, mismatch
		}
		return s, 0
	}
	if leaseID != "" {
		return s, notPresent
	}
	if write && (e.Phase == Broken || e.Phase == Expired) {
		return State{}, 0
	}
	return s, 0
}
