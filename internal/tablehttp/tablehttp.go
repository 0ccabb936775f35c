// Package tablehttp is the HTTP surface of the Table service: it decodes
// requests, runs the operation and encodes Azure's responses.
//
// It fits between httpx, whose wrapper has already resolved the account,
// authenticated the caller and set the common headers, and the domain
// package table, which holds every Table rule and runs it inside storage
// transactions. All of the Table service's JSON lives here (the OData
// body reader, the renderers and their byte scanner), since the stored
// records know nothing of wire formats. Every operation is one row of the
// table in ops.go (path level, restype, comp, method -> operation name,
// required access, handler). The server builds it with New from
// httpx.Deps and runs the table purge worker it registers.
package tablehttp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/internal/table"
	"github.com/lazuli-storage/lazuli/internal/table/odata"
)

// Request body limits: an entity is at most 1 MiB as Azure counts it, which
// JSON (base64, escapes) can inflate; a batch is at most 4 MiB.
const (
	maxEntityBody = 4 << 20
	maxBatchBody  = 4 << 20
)

type handler struct {
	d   httpx.Deps
	svc *table.Service
	// pages recycles the buffers of Query Entities (*queryBuf), so a
	// page is read and rendered without growing fresh buffers every time.
	pages sync.Pool
}

// maxPooledPage is the largest response buffer kept for reuse.
const maxPooledPage = 4 << 20

// New returns the Table service handler over svc. The server runs svc's
// purges of deleted tables' rows (table.Service.Run).
func New(d httpx.Deps, svc *table.Service) http.Handler {
	return &handler{d: d, svc: svc}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info := httpx.FromContext(r.Context())
	if r.Method == http.MethodOptions {
		info.Operation = "CorsPreflight"
		h.preflight(w, r, info)
		return
	}
	if r.Header.Get("Origin") != "" {
		h.corsHeaders(w, r, info)
	}
	if err := h.route(w, r, info); err != nil {
		httpx.WriteError(w, r, err)
	}
}

// resource is a parsed Table service path.
type resource struct {
	tables    bool   // the Tables collection
	tableName string // Tables('name')
	table     string // entity set name
	hasKeys   bool
	partial   bool // only one key was given (a filter-style address)
	pk, rk    string
}

// parseResource parses "Tables", "Tables('t')", "t", "t()" and
// "t(PartitionKey='p',RowKey='r')" (percent-encoded).
func parseResource(p string) (*resource, error) {
	dec, err := url.PathUnescape(p)
	if err != nil {
		return nil, azerr.New(azerr.InvalidUri)
	}
	dec = strings.TrimSuffix(dec, "/")
	name, args, hasParen := strings.Cut(dec, "(")
	if hasParen {
		if !strings.HasSuffix(args, ")") {
			return nil, azerr.New(azerr.InvalidUri)
		}
		args = strings.TrimSuffix(args, ")")
	}
	if strings.Contains(name, "/") || name == "" {
		return nil, azerr.New(azerr.InvalidUri)
	}
	if name == "Tables" {
		res := &resource{tables: true}
		if args != "" {
			v, rest, err := readQuoted(args)
			if err != nil || strings.TrimSpace(rest) != "" {
				return nil, azerr.New(azerr.InvalidUri)
			}
			res.tableName = v
		}
		return res, nil
	}
	res := &resource{table: name}
	if strings.TrimSpace(args) == "" {
		return res, nil
	}
	var gotPK, gotRK bool
	rest := args
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		k, after, ok := strings.Cut(rest, "=")
		if !ok {
			return nil, azerr.New(azerr.InvalidUri)
		}
		v, tail, err := readQuoted(strings.TrimLeft(after, " "))
		if err != nil {
			return nil, azerr.New(azerr.InvalidUri)
		}
		switch strings.TrimSpace(k) {
		case "PartitionKey":
			if gotPK {
				return nil, azerr.New(azerr.InvalidUri)
			}
			res.pk, gotPK = v, true
		case "RowKey":
			if gotRK {
				return nil, azerr.New(azerr.InvalidUri)
			}
			res.rk, gotRK = v, true
		default:
			return nil, azerr.New(azerr.InvalidUri)
		}
		tail = strings.TrimLeft(tail, " ")
		if tail == "" {
			break
		}
		if tail[0] != ',' {
			return nil, azerr.New(azerr.InvalidUri)
		}
		rest = tail[1:]
	}
	res.hasKeys = gotPK || gotRK
	res.partial = gotPK != gotRK
	return res, nil
}

