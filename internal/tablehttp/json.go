package tablehttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// metadata is the OData JSON metadata level of a response.
type metadata uint8

const (
	noMetadata metadata = iota + 1
	minimalMetadata
	fullMetadata
)

func (m metadata) contentType() string {
	switch m {
	case noMetadata:
		return "application/json;odata=nometadata;streaming=true;charset=utf-8"
	case fullMetadata:
		return "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	}
	return "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
}

// parseMetadata reads the metadata level from $format (which wins) or
// Accept. Plain application/json (or nothing) means minimal metadata.
func parseMetadata(format, accept string) (metadata, error) {
	v := format
	if v == "" {
		v = accept
	}
	v = strings.ToLower(v)
	switch {
	case strings.Contains(v, "odata=nometadata"):
		return noMetadata, nil
	case strings.Contains(v, "odata=fullmetadata"):
		return fullMetadata, nil
	case strings.Contains(v, "odata=minimalmetadata"):
		return minimalMetadata, nil
	case strings.Contains(v, "odata=verbose"):
		return 0, azerr.New(azerr.JsonFormatNotSupported)
	case v == "" || strings.Contains(v, "json") || strings.Contains(v, "*/*"):
		return minimalMetadata, nil
	case strings.Contains(v, "atom") || strings.Contains(v, "xml"):
		if format != "" || !strings.Contains(v, "*") {
			return 0, azerr.New(azerr.AtomFormatNotSupported)
		}
	case format != "":
		return 0, azerr.InvalidQuery("$format", format, "")
	}
	return minimalMetadata, nil
}

// rawProp is one member of a request entity object, in body order.
type rawProp struct {
	name string
	raw  json.RawMessage
	// off is the offset of raw in the body readObject read it from.
	off int
}

// bodyEntity is an entity as decoded from a request body.
type bodyEntity struct {
	PartitionKey, RowKey       string
	HasPartitionKey, HasRowKey bool
	Props                      []table.Property
}

// decodeEntity decodes an entity body: typed by "Name@odata.type"
// annotations, inferred otherwise (string, Int32 / Double number, Boolean);
// nulls are dropped; Timestamp and odata.* members are ignored. The
// strings it returns share one copy of the body, so the caller may reuse
// body afterwards.
func decodeEntity(body []byte) (bodyEntity, error) {
	text := string(body)
	var buf [16]rawProp // the members of a typical entity, on the stack
	members, err := readObject(body, text, buf[:])
	if err != nil {
		return bodyEntity{}, err
	}
	// plain returns the text of a member's value that is a string needing
	// no unescaping.
	plain := func(m *rawProp) (string, bool) {
		if !isPlainString(m.raw) {
			return "", false
		}
		return text[m.off+1 : m.off+len(m.raw)-1], true
	}
	var types map[string]string
	for i := range members {
		m := &members[i]
		if base, ok := strings.CutSuffix(m.name, "@odata.type"); ok {
			t, ok := plain(m)
			if !ok {
				if err := json.Unmarshal(m.raw, &t); err != nil {
					return bodyEntity{}, azerr.Newf(azerr.InvalidInput, "The type annotation of %q is not a string.", base)
				}
			}
			if types == nil {
				types = map[string]string{}
			}
			types[base] = t
		}
	}
	var out bodyEntity
	for i := range members {
		m := &members[i]
		if strings.Contains(m.name, "@") || strings.HasPrefix(m.name, "odata.") {
			continue
		}
		switch m.name {
		case "PartitionKey", "RowKey":
			s, ok := plain(m)
			if !ok {
				// Its own variable: only this path takes an address.
				var u string
				if err := json.Unmarshal(m.raw, &u); err != nil || string(bytes.TrimSpace(m.raw)) == "null" {
					return bodyEntity{}, azerr.Newf(azerr.InvalidInput, "The %s property must be a string.", m.name)
				}
				s = u
			}
			if m.name == "PartitionKey" {
				out.PartitionKey, out.HasPartitionKey = s, true
			} else {
				out.RowKey, out.HasRowKey = s, true
			}
			continue
		case "Timestamp":
			// The server sets Timestamp; a client value is ignored, but it
			// must still be a DateTime string (or null).
			if _, ok := plain(m); ok {
				continue
			}
			var ts *string
			if json.Unmarshal(m.raw, &ts) != nil {
				return bodyEntity{}, azerr.Newf(azerr.InvalidInput, "The Timestamp property must be a DateTime string.")
			}
			continue
		}
		if string(bytes.TrimSpace(m.raw)) == "null" {
			continue
		}
		str, isPlain := plain(m)
		v, err := decodeValue(m.name, types[m.name], m.raw, str, isPlain)
		if err != nil {
			return bodyEntity{}, err
		}
		if out.Props == nil {
			out.Props = make([]table.Property, 0, len(members))
		}
		out.Props = append(out.Props, table.Property{Name: m.name, Value: v})
	}
	return out, nil
}

func badValue(name string) *azerr.Error {
	return azerr.Newf(azerr.InvalidInput, "The value of property %q is not valid for its type.", name)
}

// decodeValue decodes one property value; plainStr is the value's text
// when isPlain says it is a string needing no unescaping.
func decodeValue(name, edm string, raw json.RawMessage, plainStr string, isPlain bool) (odata.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return odata.Value{}, badValue(name)
	}
	var str string
	isString := raw[0] == '"'
	if isString {
		if isPlain {
			str = plainStr
		} else {
			// Its own variable: only this path takes an address.
			var u string
			if err := json.Unmarshal(raw, &u); err != nil {
				return odata.Value{}, badValue(name)
			}
			str = u
		}
	}
	if edm == "" {
		switch {
		case isString:
			return odata.Value{Type: odata.String, Str: str}, nil
		case string(raw) == "true" || string(raw) == "false":
			return odata.Value{Type: odata.Boolean, Bool: string(raw) == "true"}, nil
		case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
			n := string(raw)
			if !strings.ContainsAny(n, ".eE") {
				// An integer without annotation is an Int32; one that does
				// not fit is an error (Int64 needs its annotation).
				i, err := strconv.ParseInt(n, 10, 32)
				if err != nil {
					return odata.Value{}, azerr.Newf(azerr.InvalidInput, "The value of property %q does not fit Edm.Int32; annotate it as Edm.Int64 or Edm.Double.", name)
				}
				return odata.Value{Type: odata.Int32, Int: i}, nil
			}
			// A number with a fraction or exponent is a Double.
			f, err := strconv.ParseFloat(n, 64)
			if err != nil || math.IsInf(f, 0) {
				return odata.Value{}, badValue(name)
			}
			return odata.Value{Type: odata.Double, Float: f}, nil
		}
		return odata.Value{}, badValue(name)
	}
	t, ok := odata.ParseType(edm)
	if !ok {
		return odata.Value{}, azerr.Newf(azerr.InvalidInput, "The type %q of property %q is not supported.", edm, name)
	}
	numText := string(raw)
	if isString {
		numText = str
	}
	switch t {
	case odata.String:
		if !isString {
			return odata.Value{}, badValue(name)
		}
		return odata.Value{Type: t, Str: str}, nil
	case odata.Int32:
		i, err := strconv.ParseInt(numText, 10, 32)
		if err != nil {
			return odata.Value{}, badValue(name)
		}
		return odata.Value{Type: t, Int: i}, nil
	case odata.Int64:
		i, err := strconv.ParseInt(numText, 10, 64)
		if err != nil {
			return odata.Value{}, badValue(name)
		}
		return odata.Value{Type: t, Int: i}, nil
	case odata.Double:
		f, err := odata.ParseDouble(numText)
		if err != nil || (!isString && (math.IsInf(f, 0) || math.IsNaN(f))) {
			return odata.Value{}, badValue(name)
		}
		return odata.Value{Type: t, Float: f}, nil
	case odata.Boolean:
		// The data-tables SDK sends typed values as strings:
		// "prop": "true" with "prop@odata.type": "Edm.Boolean".
		switch {
		case numText == "true" || (isString && strings.EqualFold(numText, "true")):
			return odata.Value{Type: t, Bool: true}, nil
		case numText == "false" || (isString && strings.EqualFold(numText, "false")):
			return odata.Value{Type: t, Bool: false}, nil
		}
		return odata.Value{}, badValue(name)
	case odata.DateTime:
		if !isString {
			return odata.Value{}, badValue(name)
		}
		ticks, err := odata.ParseDateTime(str)
		if err != nil {
			return odata.Value{}, badValue(name)
		}
		return odata.Value{Type: t, Int: ticks}, nil
	case odata.Guid:
		if !isString || !odata.ValidGuid(str) {
			return odata.Value{}, badValue(name)
		}
		return odata.Value{Type: t, Str: str}, nil
	case odata.Binary:
		if !isString {
			return odata.Value{}, badValue(name)
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return odata.Value{}, badValue(name)
		}
		if b == nil {
			b = []byte{}
		}
		return odata.Value{Type: t, Bytes: b}, nil
	}
	return odata.Value{}, badValue(name)
}

