package blob

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/keyenc"
	"github.com/lazuli-storage/lazuli/storage"
)

func validTagChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		strings.ContainsRune(" +-./:=_", r)
}

// ValidateTags checks blob tags: at most 10, keys 1..128 and values 0..256
// characters from the allowed set, keys unique.
func ValidateTags(tags []KV) error {
	if len(tags) > MaxTags {
		return azerr.Newf(azerr.InvalidTag, "The tags specified exceed the maximum permissible limit.")
	}
	seen := map[string]bool{}
	for _, kv := range tags {
		if len(kv[0]) < 1 || len(kv[0]) > 128 || len(kv[1]) > 256 || seen[kv[0]] {
			return azerr.New(azerr.InvalidTag)
		}
		seen[kv[0]] = true
		for _, r := range kv[0] + kv[1] {
			if !validTagChar(r) {
				return azerr.New(azerr.InvalidTag)
			}
		}
	}
	return nil
}

// GetTags is Get Blob Tags.
func (s *Service) GetTags(ctx context.Context, ref Ref, cond Cond) ([]KV, error) {
	var out []KV
	err := s.eng.View(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if err := checkPath(ctx, tx, ref, OpRead); err != nil {
			return err
		}
		b, _, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true, read: true}, s.now())
		if err != nil {
			return err
		}
		out = b.Tags
		return nil
	})
	return out, err
}

// SetTags is Set Blob Tags: it replaces the tags and, as on Azure, changes
// neither ETag nor Last-Modified.
func (s *Service) SetTags(ctx context.Context, ref Ref, tags []KV, cond Cond) error {
	if err := ValidateTags(tags); err != nil {
		return err
	}
	return s.eng.Update(ctx, func(tx storage.Tx) error {
		if err := s.keyed(tx, &ref); err != nil {
			return err
		}
		if err := checkPath(ctx, tx, ref, OpWrite); err != nil {
			return err
		}
		// A write for the lease rules: a leased blob needs its lease id.
		b, ls, err := s.loadChecked(tx, ref, cond, checkOpts{mustExist: true}, s.now())
		if err != nil {
			return err
		}
		b.Lease = ls
		b.Tags = tags
		return putBlob(tx, ref.Account, ref.Container, b)
	})
}

// FoundBlob is one result of Find Blobs by Tags.
type FoundBlob struct {
	Container, Name string
	Tags            []KV // the tags named in the expression
}

// FindBlobs is Find Blobs by Tags over the account (or one container when
// container is set). marker is the "container\x00name" of the next result.
func (s *Service) FindBlobs(ctx context.Context, acct, container, expr, marker string, max int) ([]FoundBlob, string, error) {
	q, err := parseTags(expr, true)
	if err != nil {
		return nil, "", azerr.Newf(azerr.InvalidQueryParameterValue, "%s", err.Error()).
			WithDetail("QueryParameterName", "where").WithDetail("QueryParameterValue", expr)
	}
	var out []FoundBlob
	next := ""
	if tag, value, ok := q.equality(); ok {
		err = s.eng.View(ctx, func(tx storage.Tx) error {
			var err error
			out, next, err = findIndexed(tx, s.HierarchicalNamespace(acct), acct, container, tag, value, marker, max, q)
			return err
		})
		return out, next, err
	}
	hns := s.HierarchicalNamespace(acct)
	err = s.eng.View(ctx, func(tx storage.Tx) error {
		lo := keyenc.AppendString([]byte{kindBlob}, acct)
		// On a namespace account a key's container segment is the home
		// of its parent directory: every segment may hold the container's
		// paths.
		if container != "" && !hns {
			lo = blobsPrefix(acct, container)
		}
		hi := keyenc.PrefixEnd(lo)
		if marker != "" {
			c, n, _ := strings.Cut(marker, "\x00")
			if m := blobKey(acct, c, pathKey(n), ""); string(m) > string(lo) {
				lo = m
			}
		}
		it := tx.Scan(lo, hi, false)
		defer it.Close()
		for it.Next() {
			rest := it.Key()[len(keyenc.AppendString([]byte{kindBlob}, acct)):]
			cname, rest, err := keyenc.ReadString(rest)
			if err != nil {
				return err
			}
			k, rest, err := keyenc.ReadString(rest)
			if err != nil {
				return err
			}
			if snap, _, _ := keyenc.ReadString(rest); snap != "" {
				continue
			}
			b, err := decodeBlob(it.Value())
			if err != nil {
				return err
			}
			if len(b.Tags) == 0 {
				continue
			}
			seg := cname
			if cname, b.Name, err = keyName(tx, hns, acct, seg, pathKey(k)); err != nil {
				return err
			}
			if container != "" && cname != container || !q.eval(b.Tags, cname) {
				continue
			}
			if len(out) == max {
				// Markers carry segments and key names: a flat account's
				// are its containers and full names.
				next = seg + "\x00" + k
				break
			}
			var named []KV
			for _, kv := range b.Tags {
				if q.names()[kv[0]] {
					named = append(named, kv)
				}
			}
			out = append(out, FoundBlob{Container: cname, Name: b.Name, Tags: named})
		}
		return it.Err()
	})
	return out, next, err
}