// readQuoted reads a single-quoted key literal (” escapes a quote).
func readQuoted(s string) (string, string, error) {
	if s == "" || s[0] != '\'' {
		return "", "", azerr.New(azerr.InvalidUri)
	}
	// Without a doubled quote the literal is a substring of s.
	if j := strings.IndexByte(s[1:], '\''); j >= 0 && (j+2 >= len(s) || s[j+2] != '\'') {
		return s[1 : j+1], s[j+2:], nil
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), s[i+1:], nil
		}
		b.WriteByte(s[i])
	}
	return "", "", azerr.New(azerr.InvalidUri)
}

// authorize runs the auth check for one operation.
func (h *handler) authorize(r *http.Request, info *httpx.Info, a auth.Access) error {
	if h.d.Auth == nil {
		return nil
	}
	a.Service = auth.Table
	// Stored access policies matter only to a SAS; a shared key request
	// never looks one up, so it does not get the lookup built.
	sharedKey := info.Identity != nil && (info.Identity.Kind == auth.SharedKey || info.Identity.Kind == auth.SharedKeyLite)
	if a.Container != "" && a.Policy == nil && !sharedKey {
		account, name, ctx := info.Account, a.Container, r.Context()
		a.Policy = func(id string) (*auth.Policy, error) {
			si, err := h.svc.Policy(ctx, account, name, id)
			if err != nil || si == nil {
				return nil, nil
			}
			return &auth.Policy{Start: si.Start, Expiry: si.Expiry, Permission: si.Permission}, nil
		}
	}
	return h.d.Auth.Authorize(info.Identity, r, a)
}

func entityAccess(tableName, pk, rk, perms, accountPerms string) auth.Access {
	return auth.Access{Resource: auth.ResObject, Perms: perms, AccountPerms: accountPerms,
		Container: tableName, PartitionKey: &pk, RowKey: &rk}
}

// checkJSONContentType refuses a body declared as anything but JSON.
func checkJSONContentType(h http.Header) error {
	ct := strings.ToLower(h.Get("Content-Type"))
	if ct != "" && !strings.Contains(ct, "json") {
		if strings.Contains(ct, "atom") {
			return azerr.New(azerr.AtomFormatNotSupported)
		}
		return azerr.Newf(azerr.MediaTypeNotSupported, "The Content-Type %q is not supported; use application/json.", h.Get("Content-Type"))
	}
	return nil
}

// readJSONBody checks the Content-Type and reads the body.
func readJSONBody(r *http.Request, limit int64) ([]byte, error) {
	if err := checkJSONContentType(r.Header); err != nil {
		return nil, err
	}
	return readBody(r, limit)
}

// withJSONBody is readJSONBody handing the body to fn; the bytes are
// reused once fn returns, so fn must not keep them. It reads as readBody
// does (the same limit and errors), into a pooled buffer sized from
// Content-Length.
func withJSONBody(r *http.Request, limit int64, fn func([]byte) error) error {
	if err := anonymousBody(r); err != nil {
		return err
	}
	if err := checkJSONContentType(r.Header); err != nil {
		return err
	}
	if r.ContentLength > limit {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	bp, _ := bodyPool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := (*bp)[:0]
	if want := int(max(r.ContentLength, 0)) + 1; cap(b) < want {
		b = make([]byte, 0, max(want, 1024))
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return azerr.New(azerr.RequestBodyTooLarge)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return azerr.Newf(azerr.InvalidInput, "The request body could not be read.")
		}
	}
	err := fn(b)
	if cap(b) <= maxPooledBody {
		*bp = b[:0]
		bodyPool.Put(bp)
	}
	return err
}

