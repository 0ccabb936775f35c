package odata

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxComparisons is Azure's limit of discrete comparisons in one $filter.
const MaxComparisons = 15

// maxDepth bounds parenthesis and "not" nesting so hostile input cannot
// exhaust the stack.
const maxDepth = 100

// ErrSyntax wraps every parse failure.
var ErrSyntax = errors.New("odata: invalid $filter")

// Op is a comparison operator.
type Op uint8

// Comparison operators.
const (
	Eq Op = iota + 1
	Ne
	Gt
	Ge
	Lt
	Le
)

var opNames = map[string]Op{"eq": Eq, "ne": Ne, "gt": Gt, "ge": Ge, "lt": Lt, "le": Le}

// String returns the operator keyword.
func (o Op) String() string {
	for k, v := range opNames {
		if v == o {
			return k
		}
	}
	return "?"
}

// flip returns the operator with its operands swapped (5 lt x == x gt 5).
func (o Op) flip() Op {
	switch o {
	case Gt:
		return Lt
	case Ge:
		return Le
	case Lt:
		return Gt
	case Le:
		return Ge
	}
	return o
}

// Kind is the kind of an expression node.
type Kind uint8

// Node kinds.
const (
	KindCompare Kind = iota + 1
	KindAnd
	KindOr
	KindNot
	KindConst // a bare true/false literal
)

// Expr is a parsed $filter expression.
type Expr struct {
	Kind Kind
	// KindCompare: Property Op Value (literal normalized to the right).
	Property string
	Op       Op
	Value    Value
	// KindAnd, KindOr: L and R; KindNot: L.
	L, R *Expr
	// KindConst.
	Const bool
}

// Entity is what the evaluator reads properties from.
type Entity interface {
	// Lookup returns the property named name.
	Lookup(name string) (Value, bool)
}

// Match reports whether the entity satisfies e. A nil expression matches
// everything.
func (e *Expr) Match(ent Entity) bool {
	if e == nil {
		return true
	}
	switch e.Kind {
	case KindAnd:
		return e.L.Match(ent) && e.R.Match(ent)
	case KindOr:
		return e.L.Match(ent) || e.R.Match(ent)
	case KindNot:
		return !e.L.Match(ent)
	case KindConst:
		return e.Const
	case KindCompare:
		v, ok := ent.Lookup(e.Property)
		if !ok {
			// A missing property makes every comparison false, ne too.
			return false
		}
		c, ok := compareProperty(v, e.Value)
		if !ok {
			return false
		}
		switch e.Op {
		case Eq:
			return c == 0
		case Ne:
			return c != 0
		case Gt:
			return c > 0
		case Ge:
			return c >= 0
		case Lt:
			return c < 0
		case Le:
			return c <= 0
		}
	}
	return false
}

// Conjuncts returns the comparisons that must all hold for e to match (the
// comparison leaves of its top-level "and" chain). Callers use them to
// narrow a scan; they still evaluate the whole expression.
func (e *Expr) Conjuncts() []*Expr {
	if e == nil {
		return nil
	}
	switch e.Kind {
	case KindCompare:
		return []*Expr{e}
	case KindAnd:
		return append(e.L.Conjuncts(), e.R.Conjuncts()...)
	}
	return nil
}

// Parse parses a $filter expression. An empty or all-blank string yields a
// nil expression (match all).
func Parse(s string) (*Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, nil
	}
	p := &parser{toks: toks}
	e, err := p.parseOr(0)
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, p.errf("unexpected %q", p.toks[p.pos].text)
	}
	if p.comparisons > MaxComparisons {
		return nil, fmt.Errorf("%w: more than %d comparisons", ErrSyntax, MaxComparisons)
	}
	return e, nil
}

type tokKind uint8

const (
	tIdent tokKind = iota + 1
	tLiteral
	tLParen
	tRParen
)

type token struct {
	kind tokKind
	text string // identifier text, or the literal as written
	val  Value  // for tLiteral
}