// entityWriter renders entities for one response.
type entityWriter struct {
	level   metadata
	baseURL string // "http://host/account"
	account string
	table   string
	// selected, when not nil, limits the properties written ($select).
	selected []string
	// typeName is account.table (set on first use); scratch is reused
	// to build URLs.
	typeName string
	scratch  []byte
}

// editLink is the entity's relative URL: t(PartitionKey='p',RowKey='r').
func editLink(tableName, pk, rk string) string {
	return tableName + "(PartitionKey='" + quoteKey(pk) + "',RowKey='" + quoteKey(rk) + "')"
}

// needsPathEscape reports whether escapePath would change s.
func needsPathEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0 {
			continue
		}
		return true
	}
	return false
}

// quoteKey doubles quotes and percent-encodes a key for a URL.
func quoteKey(k string) string {
	if strings.IndexByte(k, '\'') >= 0 {
		k = strings.ReplaceAll(k, "'", "''")
	}
	return escapePath(k)
}

func escapePath(s string) string {
	if !needsPathEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatInt(int64(c)>>4, 16)+strconv.FormatInt(int64(c)&15, 16)))
	}
	return b.String()
}

// needsAnnotation reports whether a value's type cannot be inferred from
// its JSON form.
func needsAnnotation(v odata.Value, level metadata) bool {
	switch v.Type {
	case odata.Int64, odata.DateTime, odata.Guid, odata.Binary:
		return true
	case odata.Double:
		// Finite doubles always carry a decimal point or exponent, so they
		// read back as Double without an annotation (SDKs expect none).
		return math.IsNaN(v.Float) || math.IsInf(v.Float, 0)
	}
	return false
}