// maxPooledBody is the largest request body read into a pooled buffer.
const maxPooledBody = 64 << 10

// bodyPool recycles entity request body buffers (*[]byte).
var bodyPool sync.Pool

// anonymousBody refuses to read the body of a request without credentials:
// no Table operation is open to anonymous callers, and reading (up to 4
// MiB of a batch) before the handler's authorization refuses it would let
// clients without credentials pile up memory.
func anonymousBody(r *http.Request) error {
	if id := httpx.FromContext(r.Context()).Identity; id == nil || id.Kind == auth.Anonymous {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	return nil
}

// readBody reads at most limit bytes of the request body.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if err := anonymousBody(r); err != nil {
		return nil, err
	}
	if r.ContentLength > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, azerr.Newf(azerr.InvalidInput, "The request body could not be read.")
	}
	if int64(len(b)) > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	return b, nil
}

func (h *handler) metadataLevel(r *http.Request) (metadata, error) {
	return metadataLevelOf(r, queryOf(r.URL))
}

// metadataLevelOf is metadataLevel with the query string already parsed.
func metadataLevelOf(r *http.Request, q url.Values) (metadata, error) {
	return parseMetadata(q.Get("$format"), r.Header.Get("Accept"))
}

// Response header names as http.Header.Set stores them (canonical form),
// for writing the header map directly.
const (
	hdrContentType        = "Content-Type"
	hdrDataServiceVersion = "Dataserviceversion" // DataServiceVersion
	hdrDataServiceID      = "Dataserviceid"      // DataServiceId
	hdrCacheControl       = "Cache-Control"
	hdrContentTypeOptions = "X-Content-Type-Options"
	hdrETag               = "Etag" // ETag
	hdrLocation           = "Location"
	hdrPreferenceApplied  = "Preference-Applied"
	hdrContentLength      = "Content-Length"
)

// Constant header values, shared by every response. Each slice has no
// spare capacity, so an append elsewhere copies instead of writing into
// it; nothing assigns to their elements.
var (
	valDataServiceVersion = []string{"3.0;"}
	valNoCache            = []string{"no-cache"}
	valNoSniff            = []string{"nosniff"}
	valContentType        = map[metadata][]string{
		noMetadata:      {noMetadata.contentType()},
		minimalMetadata: {minimalMetadata.contentType()},
		fullMetadata:    {fullMetadata.contentType()},
	}
	valPreferenceApplied = map[string][]string{
		"return-no-content": {"return-no-content"},
		"return-content":    {"return-content"},
	}
)

func setJSONHeaders(w http.ResponseWriter, level metadata) {
	h := w.Header()
	ct := valContentType[level]
	if ct == nil {
		ct = []string{level.contentType()}
	}
	h[hdrContentType] = ct
	setCommonJSONHeaders(h)
}

// setCommonJSONHeaders sets the JSON response headers but Content-Type.
func setCommonJSONHeaders(h http.Header) {
	h[hdrDataServiceVersion] = valDataServiceVersion
	h[hdrCacheControl] = valNoCache
	h[hdrContentTypeOptions] = valNoSniff
}

// preferNoContent reads the Prefer header; def is the answer when absent.
func preferNoContent(r *http.Request, def bool) (noContent bool, applied string) {
	p := strings.ToLower(r.Header.Get("Prefer"))
	switch {
	case strings.Contains(p, "return-no-content"):
		return true, "return-no-content"
	case strings.Contains(p, "return-content"):
		return false, "return-content"
	}
	return def, ""
}

// Continuation tokens are opaque to clients: "1!" + base64url(value).
func encodeToken(s string) string { return "1!" + base64.RawURLEncoding.EncodeToString([]byte(s)) }

func decodeToken(name, s string) (string, error) {
	v, ok := strings.CutPrefix(s, "1!")
	if !ok {
		return "", azerr.InvalidQuery(name, s, "")
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return "", azerr.InvalidQuery(name, s, "")
	}
	return string(b), nil
}

func parseTop(q url.Values) (int, error) {
	v := q.Get("$top")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > table.MaxPageSize {
		return 0, azerr.Newf(azerr.InvalidInput, "The requested number of results $top=%s is not within 1 and %d.", v, table.MaxPageSize)
	}
	return n, nil
}

