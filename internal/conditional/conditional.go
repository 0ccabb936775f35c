// Package conditional parses and evaluates the HTTP conditional headers of
// the Azure Storage protocols: If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since.
//
// Everything here is a pure function of header values and the resource's
// current state, so callers run the evaluation inside the same storage
// transaction as the write it guards.
package conditional

import (
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// Conditions are the parsed conditional headers of one request. A nil
// slice or zero time means the header was absent.
type Conditions struct {
	IfMatch           []string // normalized ETags (quotes removed); "*" matches anything
	IfNoneMatch       []string
	IfModifiedSince   time.Time
	IfUnmodifiedSince time.Time
}

// Header names, as Azure spells them in error details.
const (
	HeaderIfMatch           = "If-Match"
	HeaderIfNoneMatch       = "If-None-Match"
	HeaderIfModifiedSince   = "If-Modified-Since"
	HeaderIfUnmodifiedSince = "If-Unmodified-Since"
)

// Parse parses the values of the four headers (each slice holds every
// occurrence of the header). More than one date value is a 400
// InvalidHeaderValue, as is an empty ETag list. A single date value that is
// not an HTTP date is ignored, as RFC 7232 requires of recipients.
func Parse(ifMatch, ifNoneMatch, ifModifiedSince, ifUnmodifiedSince []string) (Conditions, error) {
	var c Conditions
	var err error
	if c.IfMatch, err = parseETags(HeaderIfMatch, ifMatch); err != nil {
		return c, err
	}
	if c.IfNoneMatch, err = parseETags(HeaderIfNoneMatch, ifNoneMatch); err != nil {
		return c, err
	}
	if c.IfModifiedSince, err = parseDate(HeaderIfModifiedSince, ifModifiedSince); err != nil {
		return c, err
	}
	if c.IfUnmodifiedSince, err = parseDate(HeaderIfUnmodifiedSince, ifUnmodifiedSince); err != nil {
		return c, err
	}
	return c, nil
}

// NormalizeETag removes surrounding quotes and a weak prefix so that quoted
// and unquoted forms compare equal.
func NormalizeETag(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return s
}

func parseETags(name string, values []string) ([]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := []string{}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			e := NormalizeETag(part)
			if e == "" {
				continue
			}
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, azerr.InvalidHeader(name, strings.Join(values, ","))
	}
	return out, nil
}

// ParseDate parses an HTTP date in the forms clients send (RFC 1123, RFC
// 850, ANSI C).
func ParseDate(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC1123, "Mon, 02 Jan 2006 15:04:05 GMT", time.RFC1123Z, time.RFC850, time.ANSIC} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func parseDate(name string, values []string) (time.Time, error) {
	if len(values) == 0 {
		return time.Time{}, nil
	}
	joined := strings.Join(values, ",")
	// Several dates, as separate lines or folded into one line, are 400.
	if len(values) > 1 || strings.Count(strings.ToUpper(values[0]), "GMT") > 1 {
		return time.Time{}, azerr.InvalidHeader(name, joined)
	}
	t, ok := ParseDate(values[0])
	if !ok {
		return time.Time{}, nil
	}
	return t, nil
}

// Any reports whether at least one conditional header is present.
func (c Conditions) Any() bool {
	return c.IfMatch != nil || c.IfNoneMatch != nil || !c.IfModifiedSince.IsZero() || !c.IfUnmodifiedSince.IsZero()
}

// State is what the evaluation needs to know about the resource.
type State struct {
	Exists       bool
	ETag         string // normalized (no quotes)
	LastModified time.Time
}

// Outcome is the result of an evaluation.
type Outcome int

const (
	// Pass means the operation may proceed.
	Pass Outcome = iota
	// NotModified means a read answers 304 (If-None-Match or
	// If-Modified-Since unmet).
	NotModified
	// Failed means 412 (If-Match or If-Unmodified-Since unmet, or any
	// condition of a write).
	Failed
	// ExistsButNoneMatchStar means If-None-Match: * was sent and the
	// resource exists; create operations answer 409 (BlobAlreadyExists),
	// other writes 412.
	ExistsButNoneMatchStar
)

// Err maps an outcome to an Azure error using failCode for 412
// (ConditionNotMet, TargetConditionNotMet, SourceConditionNotMet) and
// existsCode for a create with If-None-Match: * over an existing resource
// (zero means failCode).
func (o Outcome) Err(failCode, existsCode azerr.Code) error {
	switch o {
	case NotModified:
		return azerr.New(azerr.ConditionNotMet).WithStatus(304)
	case Failed:
		return azerr.New(failCode).WithStatus(412)
	case ExistsButNoneMatchStar:
		if existsCode != 0 {
			return azerr.New(existsCode)
		}
		return azerr.New(failCode).WithStatus(412)
	}
	return nil
}

func matchAny(list []string, etag string) bool {
	for _, e := range list {
		if e == "*" || e == etag {
			return true
		}
	}
	return false
}