// findIndexed answers Find Blobs by Tags from the tag index entries of
// tag = value, checking the whole expression on each candidate; results
// come in (container, name) order like a full scan.
func findIndexed(tx storage.Tx, hns bool, acct, container, tag, value, marker string, max int, q *tagExpr) ([]FoundBlob, string, error) {
	var out []FoundBlob
	p := tagIndexPrefix(acct, tag, value)
	lo := p
	if container != "" && !hns {
		lo = keyenc.AppendString(append([]byte(nil), p...), container)
	}
	hi := keyenc.PrefixEnd(lo)
	if marker != "" {
		c, n, _ := strings.Cut(marker, "\x00")
		if m := keyenc.AppendString(keyenc.AppendString(append([]byte(nil), p...), c), n); string(m) > string(lo) {
			lo = m
		}
	}
	it := tx.Scan(lo, hi, false)
	defer it.Close()
	names := q.names()
	for it.Next() {
		seg, rest, err := keyenc.ReadString(it.Key()[len(p):])
		if err != nil {
			return nil, "", err
		}
		bname, _, err := keyenc.ReadString(rest)
		if err != nil {
			return nil, "", err
		}
		cname, name, err := keyName(tx, hns, acct, seg, pathKey(bname))
		if err != nil {
			return nil, "", err
		}
		if container != "" && cname != container {
			continue
		}
		b, err := getBlob(tx, acct, cname, pathKey(bname), name, "")
		if err != nil {
			return nil, "", err
		}
		if b == nil || !q.eval(b.Tags, cname) {
			continue
		}
		if len(out) == max {
			return out, seg + "\x00" + bname, it.Err()
		}
		var named []KV
		for _, kv := range b.Tags {
			if names[kv[0]] {
				named = append(named, kv)
			}
		}
		out = append(out, FoundBlob{Container: cname, Name: name, Tags: named})
	}
	return out, "", it.Err()
}

// equality finds a term tag = 'value' that the whole expression requires
// (reached through ANDs only), usable to look candidates up in the index.
func (e *tagExpr) equality() (tag, value string, ok bool) {
	switch e.op {
	case "AND":
		if t, v, ok := e.left.equality(); ok {
			return t, v, true
		}
		return e.right.equality()
	case "=":
		if e.name != "@container" {
			return e.name, e.value, true
		}
	}
	return "", "", false
}

// MatchTags evaluates an x-ms-if-tags expression against tags. A malformed
// expression is 400 InvalidHeaderValue.
func MatchTags(expr string, tags []KV, container string) (bool, error) {
	q, err := parseTagExpr(expr)
	if err != nil {
		return false, azerr.InvalidValue(InputTagCondition, expr)
	}
	return q.eval(tags, container), nil
}

// tagExpr is a parsed tag predicate.
type tagExpr struct {
	op          string // "AND", "OR" or a comparison
	left, right *tagExpr
	name, value string
}

func (e *tagExpr) eval(tags []KV, container string) bool {
	switch e.op {
	case "AND":
		return e.left.eval(tags, container) && e.right.eval(tags, container)
	case "OR":
		return e.left.eval(tags, container) || e.right.eval(tags, container)
	}
	var v string
	var ok bool
	if e.name == "@container" {
		v, ok = container, container != ""
	} else {
		for _, kv := range tags {
			if kv[0] == e.name {
				v, ok = kv[1], true
			}
		}
	}
	if !ok {
		// A tag the blob does not have compares false whatever the
		// operator, <> included (SQL's reading of a missing value).
		return false
	}
	c := strings.Compare(v, e.value)
	switch e.op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	}
	return false
}

func (e *tagExpr) names() map[string]bool {
	m := map[string]bool{}
	var walk func(*tagExpr)
	walk = func(x *tagExpr) {
		if x == nil {
			return
		}
		if x.name != "" {
			m[x.name] = true
		}
		walk(x.left)
		walk(x.right)
	}
	walk(e)
	return m
}

// tagToken is one token of a tag expression and its 1-based position.
type tagToken struct {
	text string
	pos  int
}

type tagParser struct {
	toks []tagToken
	pos  int
	// find is set for Find Blobs by Tags, which knows neither OR nor <>
	// (x-ms-if-tags allows both).
	find  bool
	names map[string]bool
	end   int // position just past the expression, for errors at its end
}

// tagSyntaxError is a tag expression Azure refuses; Error gives the
// message Azure's Find Blobs by Tags answers with.
type tagSyntaxError struct {
	pos int // 0: not tied to a position
	msg string
}

func (e *tagSyntaxError) Error() string {
	if e.pos == 0 {
		return "Error parsing query: " + e.msg
	}
	return "Error parsing query at or near character position " + strconv.Itoa(e.pos) + ": " + e.msg
}

// maxTagsInQuery is how many distinct tags an expression may name.
const maxTagsInQuery = 10

