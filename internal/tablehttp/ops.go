package tablehttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// req bundles what every operation reads.
type req struct {
	w    http.ResponseWriter
	r    *http.Request
	info *httpx.Info
	q    url.Values
	// res is the parsed path (nil for the service and $batch).
	res *resource
	// method is the request's method, or the one X-HTTP-Method asks for.
	method string
	op     *op
}

// op is one Table operation: the REST operation's name (for the access
// log), what the caller must be granted, when that is checked, and the
// handler.
type op struct {
	name   string
	access auth.Access
	check  check
	serve  func(*handler, *req) error
}

// check is when an operation's access is checked.
type check uint8

const (
	// checkFirst: the dispatcher checks op.access before the handler runs.
	checkFirst check = iota
	// checkLate: the handler validates its query first, as Azure does,
	// then calls authorizeOp, which checks op.access.
	checkLate
	// checkSelf: the permissions depend on the body (the table to create,
	// the entity's keys, the kind of write), so the handler checks them
	// once it has decoded it.
	checkSelf
)

// Levels of a Table request's path.
const (
	serviceLevel    = iota // the account
	batchLevel             // $batch
	tablesLevel            // Tables
	namedTableLevel        // Tables('t')
	aclLevel               // t?comp=acl
	entitiesLevel          // t or t()
	partialLevel           // t(PartitionKey='p') or t(RowKey='r'): only a filter
	entityLevel            // t(PartitionKey='p',RowKey='r')
)

var (
	serviceRead = auth.Access{Resource: auth.ResService, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}
	tableList   = auth.Access{Resource: auth.ResContainer, Perms: "r", AccountPerms: "l", ServiceSASDenied: true}
	entityRead  = auth.Access{Resource: auth.ResObject, Perms: "r", AccountPerms: "r"}
	// A SAS with a key range sees only that range, whatever the query's
	// filter or continuation asks for.
	entityQuery = auth.Access{Resource: auth.ResObject, Perms: "r", AccountPerms: "r", KeyRangeApplied: true}
	allMethods  = "GET HEAD PUT POST DELETE MERGE PATCH"
)

// on is one row of the operation table.
var on = httpx.On[op]

// routes is every Table operation. Writes check the permissions their
// decoded body needs: Create Table "a" (account SAS "c"); Insert Entity
// "a"; Update and Merge "u"; Insert Or Replace and Insert Or Merge both
// "a" and "u"; Delete "d"; a batch each of its operations'.
var routes = httpx.NewRouter([]httpx.Route[op]{
	on(serviceLevel, "service", "properties", "GET", nil, op{"GetTableServiceProperties", serviceRead, checkFirst, (*handler).getServiceProperties}),
	on(serviceLevel, "service", "properties", "PUT", nil, op{"SetTableServiceProperties", auth.Access{Resource: auth.ResService, Perms: "w", AccountPerms: "w", ServiceSASDenied: true}, checkFirst, (*handler).setServiceProperties}),
	on(serviceLevel, "service", "stats", allMethods, nil, op{"GetTableServiceStats", serviceRead, checkFirst, (*handler).getServiceStats}),
	on(batchLevel, "*", "*", "POST", nil, op{"EntityGroupTransaction", auth.Access{}, checkSelf, (*handler).batch}),

	on(tablesLevel, "*", "*", "GET", nil, op{"QueryTables", tableList, checkLate, (*handler).queryTables}),
	on(tablesLevel, "*", "*", "POST", nil, op{"CreateTable", auth.Access{}, checkSelf, (*handler).createTable}),
	on(namedTableLevel, "*", "*", "GET", nil, op{"QueryTables", tableList, checkLate, (*handler).getTable}),
	on(namedTableLevel, "*", "*", "DELETE", nil, op{"DeleteTable", auth.Access{Resource: auth.ResContainer, Perms: "d", AccountPerms: "d", ServiceSASDenied: true}, checkFirst, (*handler).deleteTable}),
	on(aclLevel, "*", "*", "GET HEAD", nil, op{"GetTableACL", auth.Access{Resource: auth.ResContainer, Perms: "-", AccountPerms: "r", ServiceSASDenied: true}, checkFirst, (*handler).getACL}),
	on(aclLevel, "*", "*", "PUT", nil, op{"SetTableACL", auth.Access{Resource: auth.ResContainer, Perms: "-", AccountPerms: "w", ServiceSASDenied: true}, checkFirst, (*handler).setACL}),

	on(entitiesLevel, "*", "*", "GET", nil, op{"QueryEntities", entityQuery, checkLate, (*handler).queryEntities}),
	on(entitiesLevel, "*", "*", "POST", nil, op{"InsertEntity", auth.Access{}, checkSelf, (*handler).insertEntity}),
	on(partialLevel, "*", "*", "GET", nil, op{"QueryEntities", entityQuery, checkLate, (*handler).queryEntities}),
	on(entityLevel, "*", "*", "GET", nil, op{"QueryEntity", entityRead, checkLate, (*handler).getEntity}),
	// The write's name (UpdateEntity, InsertOrMergeEntity, ...) depends on
	// its method and If-Match; the handler sets it once it has decoded
	// the request.
	on(entityLevel, "*", "*", "PUT MERGE PATCH DELETE", nil, op{"", auth.Access{}, checkSelf, (*handler).writeEntity}),
})