func appendValue(b []byte, v odata.Value) []byte {
	return appendScalar(b, v.Type, v.Str, v.Bytes, v.Int, v.Float, v.Bool)
}

// appendScalar renders a value of type t: text is a String's or Guid's
// text, bin a Binary's bytes, and i, f and bl the other types' values. It
// is the one renderer of decoded (appendValue) and stored (appendRawValue)
// values.
func appendScalar[T string | []byte](b []byte, t odata.Type, text T, bin []byte, i int64, f float64, bl bool) []byte {
	switch t {
	case odata.String, odata.Guid:
		return jsonString(b, text)
	case odata.Int32:
		return strconv.AppendInt(b, i, 10)
	case odata.Int64:
		return append(strconv.AppendInt(append(b, '"'), i, 10), '"')
	case odata.Double:
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return jsonString(b, odata.FormatDouble(f))
		}
		return odata.AppendDouble(b, f)
	case odata.Boolean:
		return strconv.AppendBool(b, bl)
	case odata.DateTime:
		// Digits, '-', 'T', ':', '.' and 'Z' need no escaping.
		return append(odata.AppendDateTime(append(b, '"'), i), '"')
	case odata.Binary:
		// The base64 alphabet needs no escaping.
		return append(base64.StdEncoding.AppendEncode(append(b, '"'), bin), '"')
	}
	return append(b, "null"...)
}

// appendEntity renders one entity object. single adds odata.metadata for
// a single-entity response.
func (w *entityWriter) appendEntity(b []byte, e *table.Entity, single bool) []byte {
	b = append(b, '{')
	if w.level != noMetadata {
		if single {
			b = appendMember(b, "odata.metadata")
			b = jsonString(b, w.baseURL+"/$metadata#"+w.table+"/@Element")
		}
		if w.level == fullMetadata {
			b = appendMember(b, "odata.type")
			b = jsonString(b, w.account+"."+w.table)
			b = appendMember(b, "odata.id")
			b = jsonString(b, w.baseURL+"/"+editLink(w.table, e.PartitionKey, e.RowKey))
		}
		// The ETag W/"datetime'...'" as a JSON string: only its two quotes
		// need escaping.
		b = appendMember(b, "odata.etag")
		b = append(b, `"W/\"datetime'`...)
		b = odata.AppendTicks(b, e.Timestamp, "%3A")
		b = append(b, `'\""`...)
		if w.level == fullMetadata {
			b = appendMember(b, "odata.editLink")
			b = jsonString(b, editLink(w.table, e.PartitionKey, e.RowKey))
		}
	}
	if w.selected != nil {
		for _, name := range w.selected {
			v, ok := e.Lookup(name)
			if !ok {
				// A selected property the entity lacks is left out.
				continue
			}
			if name == "Timestamp" {
				b = appendTimestamp(b, w.level, e.Timestamp)
				continue
			}
			b = w.appendProp(b, name, v)
		}
		return append(b, '}')
	}
	b = appendMember(b, "PartitionKey")
	b = jsonString(b, e.PartitionKey)
	b = appendMember(b, "RowKey")
	b = jsonString(b, e.RowKey)
	b = appendTimestamp(b, w.level, e.Timestamp)
	for _, p := range e.Props {
		b = w.appendProp(b, p.Name, p.Value)
	}
	return append(b, '}')
}

// appendProp renders one property, annotated when its type cannot be
// inferred and the metadata level allows.
func (w *entityWriter) appendProp(b []byte, name string, v odata.Value) []byte {
	if w.level != noMetadata && needsAnnotation(v, w.level) {
		b = appendMember(b, name+"@odata.type")
		b = jsonString(b, v.Type.Name())
	}
	b = appendMember(b, name)
	return appendValue(b, v)
}

func appendTimestamp(b []byte, level metadata, ticks int64) []byte {
	if level == fullMetadata {
		b = appendMember(b, "Timestamp@odata.type")
		b = jsonString(b, "Edm.DateTime")
	}
	b = appendMember(b, "Timestamp")
	b = append(b, '"')
	b = odata.AppendTicks(b, ticks, ":")
	return append(b, '"')
}

// parseSelect splits $select into property names; "" or "*" mean all.
func parseSelect(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "*" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, azerr.InvalidQuery("$select", s, "")
		}
		if f == "*" {
			return nil, nil
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}
