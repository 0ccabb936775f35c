package blobhttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/conditional"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// Version-level immutability (Set/Delete Blob Immutability Policy, Set
// Blob Legal Hold, the policy given on writes) and Set Blob Expiry; the
// rules are the domain's (blob/immutability.go, blob/expiry.go).

// policyMode parses x-ms-immutability-policy-mode (Unlocked, the default,
// or Locked, in any case).
func policyMode(v string) (string, error) {
	switch {
	case v == "", strings.EqualFold(v, blob.ModeUnlocked):
		return blob.ModeUnlocked, nil
	case strings.EqualFold(v, blob.ModeLocked):
		return blob.ModeLocked, nil
	}
	return "", azerr.InvalidHeader("x-ms-immutability-policy-mode", v)
}

// untilDate parses x-ms-immutability-policy-until-date, which must be an
// HTTP date after now.
func (h *handler) untilDate(v string) (time.Time, error) {
	t, ok := conditional.ParseDate(v)
	if !ok || !t.After(h.d.Now()) {
		return time.Time{}, azerr.InvalidHeader("x-ms-immutability-policy-until-date", v)
	}
	return t, nil
}

// legalHoldHeader parses x-ms-legal-hold (true or false; absent: false).
func legalHoldHeader(rq *req) (bool, error) {
	v := rq.r.Header.Get("X-Ms-Legal-Hold")
	if v == "" {
		return false, nil
	}
	if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return false, azerr.InvalidHeader("x-ms-legal-hold", v)
	}
	return strings.EqualFold(v, "true"), nil
}

