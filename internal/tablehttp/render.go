package tablehttp

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// jsonString appends s as a JSON string.
func jsonString[T string | []byte](b []byte, s T) []byte {
	if jsonPlain(s, true) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return jsonStringSlow(b, string(s))
}

// jsonStringSlow is jsonString for text with escapes or non-ASCII.
func jsonStringSlow(b []byte, s string) []byte {
	enc, err := json.Marshal(s)
	if err != nil {
		// Invalid UTF-8 never reaches storage; keep output valid anyway.
		enc, _ = json.Marshal(strings.ToValidUTF8(s, "\uFFFD"))
	}
	return append(b, enc...)
}

// pathSafe marks the bytes a key keeps as they are in a URL path.
var pathSafe = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strings.IndexByte("-._~!$&'()*+,;=:@", byte(c)) >= 0
	}
	return t
}()

const upperHex = "0123456789ABCDEF"

// appendQuotedKey appends quoteKey(k).
func appendQuotedKey[T string | []byte](b []byte, k T) []byte {
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '\'':
			b = append(b, '\'', '\'')
		case pathSafe[c]:
			b = append(b, c)
		default:
			b = append(b, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return b
}

// appendEditLink appends editLink(tableName, pk, rk).
func appendEditLink[T string | []byte](b []byte, tableName string, pk, rk T) []byte {
	b = append(b, tableName...)
	b = append(b, "(PartitionKey='"...)
	b = appendQuotedKey(b, pk)
	b = append(b, "',RowKey='"...)
	b = appendQuotedKey(b, rk)
	return append(b, "')"...)
}

// appendMember appends a member name of the object being rendered, with
// the comma before it unless it is the first member (no member value ends
// in '{', so the byte before tells).
func appendMember[T string | []byte](b []byte, name T) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = jsonString(b, name)
	return append(b, ':')
}

// appendRawMember appends a member name already rendered as JSON with its
// colon (`"Name":`), with the comma before it as appendMember does.
func appendRawMember(b []byte, member string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	return append(b, member...)
}

// appendAnnotationMember appends the member name name+"@odata.type".
func appendAnnotationMember[T string | []byte](b []byte, name T) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	if jsonPlain(name, true) {
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `@odata.type":`...)
		return b
	}
	b = jsonStringSlow(b, string(name)+"@odata.type")
	return append(b, ':')
}

// appendETagMember appends the odata.etag member of an entity whose
// Timestamp reads ts (odata.AppendTicks with ':'): W/"datetime'...'" with
// the colons URL-encoded, as a JSON string.
func appendETagMember(b []byte, ts []byte, ticks int64) []byte {
	b = appendRawMember(b, `"odata.etag":`)
	b = append(b, `"W/\"datetime'`...)
	if len(ts) == 28 && ts[13] == ':' && ts[16] == ':' {
		b = append(b, ts[:13]...)
		b = append(b, "%3A"...)
		b = append(b, ts[14:16]...)
		b = append(b, "%3A"...)
		b = append(b, ts[17:]...)
	} else {
		b = odata.AppendTicks(b, ticks, "%3A")
	}
	return append(b, `'\""`...)
}

// appendTimestampText appends the Timestamp property rendered as ts.
func appendTimestampText(b []byte, level metadata, ts []byte) []byte {
	if level == fullMetadata {
		b = appendRawMember(b, `"Timestamp@odata.type":"Edm.DateTime"`)
	}
	b = appendRawMember(b, `"Timestamp":"`)
	b = append(b, ts...)
	return append(b, '"')
}

// rawNeedsAnnotation is needsAnnotation for a stored property.
func rawNeedsAnnotation(p *table.RawProp) bool {
	switch p.Type {
	case odata.Int64, odata.DateTime, odata.Guid, odata.Binary:
		return true
	case odata.Double:
		return math.IsNaN(p.Float) || math.IsInf(p.Float, 0)
	}
	return false
}

// appendRawValue is appendValue for a stored property.
func appendRawValue(b []byte, p *table.RawProp) []byte {
	return appendScalar(b, p.Type, p.Data, p.Data, p.Int, p.Float, p.Bool)
}

// appendRawProp is appendProp for a stored property.
func (w *entityWriter) appendRawProp(b []byte, p *table.RawProp) []byte {
	if w.level != noMetadata && rawNeedsAnnotation(p) {
		b = appendAnnotationMember(b, p.Name)
		b = append(b, '"')
		b = append(b, p.Type.Name()...)
		b = append(b, '"')
	}
	b = appendMember(b, p.Name)
	return appendRawValue(b, p)
}

// appendRow renders one entity of a query page straight from its stored
// record: the same object appendEntity renders for the decoded entity
// (without odata.metadata, which only a single-entity response carries).
func (w *entityWriter) appendRow(b []byte, r table.Row) []byte {
	var tsBuf [40]byte
	ticks := r.Timestamp()
	ts := odata.AppendTicks(tsBuf[:0], ticks, ":")
	b = append(b, '{')
	if w.level != noMetadata {
		var link []byte
		if w.level == fullMetadata {
			b = appendRawMember(b, `"odata.type":`)
			if w.typeName == "" {
				w.typeName = w.account + "." + w.table
			}
			b = jsonString(b, w.typeName)
			w.scratch = append(append(w.scratch[:0], w.baseURL...), '/')
			start := len(w.scratch)
			w.scratch = appendEditLink(w.scratch, w.table, r.PartitionKey, r.RowKey)
			link = w.scratch[start:]
			b = appendRawMember(b, `"odata.id":`)
			b = jsonString(b, w.scratch)
		}
		b = appendETagMember(b, ts, ticks)
		if w.level == fullMetadata {
			b = appendRawMember(b, `"odata.editLink":`)
			b = jsonString(b, link)
		}
	}
	var p table.RawProp
	if w.selected != nil {
		for _, name := range w.selected {
			switch name {
			case "PartitionKey":
				b = appendMember(b, name)
				b = jsonString(b, r.PartitionKey)
			case "RowKey":
				b = appendMember(b, name)
				b = jsonString(b, r.RowKey)
			case "Timestamp":
				b = appendTimestampText(b, w.level, ts)
			default:
				// A selected property the entity lacks is left out.
				if r.Lookup(name, &p) {
					b = w.appendRawProp(b, &p)
				}
			}
		}
		return append(b, '}')
	}
	b = appendRawMember(b, `"PartitionKey":`)
	b = jsonString(b, r.PartitionKey)
	b = append(b, `,"RowKey":`...)
	b = jsonString(b, r.RowKey)
	b = appendTimestampText(b, w.level, ts)
	it := r.Props()
	for it.Next(&p) {
		b = w.appendRawProp(b, &p)
	}
	return append(b, '}')
}