func trunc(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// modifiedSince reports whether the resource changed after t (IMS met).
func modifiedSince(lmt, t time.Time) bool { return trunc(lmt).After(trunc(t)) }

// unmodifiedSince reports whether the resource is unchanged since t (IUS met).
func unmodifiedSince(lmt, t time.Time) bool { return !trunc(lmt).After(trunc(t)) }

// ReadVersion is the first x-ms-version for which reads accept any
// combination of conditional headers.
const ReadVersion = "2013-08-15"

// EvalRead evaluates the conditions of a read (Get Blob, Get Blob
// Properties) against s. For versions >= 2013-08-15 any combination is
// allowed: If-Match AND If-Unmodified-Since failing gives Failed (412),
// otherwise If-None-Match OR If-Modified-Since failing gives NotModified
// (304). Older versions follow the write rules (but unmet If-None-Match /
// If-Modified-Since still answer 304). A missing resource passes: the
// caller answers 404.
//
// If-None-Match: * can never be met by a read of an existing resource and
// answers 400 UnsatisfiableCondition whatever the resource's state.
func EvalRead(c Conditions, s State, version string) (Outcome, error) {
	for _, e := range c.IfNoneMatch {
		if e == "*" {
			return Pass, azerr.New(azerr.UnsatisfiableCondition)
		}
	}
	if version != "" && version < ReadVersion {
		if err := CheckWriteCombination(c); err != nil {
			return Pass, err
		}
		c = effectiveWrite(c)
	}
	if !s.Exists {
		return Pass, nil
	}
	if c.IfMatch != nil && !matchAny(c.IfMatch, s.ETag) {
		return Failed, nil
	}
	if !c.IfUnmodifiedSince.IsZero() && !unmodifiedSince(s.LastModified, c.IfUnmodifiedSince) {
		return Failed, nil
	}
	inm := c.IfNoneMatch != nil
	ims := !c.IfModifiedSince.IsZero()
	if !inm && !ims {
		return Pass, nil
	}
	inmOK := inm && !matchAny(c.IfNoneMatch, s.ETag)
	imsOK := ims && modifiedSince(s.LastModified, c.IfModifiedSince)
	if inmOK || imsOK {
		return Pass, nil
	}
	return NotModified, nil
}

// CheckWriteCombination rejects header combinations a write does not
// accept: only one conditional header, except If-Match with
// If-Unmodified-Since and If-None-Match with If-Modified-Since; and only
// one ETag per header. Violations answer 400
// MultipleConditionHeadersNotSupported.
func CheckWriteCombination(c Conditions) error {
	n := 0
	for _, present := range []bool{c.IfMatch != nil, c.IfNoneMatch != nil, !c.IfModifiedSince.IsZero(), !c.IfUnmodifiedSince.IsZero()} {
		if present {
			n++
		}
	}
	if len(c.IfMatch) > 1 || len(c.IfNoneMatch) > 1 {
		return azerr.New(azerr.MultipleConditionHeadersNotSupported)
	}
	if n <= 1 {
		return nil
	}
	if n == 2 && c.IfMatch != nil && !c.IfUnmodifiedSince.IsZero() {
		return nil
	}
	if n == 2 && c.IfNoneMatch != nil && !c.IfModifiedSince.IsZero() {
		return nil
	}
	return azerr.New(azerr.MultipleConditionHeadersNotSupported)
}

// effectiveWrite drops the date header of an allowed pair: with If-Match +
// If-Unmodified-Since only If-Match counts, with If-None-Match +
// If-Modified-Since only If-None-Match counts.
func effectiveWrite(c Conditions) Conditions {
	if c.IfMatch != nil {
		c.IfUnmodifiedSince = time.Time{}
	}
	if c.IfNoneMatch != nil {
		c.IfModifiedSince = time.Time{}
	}
	return c
}

// EvalWrite evaluates the conditions of a write against s. The caller has
// already called CheckWriteCombination (or calls this, which checks it
// again). Rules: on a missing resource If-Match (any value) fails and the
// other headers are ignored; If-None-Match: * on an existing resource gives
// ExistsButNoneMatchStar; any other unmet condition gives Failed.
func EvalWrite(c Conditions, s State) (Outcome, error) {
	if err := CheckWriteCombination(c); err != nil {
		return Pass, err
	}
	c = effectiveWrite(c)
	if !s.Exists {
		if c.IfMatch != nil {
			return Failed, nil
		}
		return Pass, nil
	}
	if c.IfMatch != nil && !matchAny(c.IfMatch, s.ETag) {
		return Failed, nil
	}
	if c.IfNoneMatch != nil && matchAny(c.IfNoneMatch, s.ETag) {
		if c.IfNoneMatch[0] == "*" {
			return ExistsButNoneMatchStar, nil
		}
		return Failed, nil
	}
	if !c.IfModifiedSince.IsZero() && !modifiedSince(s.LastModified, c.IfModifiedSince) {
		return Failed, nil
	}
	if !c.IfUnmodifiedSince.IsZero() && !unmodifiedSince(s.LastModified, c.IfUnmodifiedSince) {
		return Failed, nil
	}
	return Pass, nil
}

// EvalDates evaluates only If-Modified-Since and If-Unmodified-Since (the
// container operations that accept no ETag conditions). Both may be given;
// either unmet gives Failed.
func EvalDates(c Conditions, s State) Outcome {
	if !s.Exists {
		return Pass
	}
	if !c.IfModifiedSince.IsZero() && !modifiedSince(s.LastModified, c.IfModifiedSince) {
		return Failed
	}
	if !c.IfUnmodifiedSince.IsZero() && !unmodifiedSince(s.LastModified, c.IfUnmodifiedSince) {
		return Failed
	}
	return Pass
}
