package httpx

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/lease"
)

// LeaseRules is what one resource's lease operation accepts beyond what
// all of them share (Lease Container, Lease Blob, Lease Share, Lease File).
type LeaseRules struct {
	// Renew: the renew action exists (not on files).
	Renew bool
	// DurationRequired: acquire needs x-ms-lease-duration (files default
	// to an infinite lease).
	DurationRequired bool
	// InfiniteOnly: -1 is the only duration (files).
	InfiniteOnly bool
	// BreakPeriod: break reads x-ms-lease-break-period (a file's lease
	// breaks at once, and the header is ignored).
	BreakPeriod bool
}

// LeaseAction decodes the lease headers of a lease operation: the action,
// the lease ids and, by action, the duration or the break period. Missing
// headers are 400 MissingRequiredHeader, bad values 400
// InvalidHeaderValue naming the header.
func LeaseAction(h http.Header, r LeaseRules) (lease.Action, error) {
	av := h.Get("X-Ms-Lease-Action")
	if av == "" {
		return lease.Action{}, azerr.MissingHeader("x-ms-lease-action")
	}
	kind, ok := lease.ParseAction(av)
	if !ok || kind == lease.Renew && !r.Renew {
		return lease.Action{}, azerr.InvalidHeader("x-ms-lease-action", av)
	}
	a := lease.Action{Kind: kind, LeaseID: h.Get("X-Ms-Lease-Id"), ProposedID: h.Get("X-Ms-Proposed-Lease-Id")}
	if a.ProposedID != "" && !guid.Valid(a.ProposedID) {
		return a, azerr.InvalidHeader("x-ms-proposed-lease-id", a.ProposedID)
	}
	switch kind {
	case lease.Acquire:
		a.Duration = lease.Infinite
		dv := h.Get("X-Ms-Lease-Duration")
		if dv == "" {
			if r.DurationRequired {
				return a, azerr.MissingHeader("x-ms-lease-duration")
			}
			break
		}
		d, err := strconv.Atoi(strings.TrimSpace(dv))
		if err != nil || !lease.ValidDuration(d) || r.InfiniteOnly && d != lease.Infinite {
			return a, azerr.InvalidHeader("x-ms-lease-duration", dv)
		}
		a.Duration = d
	case lease.Renew, lease.Release:
		if a.LeaseID == "" {
			return a, azerr.MissingHeader("x-ms-lease-id")
		}
	case lease.Change:
		if a.LeaseID == "" {
			return a, azerr.MissingHeader("x-ms-lease-id")
		}
		if a.ProposedID == "" {
			return a, azerr.MissingHeader("x-ms-proposed-lease-id")
		}
	case lease.Break:
		if pv := h.Get("X-Ms-Lease-Break-Period"); pv != "" && r.BreakPeriod {
			p, err := strconv.Atoi(strings.TrimSpace(pv))
			if err != nil || !lease.ValidBreakPeriod(p) {
				return a, azerr.InvalidHeader("x-ms-lease-break-period", pv)
			}
			a.BreakPeriod = &p
		}
	}
	return a, nil
}
