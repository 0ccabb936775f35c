package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// field is one request header as written on the wire.
type field struct{ name, value string }

// getField returns the value of the first header named name (compared
// case-insensitively), or "".
func getField(fs []field, name string) string {
	for i := range fs {
		if equalFoldASCII(fs[i].name, name) {
			return fs[i].value
		}
	}
	return ""
}

// setField replaces the value of the header named name, or appends it.
func setField(fs []field, name, value string) []field {
	for i := range fs {
		if equalFoldASCII(fs[i].name, name) {
			fs[i].value = value
			return fs
		}
	}
	return append(fs, field{name, value})
}

// signer builds Shared Key strings-to-sign and signs them. It keeps its
// buffers and its HMAC between requests, so one signer serves one
// connection at a time.
type signer struct {
	account string
	mac     hash.Hash
	sts     []byte // the last string-to-sign
	sum     []byte // HMAC output
	sig     []byte // base64 signature
	xms     []int  // indices of x-ms-* headers, sorted
}

func newSigner(account string, key []byte) *signer {
	return &signer{account: account, mac: hmac.New(sha256.New, key),
		sts: make([]byte, 0, 512), sum: make([]byte, 0, sha256.Size),
		sig: make([]byte, 0, 64), xms: make([]int, 0, 8)}
}

// sign returns the base64 HMAC-SHA256 of the string-to-sign of a request;
// the slice is valid until the next call.
func (s *signer) sign(method, basePath, path, query string, hdr []field, table bool) []byte {
	sts := s.stringToSign(method, basePath, path, query, hdr, table)
	s.mac.Reset()
	s.mac.Write(sts)
	s.sum = s.mac.Sum(s.sum[:0])
	s.sig = base64.StdEncoding.AppendEncode(s.sig[:0], s.sum)
	return s.sig
}

// stringToSign returns the Shared Key string-to-sign of a request whose
// wire path is basePath+path (already escaped), whose raw query is query
// and whose headers are hdr: the Blob/Queue/File layout, or the Table
// layout when table is set. The slice is valid until the next call.
func (s *signer) stringToSign(method, basePath, path, query string, hdr []field, table bool) []byte {
	b := s.sts[:0]
	b = appendUpper(b, method)
	b = append(b, '\n')
	xmsDate := getField(hdr, "x-ms-date")
	if table {
		b = append(b, getField(hdr, "Content-Md5")...)
		b = append(b, '\n')
		b = append(b, getField(hdr, "Content-Type")...)
		b = append(b, '\n')
		if xmsDate != "" {
			b = append(b, xmsDate...)
		} else {
			b = append(b, getField(hdr, "Date")...)
		}
		b = append(b, '\n')
		b = s.appendResource(b, basePath, path, query, true)
		s.sts = b
		return b
	}
	length := getField(hdr, "Content-Length")
	if v := getField(hdr, "x-ms-version"); length == "0" && (v == "" || v >= "2015-02-21") {
		length = ""
	}
	date := ""
	if xmsDate == "" {
		date = getField(hdr, "Date")
	}
	for _, v := range [...]string{
		getField(hdr, "Content-Encoding"),
		getField(hdr, "Content-Language"),
		length,
		getField(hdr, "Content-Md5"),
		getField(hdr, "Content-Type"),
		date,
		getField(hdr, "If-Modified-Since"),
		getField(hdr, "If-Match"),
		getField(hdr, "If-None-Match"),
		getField(hdr, "If-Unmodified-Since"),
		getField(hdr, "Range"),
	} {
		b = append(b, v...)
		b = append(b, '\n')
	}
	// Canonicalized headers: every x-ms-* header, name lowercased, in
	// ordinal order of the lowercased names, value with whitespace folded.
	xms := s.xms[:0]
	for i := range hdr {
		if n := trimSpace(hdr[i].name); len(n) >= 5 && strings.EqualFold(n[:5], "x-ms-") {
			xms = append(xms, i)
		}
	}
	for i := 1; i < len(xms); i++ { // insertion sort: a handful of headers
		for j := i; j > 0 && compareLower(trimSpace(hdr[xms[j]].name), trimSpace(hdr[xms[j-1]].name)) < 0; j-- {
			xms[j], xms[j-1] = xms[j-1], xms[j]
		}
	}
	s.xms = xms
	for _, i := range xms {
		b = appendLower(b, trimSpace(hdr[i].name))
		b = append(b, ':')
		b = sharedkey.AppendFoldedValue(b, hdr[i].value)
		b = append(b, '\n')
	}
	b = s.appendResource(b, basePath, path, query, false)
	s.sts = b
	return b
}

// appendResource appends the canonicalized resource of a request whose
// wire path is basePath+path and whose raw query is query, in the Table
// (comp only) form when table is set.
func (s *signer) appendResource(b []byte, basePath, path, query string, table bool) []byte {
	start := len(b)
	out, ok := sharedkey.AppendCanonicalizedResource(b, s.account, basePath+path, query, table)
	if ok {
		return out
	}
	// A query the allocation-free builder leaves to the general one.
	u := &url.URL{Path: basePath + path, RawQuery: query}
	if p, err := url.PathUnescape(u.Path); err == nil {
		u.Path, u.RawPath = p, basePath+path
	}
	if table {
		return append(b[:start], sharedkey.CanonicalizedResourceLite(u, s.account)...)
	}
	return append(b[:start], sharedkey.CanonicalizedResource(u, s.account)...)
}

func appendUpper(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, lower(s[i]))
	}
	return b
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// compareLower compares the ASCII-lowercased forms of a and b ordinally.
func compareLower(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if x, y := lower(a[i]), lower(b[i]); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}

// equalFoldASCII reports whether the header names a and b are equal
// ignoring ASCII case.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] && lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// httpDate is the layout of x-ms-date (RFC 1123 with GMT).
const httpDate = "Mon, 02 Jan 2006 15:04:05 GMT"

type dateStamp struct {
	sec  int64
	text string
}

var lastDate atomic.Pointer[dateStamp]

// msDate returns the current time as an x-ms-date value, formatted at
// most once per second.
func msDate() string {
	now := time.Now()
	sec := now.Unix()
	if d := lastDate.Load(); d != nil && d.sec == sec {
		return d.text
	}
	d := &dateStamp{sec: sec, text: now.UTC().Format(httpDate)}
	lastDate.Store(d)
	return d.text
}
