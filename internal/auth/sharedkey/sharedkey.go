// Package sharedkey builds the strings-to-sign of Azure Storage Shared Key
// and Shared Key Lite authorization, for Blob, Queue and File and for the
// separate Table forms, and signs requests with an account key.
//
// The server side (Candidates, Verify) and the client side (Sign) share one
// canonicalization, so a request signed here verifies there byte for byte.
// The package is a leaf: it knows HTTP requests, not storage services.
package sharedkey

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Authorization schemes.
const (
	SchemeSharedKey     = "SharedKey"
	SchemeSharedKeyLite = "SharedKeyLite"
)

// Form selects one of the four string-to-sign layouts.
type Form struct {
	// Lite selects Shared Key Lite.
	Lite bool
	// Table selects the Table service layout (no canonicalized headers,
	// only comp in the canonicalized resource).
	Table bool
}

// Scheme returns the Authorization scheme of f.
func (f Form) Scheme() string {
	if f.Lite {
		return SchemeSharedKeyLite
	}
	return SchemeSharedKey
}

// ErrMalformed is returned by ParseAuthorization for a header that is not
// "<scheme> <account>:<signature>".
var ErrMalformed = errors.New("sharedkey: malformed Authorization header")

// ParseAuthorization splits an Authorization header value into scheme,
// account and signature. The scheme is returned as sent; callers decide
// which schemes they accept.
func ParseAuthorization(v string) (scheme, account, signature string, err error) {
	v = strings.TrimSpace(v)
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok || scheme == "" {
		return "", "", "", ErrMalformed
	}
	cred = strings.TrimSpace(cred)
	// The signature is base64 and never holds a colon; the account name
	// never does either, so the last colon separates them.
	i := strings.LastIndexByte(cred, ':')
	if i <= 0 || i == len(cred)-1 {
		return "", "", "", ErrMalformed
	}
	account, signature = cred[:i], cred[i+1:]
	if strings.ContainsAny(account, " \t") || strings.ContainsAny(signature, " \t") {
		return "", "", "", ErrMalformed
	}
	return scheme, account, signature, nil
}

// ComputeSignature returns base64(HMAC-SHA256(key, stringToSign)).
func ComputeSignature(key []byte, stringToSign string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// SignatureMatches reports whether signature (base64, as sent by a client)
// is the HMAC of stringToSign under key. It compares in constant time.
func SignatureMatches(key []byte, stringToSign, signature string) bool {
	got, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(stringToSign))
	return hmac.Equal(got, m.Sum(nil))
}

// Sign signs r for account with key: it sets x-ms-date when the request
// has neither x-ms-date nor Date, then sets the Authorization header
// (SharedKey; the Table layout when table is set). Call it after every
// other header is final.
func Sign(r *http.Request, account string, key []byte, table bool) error {
	return SignForm(r, account, key, Form{Table: table})
}

// SignForm is Sign with a choice of layout, Shared Key Lite included.
func SignForm(r *http.Request, account string, key []byte, f Form) error {
	if account == "" {
		return errors.New("sharedkey: empty account name")
	}
	if len(key) == 0 {
		return errors.New("sharedkey: empty key")
	}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	if r.Header.Get("X-Ms-Date") == "" && r.Header.Get("Date") == "" {
		r.Header.Set("X-Ms-Date", time.Now().UTC().Format(http.TimeFormat))
	}
	// On the wire Go writes Content-Length from r.ContentLength, not from
	// the header map, and sends "0" for an empty POST, PUT or PATCH; sign
	// what the server will see.
	switch {
	case r.ContentLength > 0:
		r.Header.Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
	case r.ContentLength == 0 && (r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch):
		r.Header.Set("Content-Length", "0")
	default:
		r.Header.Del("Content-Length")
	}
	sts := StringToSign(r, account, f)
	r.Header.Set("Authorization", f.Scheme()+" "+account+":"+ComputeSignature(key, sts))
	return nil
}

// StringToSign returns the canonical string-to-sign of r, as Azure
// documents it, for account in layout f.
func StringToSign(r *http.Request, account string, f Form) string {
	return string(AppendStringToSign(nil, r, account, f))
}