func tokenizeTags(s string) ([]tagToken, error) {
	var toks []tagToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')':
			toks = append(toks, tagToken{string(c), i + 1})
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, &tagSyntaxError{i + 1, "unterminated string"}
			}
			toks = append(toks, tagToken{s[i : i+j+2], i + 1})
			i += j + 2
		case c == '=':
			toks = append(toks, tagToken{"=", i + 1})
			i++
		case c == '<' || c == '>':
			if i+1 < len(s) && (s[i+1] == '=' || (c == '<' && s[i+1] == '>')) {
				toks = append(toks, tagToken{s[i : i+2], i + 1})
				i += 2
			} else {
				toks = append(toks, tagToken{string(c), i + 1})
				i++
			}
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t()'\"=<>", rune(s[j])) {
				j++
			}
			toks = append(toks, tagToken{s[i:j], i + 1})
			i = j
		}
	}
	return toks, nil
}

// parseTagExpr parses an x-ms-if-tags expression.
func parseTagExpr(s string) (*tagExpr, error) { return parseTags(s, false) }

// parseTags parses a tag expression: comparisons of a tag (a bare or
// double-quoted name, 1 to 128 characters) with a single-quoted value (0
// to 256 characters), both from the tag character set, joined by AND (and
// OR) with parentheses, naming at most 10 distinct tags.
func parseTags(s string, find bool) (*tagExpr, error) {
	toks, err := tokenizeTags(s)
	if err != nil {
		return nil, err
	}
	p := &tagParser{toks: toks, find: find, names: map[string]bool{}, end: len(s) + 1}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, p.fail("unexpected " + p.toks[p.pos].text)
	}
	if len(p.names) > maxTagsInQuery {
		return nil, &tagSyntaxError{0, "there can be at most 10 unique tags in a query"}
	}
	return e, nil
}

func (p *tagParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].text
	}
	return ""
}

// fail is a syntax error at the current token.
func (p *tagParser) fail(msg string) error {
	pos := p.end
	if p.pos < len(p.toks) {
		pos = p.toks[p.pos].pos
	}
	return &tagSyntaxError{pos, msg}
}

func (p *tagParser) or() (*tagExpr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for strings.EqualFold(p.peek(), "OR") {
		if p.find {
			return nil, p.fail("unsupported operator OR")
		}
		p.pos++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &tagExpr{op: "OR", left: l, right: r}
	}
	return l, nil
}

func (p *tagParser) and() (*tagExpr, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	for strings.EqualFold(p.peek(), "AND") {
		p.pos++
		r, err := p.primary()
		if err != nil {
			return nil, err
		}
		l = &tagExpr{op: "AND", left: l, right: r}
	}
	return l, nil
}

// bareTagName reports whether name may stand without double quotes in a
// tag expression: ASCII letters, digits and underscores only.
func bareTagName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return name != ""
}

// validTagText reports whether every character of s is a tag character.
func validTagText(s string) bool {
	for _, r := range s {
		if !validTagChar(r) {
			return false
		}
	}
	return true
}

func (p *tagParser) primary() (*tagExpr, error) {
	t := p.peek()
	if t == "(" {
		p.pos++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, p.fail("expected )")
		}
		p.pos++
		return e, nil
	}
	if t == "" || t == ")" || t[0] == '\'' {
		return nil, p.fail("expected a tag name")
	}
	name := t
	quoted := name[0] == '"'
	if quoted {
		name = name[1 : len(name)-1]
	}
	switch {
	case name == "@container" && !quoted:
		// Find Blobs by Tags may scope itself to a container;
		// x-ms-if-tags may not.
		if !p.find {
			return nil, p.fail("unexpected @container")
		}
	case !quoted && !bareTagName(name):
		// A bare name is letters, digits and underscores; any other tag
		// character ("+", "-" and so on) needs the double quotes.
		return nil, p.fail("unexpected '" + name + "'")
	// The length limits bind queries only: x-ms-if-tags takes any
	// length, and a name no tag can have simply matches nothing.
	case len(name) < 1 || p.find && len(name) > 128:
		return nil, p.fail("tag must be between 1 and 128 characters in length")
	case !validTagText(name):
		return nil, p.fail("character not permitted in tag name or value")
	}
	p.pos++
	op := p.peek()
	switch op {
	case "=", ">", ">=", "<", "<=":
	case "<>":
		if p.find {
			return nil, p.fail("unsupported operator <>")
		}
	default:
		return nil, p.fail("expected an operator")
	}
	p.pos++
	v := p.peek()
	if len(v) < 2 || v[0] != '\'' {
		return nil, p.fail("expected a single-quoted value")
	}
	value := v[1 : len(v)-1]
	switch {
	case p.find && len(value) > 256:
		return nil, p.fail("tag value must be between 0 and 256 characters in length")
	case !validTagText(value):
		return nil, p.fail("character not permitted in tag name or value")
	}
	p.pos++
	if name != "@container" {
		p.names[name] = true
	}
	return &tagExpr{op: op, name: name, value: value}, nil
}

// SortTags orders tags by key (the order Get Blob Tags returns).
func SortTags(tags []KV) []KV {
	out := append([]KV(nil), tags...)
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
