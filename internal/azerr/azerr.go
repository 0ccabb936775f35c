// Package azerr is the one catalog of Azure Storage error codes (code ->
// HTTP status and default message) and the renderers for Azure's XML error
// body (Blob, Queue, File) and OData JSON error body (Table).
//
// It is a leaf that every other layer uses: the domain packages choose a
// Code (they know whether a miss is BlobNotFound or ContainerNotFound),
// the HTTP packages add details, and httpx renders the *Error once per
// response. Codes are typed constants, so a misspelt code does not compile.
package azerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Error is an Azure Storage error: a code, its HTTP status, a message and
// optional extra detail elements rendered after the message.
type Error struct {
	Code    Code
	Status  int
	Message string
	// Details are extra elements of the XML body, in order (for example
	// HeaderName / HeaderValue or AuthenticationErrorDetail).
	Details []Detail
	// Header holds extra response headers to send with the error.
	Header http.Header
	// Input is the request value a domain refused (InvalidValue), which
	// the protocol layer names in the body (NameInput).
	Input Input
}

// Detail is one extra element of an error body.
type Detail struct{ Name, Value string }

func (e *Error) Error() string { return e.Code.String() + ": " + e.Message }

// New returns the error for code with the catalog's status and message.
func New(code Code) *Error {
	return &Error{Code: code, Status: code.Status(), Message: code.Message()}
}

// Newf returns the catalog error for code with a custom message.
func Newf(code Code, format string, args ...any) *Error {
	e := New(code)
	e.Message = fmt.Sprintf(format, args...)
	return e
}

// WithStatus returns a copy of e with another status (ConditionNotMet is 304
// on reads and 412 on writes).
func (e *Error) WithStatus(status int) *Error {
	c := *e
	c.Status = status
	return &c
}

// WithDetail returns a copy of e with one more detail element.
func (e *Error) WithDetail(name, value string) *Error {
	c := *e
	c.Details = append(append([]Detail(nil), e.Details...), Detail{name, value})
	return &c
}

// WithHeader returns a copy of e that also sends header name: value.
func (e *Error) WithHeader(name, value string) *Error {
	c := *e
	c.Header = e.Header.Clone()
	if c.Header == nil {
		c.Header = http.Header{}
	}
	c.Header.Set(name, value)
	return &c
}

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// InvalidHeader is the common 400 for a bad header value.
func InvalidHeader(name, value string) *Error {
	return New(InvalidHeaderValue).WithDetail("HeaderName", name).WithDetail("HeaderValue", value)
}

// MissingHeader is the common 400 for an absent required header.
func MissingHeader(name string) *Error {
	return New(MissingRequiredHeader).WithDetail("HeaderName", name)
}

// InvalidQuery is the common 400 for a bad query parameter value.
func InvalidQuery(name, value, reason string) *Error {
	e := New(InvalidQueryParameterValue).WithDetail("QueryParameterName", name).WithDetail("QueryParameterValue", value)
	if reason != "" {
		e = e.WithDetail("Reason", reason)
	}
	return e
}

// OutOfRangeQuery is the 400 for a numeric query parameter outside its range.
func OutOfRangeQuery(name, value string, min, max int64) *Error {
	return New(OutOfRangeQueryParameterValue).
		WithDetail("QueryParameterName", name).WithDetail("QueryParameterValue", value).
		WithDetail("MinimumAllowed", fmt.Sprint(min)).WithDetail("MaximumAllowed", fmt.Sprint(max))
}

// fullMessage is the message as Azure sends it: text, request id, time.
func fullMessage(e *Error, requestID string, now time.Time) string {
	return e.Message + "\nRequestId:" + requestID + "\nTime:" + now.UTC().Format("2006-01-02T15:04:05.0000000Z")
}

// WriteXML renders the XML error body used by Blob, Queue and File.
func WriteXML(w io.Writer, e *Error, requestID string, now time.Time) error {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><Error><Code>`)
	b.WriteString(EscapeXML(e.Code.String()))
	b.WriteString(`</Code><Message>`)
	b.WriteString(EscapeXML(fullMessage(e, requestID, now)))
	b.WriteString(`</Message>`)
	for _, d := range e.Details {
		b.WriteString("<" + d.Name + ">" + EscapeXML(d.Value) + "</" + d.Name + ">")
	}
	b.WriteString(`</Error>`)
	_, err := io.WriteString(w, b.String())
	return err
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// EscapeXML escapes text for an XML element or attribute; unlike
// encoding/xml it keeps newlines literal, as Azure does. Characters XML 1.0
// cannot carry (control characters other than tab, newline and carriage
// return, invalid UTF-8, U+FFFE, U+FFFF) become U+FFFD, so that echoed
// input never makes the document malformed.
func EscapeXML(s string) string { return xmlEscaper.Replace(strings.Map(xmlChar, s)) }

// XMLSafe reports whether XML 1.0 can carry s as it is: valid UTF-8
// without the characters EscapeXML replaces. Listings send names that
// are not percent-encoded with Encoded="true".
func XMLSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if xmlChar(r) != r {
			return false
		}
	}
	return true
}

// EscapeXMLText is EscapeXML for element text that must read back byte for
// byte: it also escapes carriage return, which an XML reader would
// otherwise turn into a line feed.
func EscapeXMLText(s string) string { return strings.ReplaceAll(EscapeXML(s), "\r", "&#xD;") }

func xmlChar(r rune) rune {
	if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
		return utf8.RuneError
	}
	return r
}

// WriteJSON renders the OData JSON error body used by Table.
// indexPrefix, when not empty, is put before the message ("3:" for the
// failing operation of a batch).
func WriteJSON(w io.Writer, e *Error, requestID string, now time.Time, indexPrefix string) error {
	type msg struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	}
	type body struct {
		Code    string `json:"code"`
		Message msg    `json:"message"`
	}
	v := map[string]body{"odata.error": {Code: e.Code.String(), Message: msg{Lang: "en-US", Value: indexPrefix + fullMessage(e, requestID, now)}}}
	return json.NewEncoder(w).Encode(v)
}