// route runs the operation the request asks for: it names it, checks the
// caller's access when that comes first, and calls its handler.
func (h *handler) route(w http.ResponseWriter, r *http.Request, info *httpx.Info) error {
	rq := &req{w: w, r: r, info: info, q: queryOf(r.URL), method: r.Method}
	if xm := r.Header.Values("X-HTTP-Method"); len(xm) > 0 {
		switch {
		case len(xm) > 1:
			return azerr.New(azerr.XMethodIncorrectCount)
		case r.Method != http.MethodPost:
			return azerr.New(azerr.XMethodNotUsingPost)
		}
		switch strings.ToUpper(xm[0]) {
		case "MERGE", "PUT", "DELETE", "PATCH":
			rq.method = strings.ToUpper(xm[0])
		default:
			return azerr.New(azerr.XMethodIncorrectValue)
		}
	}
	lv, err := rq.level()
	if err != nil {
		return err
	}
	comp := rq.q.Get("comp")
	o, otherVerb := routes.Find(r, rq.method, lv, rq.q.Get("restype"), comp)
	if o == nil {
		switch lv {
		case serviceLevel:
			if otherVerb {
				return azerr.New(azerr.UnsupportedHttpVerb)
			}
			return azerr.New(azerr.InvalidUri)
		case partialLevel:
			return azerr.Newf(azerr.InvalidInput, "Both PartitionKey and RowKey must be specified.")
		case entitiesLevel, entityLevel:
			return azerr.New(azerr.MethodNotAllowed)
		}
		return azerr.New(azerr.UnsupportedHttpVerb)
	}
	rq.op = o
	if o.name != "" {
		if err := info.SetOperation(r.Context(), o.name); err != nil {
			return err
		}
	}
	if o.check == checkFirst {
		if err := h.authorizeOp(rq); err != nil {
			return err
		}
	}
	return o.serve(h, rq)
}

// level parses the path into rq.res and says which level it addresses.
func (rq *req) level() (int, error) {
	p := rq.info.Path
	switch p {
	case "", "/":
		return serviceLevel, nil
	case "$batch":
		return batchLevel, nil
	}
	res, err := parseResource(p)
	if err != nil {
		return 0, err
	}
	rq.res = res
	switch comp := rq.q.Get("comp"); {
	case res.tables && res.tableName == "":
		return tablesLevel, nil
	case res.tables:
		return namedTableLevel, nil
	case comp == "acl":
		return aclLevel, nil
	case comp != "":
		return 0, azerr.InvalidQuery("comp", comp, "")
	case res.partial:
		return partialLevel, nil
	case res.hasKeys:
		return entityLevel, nil
	}
	return entitiesLevel, nil
}

// authorizeOp checks the access of the request's operation for the table
// (and entity) its path names.
func (h *handler) authorizeOp(rq *req) error {
	a := rq.op.access
	switch res := rq.res; {
	case res == nil:
	case res.tables:
		a.Container = res.tableName
	default:
		a.Container = res.table
		if res.hasKeys && !res.partial {
			a.PartitionKey, a.RowKey = &res.pk, &res.rk
		}
	}
	return h.authorize(rq.r, rq.info, a)
}