// variant toggles the spellings that real clients produce and that differ
// from the documented canonical form in corner cases only. The server tries
// them after the canonical form fails, so that every well-known client
// verifies.
type variant struct {
	// cultureOrder sorts x-ms-* header names the way the Azure service
	// and the azblob/azfile SDKs do (see CompareHeaderNames) instead of
	// ordinal order (which azqueue and most other clients use).
	cultureOrder bool
	// rawValues keeps header values unfolded (some clients sign them
	// verbatim).
	rawValues bool
	// stripAccount drops a leading "/<account>" path segment: a client that
	// signs a path-style URL as if it were host-style.
	stripAccount bool
	// keepDate keeps the Date header in the Date line even when x-ms-date
	// is present (the Blob/Queue/File layouts); for the Table layouts it
	// uses Date instead of x-ms-date.
	keepDate bool
	// flipZeroLength signs a zero Content-Length the other way than the
	// request's version asks ("0" versus the empty string).
	flipZeroLength bool
}

// Candidates returns the canonical string-to-sign of r first, followed by
// the distinct variants well-known clients produce for the same request.
// A server accepts the request when the signature matches any of them.
func Candidates(r *http.Request, account string, f Form) []string {
	var toggles []func(*variant)
	h := r.Header
	if !f.Table {
		hs := xmsHeaders(h)
		names := make([]string, len(hs))
		for i := range hs {
			names[i] = hs[i].name
		}
		if !sortedBy(names, CompareHeaderNames) || !sortedBy(names, strings.Compare) {
			toggles = append(toggles, func(v *variant) { v.cultureOrder = true })
		}
		for _, e := range hs {
			vals := e.vals
			if joinValues(vals, true) != joinValues(vals, false) {
				toggles = append(toggles, func(v *variant) { v.rawValues = true })
				break
			}
		}
	}
	p := r.URL.EscapedPath()
	if p == "/"+account || strings.HasPrefix(p, "/"+account+"/") {
		toggles = append(toggles, func(v *variant) { v.stripAccount = true })
	}
	if h.Get("X-Ms-Date") != "" && h.Get("Date") != "" {
		toggles = append(toggles, func(v *variant) { v.keepDate = true })
	}
	if !f.Lite && !f.Table && h.Get("Content-Length") == "0" {
		toggles = append(toggles, func(v *variant) { v.flipZeroLength = true })
	}
	seen := map[string]bool{}
	var out []string
	for mask := 0; mask < 1<<len(toggles); mask++ {
		var v variant
		for i, t := range toggles {
			if mask&(1<<i) != 0 {
				t(&v)
			}
		}
		s := string(appendStringToSign(nil, r, account, f, v))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// CanonicalizedHeaders returns the CanonicalizedHeaders element: every
// x-ms-* header, name lowercased, sorted by name, value trimmed with
// whitespace runs outside double quotes folded to one space, values of a
// repeated header joined with commas, each line ending in "\n".
func CanonicalizedHeaders(h http.Header) string {
	return canonicalizedHeaders(h, false, false)
}

func canonicalizedHeaders(h http.Header, cultureOrder, raw bool) string {
	hs := xmsHeaders(h)
	if cultureOrder {
		sort.SliceStable(hs, func(i, j int) bool { return CompareHeaderNames(hs[i].name, hs[j].name) < 0 })
	}
	var b strings.Builder
	for _, e := range hs {
		b.WriteString(e.name)
		b.WriteByte(':')
		b.WriteString(joinValues(e.vals, !raw))
		b.WriteByte('\n')
	}
	return b.String()
}

// xmsHeader is one x-ms-* header: its lowercased name and every value.
type xmsHeader struct {
	name string
	vals []string
}

// xmsHeaders returns the x-ms-* headers of h with lowercased names in
// ordinal order; keys of h that differ only in case are merged, their
// values in the ordinal order of the keys.
func xmsHeaders(h http.Header) []xmsHeader {
	type keyName struct{ key, name string }
	var buf [16]keyName
	ks := buf[:0]
	for k := range h {
		if t := strings.TrimSpace(k); len(t) >= 5 && strings.EqualFold(t[:5], "x-ms-") {
			ks = append(ks, keyName{k, strings.ToLower(t)})
		}
	}
	// By name, then by key: names come out sorted and the values of one
	// name in the order of their keys.
	slices.SortFunc(ks, func(a, b keyName) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	out := make([]xmsHeader, 0, len(ks))
	for _, e := range ks {
		if n := len(out); n > 0 && out[n-1].name == e.name {
			// Copy before appending: the first values are h's own slice.
			last := &out[n-1]
			last.vals = append(last.vals[:len(last.vals):len(last.vals)], h[e.key]...)
			continue
		}
		out = append(out, xmsHeader{e.name, h[e.key]})
	}
	return out
}

func joinValues(vals []string, fold bool) string {
	if !fold {
		return strings.Join(vals, ",")
	}
	if len(vals) == 1 && !needsFold(vals[0]) {
		return vals[0]
	}
	f := make([]string, len(vals))
	for i, v := range vals {
		f[i] = foldWhitespace(v)
	}
	return strings.Join(f, ",")
}

// needsFold reports whether foldWhitespace would change v: it has
// whitespace at either end, whitespace other than a space, or two spaces
// in a row.
func needsFold(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\t', '\r', '\n', '\v', '\f':
			return true
		case ' ':
			if i == 0 || i == len(v)-1 || v[i+1] == ' ' {
				return true
			}
		}
	}
	return len(v) > 0 && strings.TrimSpace(v) != v
}

// foldWhitespace trims v and folds each run of whitespace outside double
// quotes into one space.
func foldWhitespace(v string) string { return string(AppendFoldedValue(nil, v)) }

func sortedBy(names []string, cmp func(a, b string) int) bool {
	return sort.SliceIsSorted(names, func(i, j int) bool { return cmp(names[i], names[j]) < 0 })
}

// CompareHeaderNames orders header names the way the Azure service sorts
// CanonicalizedHeaders (and the azblob and azfile SDKs with it): a
// culture-aware comparison. At the first level hyphens and apostrophes are
// ignored, punctuation sorts before digits and digits before letters, and
// letters compare case-insensitively. Names equal at that level are ordered
// by their hyphens and apostrophes: at the first position where the two
// differ in kind, a letter (or other character) comes first, then the end
// of the name, then an apostrophe, then a hyphen. Names equal under both
// rules fall back to ordinal order. For the usual x-ms-* names the result
// is ordinal order; it differs for names that differ in hyphens or mix '_'
// with digits.
func CompareHeaderNames(a, b string) int {
	i, j := 0, 0
	for {
		for i < len(a) && primaryWeight(a[i]) == 0 {
			i++
		}
		for j < len(b) && primaryWeight(b[j]) == 0 {
			j++
		}
		if i == len(a) || j == len(b) {
			break
		}
		wa, wb := primaryWeight(a[i]), primaryWeight(b[j])
		if wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	for k := 0; k < len(a) || k < len(b); k++ {
		if wa, wb := secondaryWeight(a, k), secondaryWeight(b, k); wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}

// secondaryWeight is the weight of position k of s at the second level of
// CompareHeaderNames.
func secondaryWeight(s string, k int) int {
	switch {
	case k >= len(s):
		return 1
	case s[k] == '\'':
		return 2
	case s[k] == '-':
		return 3
	}
	return 0
}

// punctuationOrder lists the punctuation that counts at the first level of
// CompareHeaderNames, lowest first.
const punctuationOrder = "!#$%&*.^_`|~+"

// primaryWeight is the first-level weight of c; 0 means ignored.
func primaryWeight(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return 1000 + int(c-'a')
	case c >= 'A' && c <= 'Z':
		return 1000 + int(c-'A')
	case c >= '0' && c <= '9':
		return 900 + int(c-'0')
	case c >= 0x80:
		return 2000 + int(c)
	}
	if k := strings.IndexByte(punctuationOrder, c); k >= 0 {
		return 100 + k
	}
	return 0
}

// CanonicalizedResource returns the Shared Key CanonicalizedResource of u:
// "/" + account + the path as encoded on the wire, then each query
// parameter as "\nname:value" with names lowercased and sorted and values
// decoded, sorted and comma-joined.
func CanonicalizedResource(u *url.URL, account string) string {
	return canonicalizedResource(u, account, Form{}, false)
}

// CanonicalizedResourceLite returns the CanonicalizedResource of Shared Key
// Lite and of both Table layouts: "/" + account + the encoded path, plus
// "?comp=<value>" when a comp parameter is present.
func CanonicalizedResourceLite(u *url.URL, account string) string {
	return canonicalizedResource(u, account, Form{Lite: true}, false)
}

func canonicalizedResource(u *url.URL, account string, f Form, stripAccount bool) string {
	p := u.EscapedPath()
	if stripAccount {
		if p == "/"+account {
			p = ""
		} else if strings.HasPrefix(p, "/"+account+"/") {
			p = p[len(account)+1:]
		}
	}
	if p == "" {
		p = "/"
	}
	var b strings.Builder
	b.WriteByte('/')
	b.WriteString(account)
	b.WriteString(p)
	if u.RawQuery == "" {
		return b.String()
	}
	q := parseQuery(u.RawQuery)
	if f.Lite || f.Table {
		if vals, ok := q["comp"]; ok && len(vals) > 0 {
			b.WriteString("?comp=")
			b.WriteString(vals[0])
		}
		return b.String()
	}
	names := make([]string, 0, len(q))
	for n := range q {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		vals := append([]string(nil), q[n]...)
		sort.Strings(vals)
		b.WriteByte('\n')
		b.WriteString(n)
		b.WriteByte(':')
		b.WriteString(strings.Join(vals, ","))
	}
	return b.String()
}

// parseQuery decodes a raw query with names lowercased, keeping values of
// names that differ only in case together. Pairs that do not decode are
// skipped, as url.ParseQuery does.
func parseQuery(raw string) map[string][]string {
	vals, _ := url.ParseQuery(raw)
	out := make(map[string][]string, len(vals))
	for k, vs := range vals {
		n := strings.ToLower(k)
		out[n] = append(out[n], vs...)
	}
	return out
}

// AppendStringToSign appends the canonical string-to-sign of r (the one
// StringToSign returns) to dst. It is the server's hot path, so it
// allocates nothing for the usual request.
func AppendStringToSign(dst []byte, r *http.Request, account string, f Form) []byte {
	return appendStringToSign(dst, r, account, f, variant{})
}

// appendStringToSign appends the string-to-sign of r in layout f, spelled
// as v asks (the zero variant is the documented form). It is the one
// builder of the layouts. The x-ms-* headers and the resource of the
// documented form are built without allocating (appendXMSHeaders,
// appendResource); what those do not handle (many query parameters or
// x-ms-* headers, names outside ASCII, a comp parameter spelled twice)
// and the variants take the general canonicalizers.
func appendStringToSign(dst []byte, r *http.Request, account string, f Form, v variant) []byte {
	h := r.Header
	method := r.Method
	for i := 0; i < len(method); i++ {
		if c := method[i]; c >= 'a' && c <= 'z' || c >= 0x80 {
			method = strings.ToUpper(method)
			break
		}
	}
	if f.Table {
		// The Date line is x-ms-date when present, else Date.
		date := first(h, "X-Ms-Date")
		if date == "" || v.keepDate {
			date = first(h, "Date")
		}
		if !f.Lite {
			dst = append(dst, method...)
			dst = append(dst, '\n')
			dst = append(dst, first(h, "Content-Md5")...)
			dst = append(dst, '\n')
			dst = append(dst, first(h, "Content-Type")...)
			dst = append(dst, '\n')
		}
		dst = append(dst, date...)
		dst = append(dst, '\n')
		return appendResourceOf(dst, r, account, f, v)
	}
	date := first(h, "Date")
	if first(h, "X-Ms-Date") != "" && !v.keepDate {
		date = ""
	}
	dst = append(dst, method...)
	dst = append(dst, '\n')
	if !f.Lite {
		dst = append(dst, first(h, "Content-Encoding")...)
		dst = append(dst, '\n')
		dst = append(dst, first(h, "Content-Language")...)
		dst = append(dst, '\n')
		length := first(h, "Content-Length")
		ver := first(h, "X-Ms-Version")
		zeroIsEmpty := ver == "" || ver >= "2015-02-21"
		if v.flipZeroLength {
			zeroIsEmpty = !zeroIsEmpty
		}
		if length == "0" && zeroIsEmpty {
			length = ""
		}
		dst = append(dst, length...)
		dst = append(dst, '\n')
	}
	dst = append(dst, first(h, "Content-Md5")...)
	dst = append(dst, '\n')
	dst = append(dst, first(h, "Content-Type")...)
	dst = append(dst, '\n')
	dst = append(dst, date...)
	dst = append(dst, '\n')
	if !f.Lite {
		for _, k := range [...]string{"If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"} {
			dst = append(dst, first(h, k)...)
			dst = append(dst, '\n')
		}
	}
	mark := len(dst)
	ok := false
	if !v.cultureOrder && !v.rawValues {
		dst, ok = appendXMSHeaders(dst, h)
	}
	if !ok {
		dst = append(dst[:mark], canonicalizedHeaders(h, v.cultureOrder, v.rawValues)...)
	}
	return appendResourceOf(dst, r, account, f, v)
}

// appendResourceOf appends the CanonicalizedResource of r for layout f and
// variant v.
func appendResourceOf(dst []byte, r *http.Request, account string, f Form, v variant) []byte {
	if !v.stripAccount {
		if out, ok := appendResource(dst, r.URL, account, f.Lite || f.Table); ok {
			return out
		}
	}
	return append(dst, canonicalizedResource(r.URL, account, f, v.stripAccount)...)
}

// first is h.Get for a key already in canonical form.
func first(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// maxFast bounds the x-ms-* headers and query parameters
// AppendStringToSign sorts on the stack.
const maxFast = 16

// appendXMSHeaders appends the CanonicalizedHeaders of h (ordinal order,
// folded values); ok is false when h needs the general route.
func appendXMSHeaders(dst []byte, h http.Header) ([]byte, bool) {
	var buf [maxFast]string
	ks := buf[:0]
	for k := range h {
		if len(k) < 5 || !strings.EqualFold(k[:5], "x-ms-") {
			if t := strings.TrimSpace(k); t != k && len(t) >= 5 && strings.EqualFold(t[:5], "x-ms-") {
				return dst, false
			}
			continue
		}
		if len(ks) == maxFast || !plainName(k) {
			return dst, false
		}
		ks = append(ks, k)
	}
	// Sorting by lowercased name, then by key, groups the keys of one name
	// with their values in key order.
	slices.SortFunc(ks, func(a, b string) int {
		if c := compareLower(a, b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for i, k := range ks {
		same := i > 0 && compareLower(ks[i-1], k) == 0
		if same {
			dst = append(dst, ',')
		} else {
			if i > 0 {
				dst = append(dst, '\n')
			}
			dst = appendLower(dst, k)
			dst = append(dst, ':')
		}
		for j, v := range h[k] {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = AppendFoldedValue(dst, v)
		}
	}
	if len(ks) > 0 {
		dst = append(dst, '\n')
	}
	return dst, true
}

// plainName reports whether s is printable ASCII without spaces, so that
// lowercasing it byte by byte is what strings.ToLower does.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// compareLower compares ASCII strings as if both were lowercased.
func compareLower(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if x, y := lower(a[i]), lower(b[i]); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, lower(s[i]))
	}
	return dst
}

// AppendFoldedValue appends v as Shared Key canonicalizes an x-ms-* header
// value: trimmed, every run of whitespace outside double quotes folded
// into one space.
func AppendFoldedValue(dst []byte, v string) []byte {
	if !needsFold(v) {
		return append(dst, v...)
	}
	v = strings.TrimSpace(v)
	inQuote, pendingSpace := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !inQuote && (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			pendingSpace = true
			continue
		}
		if pendingSpace {
			dst = append(dst, ' ')
			pendingSpace = false
		}
		if c == '"' {
			inQuote = !inQuote
		}
		dst = append(dst, c)
	}
	return dst
}

// queryParam is one decoded query parameter, its name lowercased.
type queryParam struct{ name, value string }

// appendResource appends the CanonicalizedResource of u (see
// AppendCanonicalizedResource).
func appendResource(dst []byte, u *url.URL, account string, compOnly bool) ([]byte, bool) {
	return AppendCanonicalizedResource(dst, account, u.EscapedPath(), u.RawQuery, compOnly)
}

// AppendCanonicalizedResource appends the CanonicalizedResource of a
// request whose path is escapedPath (as on the wire) and whose query is
// rawQuery: the full form, or with compOnly the form of Shared Key Lite and
// the Table layouts. ok is false for a query it does not handle without
// allocating (more than 16 parameters, names outside printable ASCII, comp
// given twice with compOnly); CanonicalizedResource covers those.
func AppendCanonicalizedResource(dst []byte, account, escapedPath, rawQuery string, compOnly bool) (out []byte, ok bool) {
	if escapedPath == "" {
		escapedPath = "/"
	}
	dst = append(dst, '/')
	dst = append(dst, account...)
	dst = append(dst, escapedPath...)
	if rawQuery == "" {
		return dst, true
	}
	var buf [maxFast]queryParam
	ps := buf[:0]
	for q := rawQuery; q != ""; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			continue
		}
		if v, err = url.QueryUnescape(v); err != nil {
			continue
		}
		if !plainName(k) || len(ps) == maxFast {
			return dst, false
		}
		if strings.ContainsFunc(k, func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
			k = strings.ToLower(k)
		}
		ps = append(ps, queryParam{k, v})
	}
	if compOnly {
		comp := -1
		for i, qp := range ps {
			if qp.name == "comp" {
				if comp >= 0 {
					return dst, false
				}
				comp = i
			}
		}
		if comp >= 0 {
			dst = append(dst, "?comp="...)
			dst = append(dst, ps[comp].value...)
		}
		return dst, true
	}
	slices.SortFunc(ps, func(a, b queryParam) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.value, b.value)
	})
	for i, qp := range ps {
		if i > 0 && ps[i-1].name == qp.name {
			dst = append(dst, ',')
		} else {
			dst = append(dst, '\n')
			dst = append(dst, qp.name...)
			dst = append(dst, ':')
		}
		dst = append(dst, qp.value...)
	}
	return dst, true
}