func parseFilter(s string) (*odata.Expr, error) {
	e, err := odata.Parse(s)
	if err != nil {
		return nil, azerr.Newf(azerr.InvalidInput, "The query filter is not valid: %v", err)
	}
	return e, nil
}

// Create Table.
func (h *handler) createTable(rq *req) error {
	level, err := h.metadataLevel(rq.r)
	if err != nil {
		return err
	}
	body, err := readJSONBody(rq.r, 64<<10)
	if err != nil {
		return err
	}
	var req struct{ TableName *string }
	if err := json.Unmarshal(body, &req); err != nil {
		return invalidJSON()
	}
	if req.TableName == nil {
		return azerr.Newf(azerr.PropertiesNeedValue, "The TableName property is required.")
	}
	name := *req.TableName
	// An account SAS creates tables with w or c.
	if err := h.authorize(rq.r, rq.info, auth.Access{Resource: auth.ResContainer, Perms: "a", AccountPerms: "wc", ServiceSASDenied: true, Container: name}); err != nil {
		return err
	}
	t, err := h.svc.CreateTable(rq.r.Context(), rq.info.Account, name)
	if err != nil {
		return err
	}
	base := h.d.BaseURL(rq.info.Account)
	loc := base + "/Tables('" + quoteKey(t.Name) + "')"
	rq.w.Header().Set("Location", loc)
	rq.w.Header().Set("DataServiceId", loc)
	noContent, applied := preferNoContent(rq.r, false)
	if applied != "" {
		rq.w.Header().Set("Preference-Applied", applied)
	}
	setJSONHeaders(rq.w, level)
	if noContent {
		rq.w.Header().Del("Content-Type")
		rq.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	rq.w.WriteHeader(http.StatusCreated)
	rq.w.Write(appendTable(nil, level, base, rq.info.Account, t.Name, true))
	return nil
}

func appendTable(b []byte, level metadata, base, account, name string, single bool) []byte {
	b = append(b, '{')
	if level != noMetadata && single {
		b = append(b, `"odata.metadata":`...)
		b = jsonString(b, base+"/$metadata#Tables/@Element")
		b = append(b, ',')
	}
	if level == fullMetadata {
		b = append(b, `"odata.type":`...)
		b = jsonString(b, account+".Tables")
		b = append(b, `,"odata.id":`...)
		b = jsonString(b, base+"/Tables('"+quoteKey(name)+"')")
		b = append(b, `,"odata.editLink":`...)
		b = jsonString(b, "Tables('"+quoteKey(name)+"')")
		b = append(b, ',')
	}
	b = append(b, `"TableName":`...)
	b = jsonString(b, name)
	return append(b, '}')
}

// Delete Table.
func (h *handler) deleteTable(rq *req) error {
	if err := h.svc.DeleteTable(rq.r.Context(), rq.info.Account, rq.res.tableName); err != nil {
		return err
	}
	rq.w.WriteHeader(http.StatusNoContent)
	return nil
}

// getTable answers GET Tables('t').
func (h *handler) getTable(rq *req) error {
	level, err := h.metadataLevel(rq.r)
	if err != nil {
		return err
	}
	if err := h.authorizeOp(rq); err != nil {
		return err
	}
	t, err := h.svc.GetTable(rq.r.Context(), rq.info.Account, rq.res.tableName)
	if err != nil {
		return err
	}
	setJSONHeaders(rq.w, level)
	rq.w.WriteHeader(http.StatusOK)
	rq.w.Write(appendTable(nil, level, h.d.BaseURL(rq.info.Account), rq.info.Account, t.Name, true))
	return nil
}

// Query Tables.
func (h *handler) queryTables(rq *req) error {
	level, err := h.metadataLevel(rq.r)
	if err != nil {
		return err
	}
	if err := h.authorizeOp(rq); err != nil {
		return err
	}
	q := queryOf(rq.r.URL)
	top, err := parseTop(q)
	if err != nil {
		return err
	}
	filter, err := parseFilter(q.Get("$filter"))
	if err != nil {
		return err
	}
	next := ""
	if v := q.Get("NextTableName"); v != "" {
		if next, err = decodeToken("NextTableName", v); err != nil {
			return err
		}
	}
	names, cont, err := h.svc.QueryTables(rq.r.Context(), rq.info.Account, filter, top, next)
	if err != nil {
		return err
	}
	base := h.d.BaseURL(rq.info.Account)
	b := []byte{'{'}
	if level != noMetadata {
		b = append(b, `"odata.metadata":`...)
		b = jsonString(b, base+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTable(b, level, base, rq.info.Account, n, false)
	}
	b = append(b, "]}"...)
	if cont != "" {
		rq.w.Header().Set("x-ms-continuation-NextTableName", encodeToken(cont))
	}
	setJSONHeaders(rq.w, level)
	rq.w.WriteHeader(http.StatusOK)
	rq.w.Write(b)
	return nil
}

// Insert Entity.
func (h *handler) insertEntity(rq *req) error {
	level, err := metadataLevelOf(rq.r, rq.q)
	if err != nil {
		return err
	}
	var op table.Op
	err = withJSONBody(rq.r, maxEntityBody, func(body []byte) error {
		op, err = insertOp(body)
		return err
	})
	if err != nil {
		return err
	}
	if err := h.authorize(rq.r, rq.info, entityAccess(rq.res.table, op.PartitionKey, op.RowKey, "a", "a")); err != nil {
		return err
	}
	e, err := h.svc.Apply(rq.r.Context(), rq.info.Account, rq.res.table, op)
	if err != nil {
		return err
	}
	h.writeInserted(rq.w, rq.r, rq.info, rq.res.table, level, e)
	return nil
}

func insertOp(body []byte) (table.Op, error) {
	be, err := decodeEntity(body)
	if err != nil {
		return table.Op{}, err
	}
	if !be.HasPartitionKey || !be.HasRowKey {
		return table.Op{}, azerr.Newf(azerr.PropertiesNeedValue, "PartitionKey and RowKey are required.")
	}
	return table.Op{Kind: table.OpInsert, PartitionKey: be.PartitionKey, RowKey: be.RowKey, Props: be.Props}, nil
}

func (h *handler) writeInserted(w http.ResponseWriter, r *http.Request, info *httpx.Info, tableName string, level metadata, e *table.Entity) {
	base := h.d.BaseURL(info.Account)
	// The ETag and the entity's URL (Location and DataServiceId) are cut
	// from one string.
	var buf [256]byte
	b := table.AppendETag(buf[:0], e.Timestamp)
	n := len(b)
	b = append(append(b, base...), '/')
	b = appendEditLink(b, tableName, e.PartitionKey, e.RowKey)
	all := string(b)
	vals := make([]string, 3)
	vals[0], vals[1], vals[2] = all[:n], all[n:], all[n:]
	hdr := w.Header()
	hdr[hdrETag] = vals[0:1:1]
	hdr[hdrLocation] = vals[1:2:2]
	hdr[hdrDataServiceID] = vals[2:3:3]
	noContent, applied := preferNoContent(r, false)
	if applied != "" {
		hdr[hdrPreferenceApplied] = valPreferenceApplied[applied]
	}
	if noContent {
		setCommonJSONHeaders(hdr)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	setJSONHeaders(w, level)
	ew := &entityWriter{level: level, baseURL: base, account: info.Account, table: tableName}
	w.WriteHeader(http.StatusCreated)
	w.Write(ew.appendEntity(nil, e, true))
}

// writeEntity handles Update, Merge, Insert Or Replace, Insert Or Merge and
// Delete Entity on an entity address.
func (h *handler) writeEntity(rq *req) error {
	op, err := entityOp(rq.method, rq.r.Header, rq.res, func(decode func([]byte) error) error {
		return withJSONBody(rq.r, maxEntityBody, decode)
	})
	if err != nil {
		return err
	}
	if err := rq.info.SetOperation(rq.r.Context(), op.Kind.String()); err != nil {
		return err
	}
	if err := h.authorizeWrite(rq.r, rq.info, rq.res.table, op); err != nil {
		return err
	}
	e, err := h.svc.Apply(rq.r.Context(), rq.info.Account, rq.res.table, *op)
	if err != nil {
		return err
	}
	hdr := rq.w.Header()
	if e != nil {
		hdr[hdrETag] = []string{e.ETag()}
	}
	hdr[hdrDataServiceVersion] = valDataServiceVersion
	rq.w.WriteHeader(http.StatusNoContent)
	return nil
}

// opPerms returns the permission letters a write needs, every one of
// them (service SAS and account SAS use the same letters for entities):
// upserts need both add and update.
func opPerms(k table.OpKind) []string {
	switch k {
	case table.OpInsert:
		return []string{"a"}
	case table.OpUpdate, table.OpMerge:
		return []string{"u"}
	case table.OpDelete:
		return []string{"d"}
	}
	return []string{"a", "u"}
}

// authorizeWrite checks every permission a write needs.
func (h *handler) authorizeWrite(r *http.Request, info *httpx.Info, tableName string, op *table.Op) error {
	for _, p := range opPerms(op.Kind) {
		if err := h.authorize(r, info, entityAccess(tableName, op.PartitionKey, op.RowKey, p, p)); err != nil {
			return err
		}
	}
	return nil
}

// entityOp builds the write an entity-address request asks for. body
// hands the request body to its argument (and may reuse the bytes after
// it returns).
func entityOp(method string, hdr http.Header, res *resource, body func(func([]byte) error) error) (*table.Op, error) {
	ifMatch := hdr.Values("If-Match")
	if len(ifMatch) > 1 {
		return nil, azerr.Newf(azerr.InvalidInput, "Only one If-Match value is allowed.")
	}
	if hdr.Get("If-None-Match") != "" {
		return nil, azerr.Newf(azerr.InvalidInput, "If-None-Match is not supported for this operation.")
	}
	op := &table.Op{PartitionKey: res.pk, RowKey: res.rk}
	if len(ifMatch) == 1 {
		op.IfMatch = strings.TrimSpace(ifMatch[0])
		// A value that is not an entity ETag is malformed input (400),
		// not a condition that fails (412).
		if op.IfMatch != "" && !table.ValidETag(op.IfMatch) {
			return nil, azerr.Newf(azerr.InvalidInput, "The If-Match value %q is not a valid ETag.", op.IfMatch)
		}
	}
	hasIfMatch := op.IfMatch != ""
	switch method {
	case http.MethodDelete:
		if !hasIfMatch {
			return nil, azerr.MissingHeader("If-Match")
		}
		op.Kind = table.OpDelete
		return op, nil
	case http.MethodPut:
		op.Kind = table.OpInsertOrReplace
		if hasIfMatch {
			op.Kind = table.OpUpdate
		}
	case "MERGE", http.MethodPatch:
		op.Kind = table.OpInsertOrMerge
		if hasIfMatch {
			op.Kind = table.OpMerge
		}
	default:
		return nil, azerr.New(azerr.MethodNotAllowed)
	}
	var be bodyEntity
	err := body(func(b []byte) error {
		var err error
		be, err = decodeEntity(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	if (be.HasPartitionKey && be.PartitionKey != res.pk) || (be.HasRowKey && be.RowKey != res.rk) {
		return nil, azerr.Newf(azerr.InvalidInput, "The PartitionKey and RowKey in the body must match the request URL.")
	}
	op.Props = be.Props
	return op, nil
}

// Query Entities by keys (point query).
func (h *handler) getEntity(rq *req) error {
	level, err := h.metadataLevel(rq.r)
	if err != nil {
		return err
	}
	sel, err := parseSelect(queryOf(rq.r.URL).Get("$select"))
	if err != nil {
		return err
	}
	if err := h.authorizeOp(rq); err != nil {
		return err
	}
	e, err := h.svc.GetEntity(rq.r.Context(), rq.info.Account, rq.res.table, rq.res.pk, rq.res.rk)
	if err != nil {
		return err
	}
	ew := &entityWriter{level: level, baseURL: h.d.BaseURL(rq.info.Account), account: rq.info.Account, table: rq.res.table, selected: sel}
	rq.w.Header().Set("ETag", e.ETag())
	setJSONHeaders(rq.w, level)
	rq.w.WriteHeader(http.StatusOK)
	rq.w.Write(ew.appendEntity(nil, e, true))
	return nil
}

// Query Entities.
func (h *handler) queryEntities(rq *req) error {
	level, sel, query, err := h.entityQuery(rq)
	if err != nil {
		return err
	}
	qb, _ := h.pages.Get().(*queryBuf)
	if qb == nil {
		qb = new(queryBuf)
	}
	defer qb.release(&h.pages)
	pw := &qb.pw
	*pw = pageWriter{rq: rq, level: level, base: h.d.BaseURL(rq.info.Account), page: &qb.page, b: qb.out[:0], first: true}
	qb.ew = entityWriter{level: level, baseURL: pw.base, account: rq.info.Account, table: rq.res.table, selected: sel, scratch: qb.ew.scratch}
	pw.ew = &qb.ew
	streamed := false
	err = h.svc.QueryRows(rq.r.Context(), rq.info.Account, rq.res.table, query, pw.page, holdPage, func(_ *table.RowPage, rows func(func(table.Row) error) error) error {
		streamed = true
		pw.start(streamAt + streamAt/2)
		return rows(pw.row)
	})
	switch {
	case errors.Is(err, errClientGone):
		return nil
	case err != nil && pw.streaming:
		// The status is sent: cut the response short, so that the client
		// sees a broken body rather than a well-formed partial page.
		panic(http.ErrAbortHandler)
	case err != nil:
		rq.w.Header().Del("x-ms-continuation-NextPartitionKey")
		rq.w.Header().Del("x-ms-continuation-NextRowKey")
		return err
	}
	if !streamed {
		page := pw.page
		pw.start(min(2*page.Size()+160*page.Len()+256, streamAt+streamAt/2))
		for i := range page.Len() {
			if pw.row(page.Row(i)) != nil {
				return nil
			}
		}
	}
	pw.finish()
	qb.out = pw.b
	return nil
}

// entityQuery decodes Query Entities' request: the metadata level, $select,
// and the query ($top, $filter, the continuation, and the key range a SAS
// allows, after authorization).
func (h *handler) entityQuery(rq *req) (metadata, []string, table.Query, error) {
	var query table.Query
	level, err := metadataLevelOf(rq.r, rq.q)
	if err != nil {
		return level, nil, query, err
	}
	sel, err := parseSelect(rq.q.Get("$select"))
	if err != nil {
		return level, nil, query, err
	}
	if query.Top, err = parseTop(rq.q); err != nil {
		return level, nil, query, err
	}
	if query.Filter, err = parseFilter(rq.q.Get("$filter")); err != nil {
		return level, nil, query, err
	}
	// An address with one key is a filter on it.
	if rq.res.partial {
		return level, nil, query, azerr.Newf(azerr.InvalidInput, "Both PartitionKey and RowKey must be specified.")
	}
	if v := rq.q.Get("NextPartitionKey"); v != "" {
		if query.NextPartitionKey, err = decodeToken("NextPartitionKey", v); err != nil {
			return level, nil, query, err
		}
		query.Continue = true
		if v := rq.q.Get("NextRowKey"); v != "" {
			if query.NextRowKey, err = decodeToken("NextRowKey", v); err != nil {
				return level, nil, query, err
			}
		}
	}
	// Under a SAS with a key range the query sees only that range, whatever
	// its filter or continuation asks for.
	if err := h.authorizeOp(rq); err != nil {
		return level, nil, query, err
	}
	query.Range = table.KeyRange(auth.TableKeyRange(rq.info.Identity))
	return level, sel, query, nil
}

// pageWriter renders one Query Entities page. A page is rendered into b
// and sent with a Content-Length when it is small; past streamAt bytes the
// response is sent as it is rendered, streamAt at a time, so a page of
// large entities (up to 1,000 of up to 1 MiB each) never sits in memory
// rendered as well as stored. And a page whose records come to more than
// holdPage bytes is not held at all: its rows are rendered as the engine
// hands them over.
type pageWriter struct {
	rq        *req
	level     metadata
	base      string
	page      *table.RowPage
	ew        *entityWriter
	b         []byte
	streaming bool // the status is sent
	gone      bool // the client went away: render no more
	first     bool // no row rendered yet
}

// start sets the response headers and opens the body, with room for
// capacity bytes.
func (pw *pageWriter) start(capacity int) {
	if cap(pw.b) < capacity {
		pw.b = make([]byte, 0, capacity)
	}
	hdr := pw.rq.w.Header()
	if pw.page.More {
		hdr.Set("x-ms-continuation-NextPartitionKey", encodeToken(pw.page.NextPartitionKey))
		hdr.Set("x-ms-continuation-NextRowKey", encodeToken(pw.page.NextRowKey))
	}
	setJSONHeaders(pw.rq.w, pw.level)
	pw.b = append(pw.b, '{')
	if pw.level != noMetadata {
		pw.b = append(pw.b, `"odata.metadata":`...)
		ew := pw.ew
		ew.scratch = append(append(append(ew.scratch[:0], pw.base...), "/$metadata#"...), pw.rq.res.table...)
		pw.b = jsonString(pw.b, ew.scratch)
		pw.b = append(pw.b, ',')
	}
	pw.b = append(pw.b, `"value":[`...)
}

// row renders one entity, sending what is rendered once it reaches
// streamAt bytes.
func (pw *pageWriter) row(r table.Row) error {
	if !pw.first {
		pw.b = append(pw.b, ',')
	}
	pw.first = false
	pw.b = pw.ew.appendRow(pw.b, r)
	if len(pw.b) >= streamAt {
		if pw.flush(); pw.gone {
			return errClientGone
		}
	}
	return nil
}

// flush sends what is rendered, the status first if it is not sent yet.
func (pw *pageWriter) flush() {
	if !pw.streaming {
		pw.streaming = true
		pw.rq.w.WriteHeader(http.StatusOK)
	}
	if _, err := pw.rq.w.Write(pw.b); err != nil {
		pw.gone = true
	}
	pw.b = pw.b[:0]
}

// finish closes the body and sends the rest, or the whole page with its
// length when nothing was streamed.
func (pw *pageWriter) finish() {
	pw.b = append(pw.b, "]}"...)
	if pw.streaming {
		pw.flush()
		return
	}
	pw.rq.w.Header()["Content-Length"] = []string{strconv.Itoa(len(pw.b))}
	pw.rq.w.WriteHeader(http.StatusOK)
	pw.rq.w.Write(pw.b)
}

// holdPage is the size of a page's records past which Query Entities
// renders its rows as the engine hands them over instead of holding the
// page (table.Service.QueryRows).
const holdPage = 1 << 20

// errClientGone ends the rendering of a page whose client went away.
var errClientGone = errors.New("the client went away")

// streamAt is the size past which a Query Entities response is streamed.
const streamAt = 256 << 10

// queryBuf is the reusable state of one Query Entities response: the page
// of stored records, the rendered body and the writer's scratch space.
type queryBuf struct {
	page table.RowPage
	out  []byte
	ew   entityWriter
	pw   pageWriter
}

// release returns qb to the pool unless it grew too large to keep.
func (qb *queryBuf) release(p *sync.Pool) {
	if cap(qb.out) > maxPooledPage {
		return
	}
	qb.page.Reset()
	qb.ew = entityWriter{scratch: qb.ew.scratch[:0]}
	qb.pw = pageWriter{}
	p.Put(qb)
}

// queryOf parses the query string splitting on '&' only: OData values
// such as $format=application/json;odata=nometadata may carry a literal
// ';', which net/url would drop.
func queryOf(u *url.URL) url.Values {
	if u.RawQuery == "" {
		// Get works on the nil map; nothing adds to a parsed query.
		return nil
	}
	out := url.Values{}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		out.Add(k, v)
	}
	return out
}