// protection reads the immutability policy and legal hold a write that
// creates a version asks for (nil when none).
func (h *handler) protection(rq *req) (*blob.Protection, error) {
	hd := rq.r.Header
	until, mode := hd.Get("X-Ms-Immutability-Policy-Until-Date"), hd.Get("X-Ms-Immutability-Policy-Mode")
	hold, err := legalHoldHeader(rq)
	if err != nil {
		return nil, err
	}
	if until == "" && mode == "" && !hold {
		return nil, nil
	}
	p := &blob.Protection{LegalHold: hold}
	if until == "" && mode != "" {
		return nil, azerr.MissingHeader("x-ms-immutability-policy-until-date")
	}
	if until != "" {
		if p.Until, err = h.untilDate(until); err != nil {
			return nil, err
		}
		if p.Mode, err = policyMode(mode); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// protectionHeaders answers the immutability policy and legal hold of b
// on Get Blob and Get Blob Properties.
func protectionHeaders(hd http.Header, b *blob.Blob) {
	if b.ImmutableMode != "" {
		hd.Set("X-Ms-Immutability-Policy-Until-Date", httpx.FormatHTTPTime(b.ImmutableUntil))
		hd.Set("X-Ms-Immutability-Policy-Mode", strings.ToLower(b.ImmutableMode))
	}
	if b.LegalHold {
		hd.Set("X-Ms-Legal-Hold", "true")
	}
	if !b.ExpiresOn.IsZero() {
		hd.Set("X-Ms-Expiry-Time", httpx.FormatHTTPTime(b.ExpiresOn))
	}
}

// protectionXML renders the same in a List Blobs entry: the policy with
// include=immutabilitypolicy, the hold with include=legalhold, the
// expiry time always.
func protectionXML(b *strings.Builder, bl *blob.Blob, inc map[string]bool) {
	if !bl.ExpiresOn.IsZero() {
		b.WriteString("<Expiry-Time>" + httpx.FormatHTTPTime(bl.ExpiresOn) + "</Expiry-Time>")
	}
	if inc["immutabilitypolicy"] && bl.ImmutableMode != "" {
		b.WriteString("<ImmutabilityPolicyUntilDate>" + httpx.FormatHTTPTime(bl.ImmutableUntil) +
			"</ImmutabilityPolicyUntilDate><ImmutabilityPolicyMode>" + strings.ToLower(bl.ImmutableMode) + "</ImmutabilityPolicyMode>")
	}
	if inc["legalhold"] {
		b.WriteString("<LegalHold>" + strconv.FormatBool(bl.LegalHold) + "</LegalHold>")
	}
}

// immutableVersioningHeader reads Create Container's
// x-ms-immutable-storage-with-versioning-enabled, which needs versioning
// on for the account (Azure's prerequisite; 400 InvalidHeaderValue
// otherwise, lazuli's pinned choice).
func (h *handler) immutableVersioningHeader(rq *req) (bool, error) {
	v := rq.r.Header.Get("X-Ms-Immutable-Storage-With-Versioning-Enabled")
	if v == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, azerr.InvalidHeader("x-ms-immutable-storage-with-versioning-enabled", v)
	}
	if on && !h.svc.Versioning(rq.info.Account) {
		return false, azerr.InvalidHeader("x-ms-immutable-storage-with-versioning-enabled", v)
	}
	return on, nil
}

// onlyUnmodifiedSince reads the one condition Set Blob Immutability Policy
// takes.
func (rq *req) onlyUnmodifiedSince() (blob.Cond, error) {
	c, err := conditional.Parse(nil, nil, nil, rq.r.Header.Values("If-Unmodified-Since"))
	return blob.Cond{Conditions: c}, err
}

// setImmutabilityPolicy is Set Blob Immutability Policy.
func (h *handler) setImmutabilityPolicy(rq *req) error {
	hd := rq.r.Header
	v := hd.Get("X-Ms-Immutability-Policy-Until-Date")
	if v == "" {
		return azerr.MissingHeader("x-ms-immutability-policy-until-date")
	}
	until, err := h.untilDate(v)
	if err != nil {
		return err
	}
	mode, err := policyMode(hd.Get("X-Ms-Immutability-Policy-Mode"))
	if err != nil {
		return err
	}
	cond, err := rq.onlyUnmodifiedSince()
	if err != nil {
		return err
	}
	b, err := h.svc.SetImmutabilityPolicy(rq.ctx(), rq.ref(), until, mode, cond)
	if err != nil {
		return err
	}
	out := rq.w.Header()
	out.Set("X-Ms-Immutability-Policy-Until-Date", httpx.FormatHTTPTime(b.ImmutableUntil))
	out.Set("X-Ms-Immutability-Policy-Mode", strings.ToLower(b.ImmutableMode))
	rq.status(http.StatusOK)
	return nil
}

// deleteImmutabilityPolicy is Delete Blob Immutability Policy.
func (h *handler) deleteImmutabilityPolicy(rq *req) error {
	if err := h.svc.DeleteImmutabilityPolicy(rq.ctx(), rq.ref()); err != nil {
		return err
	}
	rq.status(http.StatusOK)
	return nil
}

// setLegalHold is Set Blob Legal Hold.
func (h *handler) setLegalHold(rq *req) error {
	if rq.r.Header.Get("X-Ms-Legal-Hold") == "" {
		return azerr.MissingHeader("x-ms-legal-hold")
	}
	hold, err := legalHoldHeader(rq)
	if err != nil {
		return err
	}
	b, err := h.svc.SetLegalHold(rq.ctx(), rq.ref(), hold)
	if err != nil {
		return err
	}
	rq.w.Header().Set("X-Ms-Legal-Hold", strconv.FormatBool(b.LegalHold))
	rq.status(http.StatusOK)
	return nil
}

// setExpiry is Set Blob Expiry. Azure offers it on accounts with a
// hierarchical namespace only; elsewhere it answers as for an unknown
// comp (400 InvalidQueryParameterValue, lazuli's pinned choice).
func (h *handler) setExpiry(rq *req) error {
	if !h.svc.HierarchicalNamespace(rq.info.Account) {
		return azerr.InvalidQuery("comp", "expiry", "")
	}
	hd := rq.r.Header
	req, err := blob.ParseExpiry(hd.Get("X-Ms-Expiry-Option"), hd.Get("X-Ms-Expiry-Time"), h.d.Now())
	if err != nil {
		return err
	}
	cond, err := rq.cond()
	if err != nil {
		return err
	}
	b, err := h.svc.SetExpiry(rq.ctx(), rq.ref(), req, cond)
	if err != nil {
		return err
	}
	setETag(rq.w.Header(), b.ETag, b.Modified)
	rq.status(http.StatusOK)
	return nil
}