func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '(':
			toks = append(toks, token{kind: tLParen, text: "("})
			i++
		case c == ')':
			toks = append(toks, token{kind: tRParen, text: ")"})
			i++
		case c == '\'':
			str, n, err := lexQuoted(s[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tLiteral, text: s[i : i+n], val: Value{Type: String, Str: str}})
			i += n
		case c == '-' || c == '.' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || s[j] == 'L' || s[j] == 'l' ||
				s[j] == 'd' || s[j] == 'D' || s[j] == 'f' || s[j] == 'F' || s[j] == 'm' || s[j] == 'M' ||
				((s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E'))) {
				j++
			}
			v, err := parseNumber(s[i:j])
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tLiteral, text: s[i:j], val: v})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			word := s[i:j]
			if j < len(s) && s[j] == '\'' {
				// Typed literal: datetime'..', guid'..', X'..', binary'..'.
				str, n, err := lexQuoted(s[j:])
				if err != nil {
					return nil, err
				}
				v, err := typedLiteral(word, str)
				if err != nil {
					return nil, err
				}
				toks = append(toks, token{kind: tLiteral, text: s[i : j+n], val: v})
				i = j + n
				continue
			}
			// Azure reads true and false in any capitalization.
			switch lw := strings.ToLower(word); lw {
			case "true", "false":
				toks = append(toks, token{kind: tLiteral, text: lw, val: Value{Type: Boolean, Bool: lw == "true"}})
			default:
				toks = append(toks, token{kind: tIdent, text: word})
			}
			i = j
		default:
			return nil, fmt.Errorf("%w: unexpected character %q at %d", ErrSyntax, c, i)
		}
	}
	return toks, nil
}

// lexQuoted reads a single-quoted string at the start of s (” escapes a
// quote) and returns its value and the number of bytes consumed.
func lexQuoted(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), i + 1, nil
		}
		b.WriteByte(s[i])
	}
	return "", 0, fmt.Errorf("%w: unterminated string literal", ErrSyntax)
}

func typedLiteral(prefix, body string) (Value, error) {
	switch strings.ToLower(prefix) {
	case "datetime":
		t, err := ParseDateTime(body)
		if err != nil {
			return Value{}, fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		return Value{Type: DateTime, Int: t}, nil
	case "guid":
		if !ValidGuid(body) {
			return Value{}, fmt.Errorf("%w: invalid guid literal %q", ErrSyntax, body)
		}
		return Value{Type: Guid, Str: body}, nil
	case "x", "binary":
		b, err := hex.DecodeString(body)
		if err != nil {
			return Value{}, fmt.Errorf("%w: invalid binary literal %q", ErrSyntax, body)
		}
		if b == nil {
			b = []byte{}
		}
		return Value{Type: Binary, Bytes: b}, nil
	}
	return Value{}, fmt.Errorf("%w: unknown literal prefix %q", ErrSyntax, prefix)
}

func parseNumber(s string) (Value, error) {
	bad := fmt.Errorf("%w: invalid number %q", ErrSyntax, s)
	if n := len(s); n > 1 && (s[n-1] == 'L' || s[n-1] == 'l') {
		v, err := strconv.ParseInt(s[:n-1], 10, 64)
		if err != nil {
			return Value{}, bad
		}
		return Value{Type: Int64, Int: v}, nil
	}
	if n := len(s); n > 1 && strings.ContainsRune("dDfFmM", rune(s[n-1])) {
		s = s[:n-1]
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || !isNumeric(s) {
			return Value{}, bad
		}
		return Value{Type: Double, Float: f}, nil
	}
	if !isNumeric(s) {
		return Value{}, bad
	}
	if !strings.ContainsAny(s, ".eE") {
		v, err := strconv.ParseInt(s, 10, 32)
		if err == nil {
			return Value{Type: Int32, Int: v}, nil
		}
		// Too large for Int32: Azure reads it as Int64.
		v, err = strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Value{}, bad
		}
		return Value{Type: Int64, Int: v}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return Value{}, bad
	}
	return Value{Type: Double, Float: f}, nil
}

// isNumeric rejects forms strconv would accept but OData does not (hex,
// underscores, "Inf").
func isNumeric(s string) bool {
	if s == "" || s == "-" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }

type parser struct {
	toks        []token
	pos         int
	comparisons int
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSyntax, fmt.Sprintf(format, args...))
}

func (p *parser) peekWord(w string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == tIdent && p.toks[p.pos].text == w
}

func (p *parser) parseOr(depth int) (*Expr, error) {
	return p.parseChain(depth, "or", KindOr, p.parseAnd)
}

func (p *parser) parseAnd(depth int) (*Expr, error) {
	return p.parseChain(depth, "and", KindAnd, p.parseUnary)
}

// parseChain reads operands (next) joined by the operator word, left to
// right, into a tree of kind: or and and differ only in these.
func (p *parser) parseChain(depth int, word string, kind Kind, next func(int) (*Expr, error)) (*Expr, error) {
	l, err := next(depth)
	if err != nil {
		return nil, err
	}
	for p.peekWord(word) {
		p.pos++
		r, err := next(depth)
		if err != nil {
			return nil, err
		}
		l = &Expr{Kind: kind, L: l, R: r}
	}
	return l, nil
}

func (p *parser) parseUnary(depth int) (*Expr, error) {
	if depth > maxDepth {
		return nil, p.errf("expression nested too deeply")
	}
	if p.pos >= len(p.toks) {
		return nil, p.errf("unexpected end of expression")
	}
	if p.peekWord("not") {
		p.pos++
		e, err := p.parseUnary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Expr{Kind: KindNot, L: e}, nil
	}
	t := p.toks[p.pos]
	if t.kind == tLParen {
		p.pos++
		e, err := p.parseOr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != tRParen {
			return nil, p.errf("missing ')'")
		}
		p.pos++
		return e, nil
	}
	return p.parseComparison()
}

func (p *parser) operand() (token, error) {
	if p.pos >= len(p.toks) {
		return token{}, p.errf("unexpected end of expression")
	}
	t := p.toks[p.pos]
	if t.kind != tIdent && t.kind != tLiteral {
		return token{}, p.errf("unexpected %q", t.text)
	}
	if t.kind == tIdent {
		if _, isOp := opNames[t.text]; isOp || t.text == "and" || t.text == "or" || t.text == "not" {
			return token{}, p.errf("unexpected %q", t.text)
		}
	}
	p.pos++
	return t, nil
}

func (p *parser) parseComparison() (*Expr, error) {
	left, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.pos >= len(p.toks) || p.toks[p.pos].kind != tIdent || opNames[p.toks[p.pos].text] == 0 {
		// A bare boolean literal is a constant expression.
		if left.kind == tLiteral && left.val.Type == Boolean {
			return &Expr{Kind: KindConst, Const: left.val.Bool}, nil
		}
		return nil, p.errf("expected a comparison operator after %q", left.text)
	}
	op := opNames[p.toks[p.pos].text]
	p.pos++
	right, err := p.operand()
	if err != nil {
		return nil, err
	}
	p.comparisons++
	switch {
	case left.kind == tIdent && right.kind == tLiteral:
		return &Expr{Kind: KindCompare, Property: left.text, Op: op, Value: right.val}, nil
	case left.kind == tLiteral && right.kind == tIdent:
		return &Expr{Kind: KindCompare, Property: right.text, Op: op.flip(), Value: left.val}, nil
	case left.kind == tLiteral && right.kind == tLiteral:
		c, ok := Compare(left.val, right.val)
		return &Expr{Kind: KindConst, Const: ok && constResult(op, c)}, nil
	}
	return nil, p.errf("comparing two properties is not supported")
}

func constResult(op Op, c int) bool {
	switch op {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	}
	return false
}

// compareProperty compares a property's value with a literal: values of
// one type compare as Compare does, and an integer literal compares with
// a Double property by numeric value (doubleField eq 5 matches 5.0, as on
// Azure).
func compareProperty(prop, lit Value) (int, bool) {
	if prop.Type == Double && (lit.Type == Int32 || lit.Type == Int64) {
		lit = Value{Type: Double, Float: float64(lit.Int)}
	}
	return Compare(prop, lit)
}
