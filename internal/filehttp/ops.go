package filehttp

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/file"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// op is one File operation: the REST operation's name (for the access
// log), what the caller must be granted, and the handler that does the
// rest. The dispatcher names the operation and authorizes the caller
// before serve runs.
type op struct {
	name   string
	access auth.Access
	serve  func(*handler, *req) error
}

// Levels of a File request's path.
const (
	serviceLevel = iota // the account
	shareLevel          // /share?restype=share
	dirLevel            // /share[/path]?restype=directory
	rootLevel           // /share without restype: only the handle operations
	fileLevel           // /share/path
)

// Access rules shared by several operations.
var (
	read        = auth.Access{Resource: auth.ResObject, Perms: "r"}
	write       = auth.Access{Resource: auth.ResObject, Perms: "w"}
	create      = auth.Access{Resource: auth.ResObject, Perms: "cw"}
	remove      = auth.Access{Resource: auth.ResObject, Perms: "d"}
	list        = auth.Access{Resource: auth.ResObject, Perms: "l"}
	shareCreate = auth.Access{Resource: auth.ResContainer, Perms: "c", ServiceSASDenied: true}
	shareWrite  = auth.Access{Resource: auth.ResContainer, Perms: "w", ServiceSASDenied: true}
	// A service SAS reaches the files and directories of its share, never
	// the share itself: its properties, metadata, ACL, stats, lease or
	// snapshots need an account SAS or a key (Azure: 403
	// AuthorizationFailure).
	shareRead    = auth.Access{Resource: auth.ResContainer, Perms: "r", ServiceSASDenied: true}
	shareACL     = auth.Access{Resource: auth.ResContainer, ServiceSASDenied: true}
	listHandles  = op{"ListHandles", list, (*handler).listHandles}
	closeHandles = op{"ForceCloseHandles", write, (*handler).forceCloseHandles}
)

// on is one row of the operation table.
var on = httpx.On[op]

// routes is every File operation.
var routes = httpx.NewRouter([]httpx.Route[op]{
	on(serviceLevel, "*", "list", "GET", nil, op{"ListShares", auth.Access{Resource: auth.ResService, Perms: "l", ServiceSASDenied: true}, (*handler).listShares}),
	on(serviceLevel, "service", "properties", "GET HEAD", nil, op{"GetFileServiceProperties", auth.Access{Resource: auth.ResService, Perms: "r", ServiceSASDenied: true}, (*handler).getServiceProps}),
	on(serviceLevel, "service", "properties", "PUT", nil, op{"SetFileServiceProperties", auth.Access{Resource: auth.ResService, Perms: "w", ServiceSASDenied: true}, (*handler).setServiceProps}),
	// The handler checks the caller itself (a bearer token only).
	on(serviceLevel, "service", "userdelegationkey", "POST", nil, op{"GetUserDelegationKey", auth.Access{Resource: auth.ResService}, (*handler).getUserDelegationKey}),

	on(shareLevel, "*", "", "PUT", nil, op{"CreateShare", shareCreate, (*handler).createShare}),
	on(shareLevel, "*", "", "GET HEAD", nil, op{"GetShareProperties", shareRead, (*handler).getShare}),
	on(shareLevel, "*", "metadata", "GET HEAD", nil, op{"GetShareMetadata", shareRead, (*handler).getShare}),
	on(shareLevel, "*", "", "DELETE", nil, op{"DeleteShare", auth.Access{Resource: auth.ResContainer, Perms: "d", ServiceSASDenied: true}, (*handler).deleteShare}),
	on(shareLevel, "*", "properties", "PUT", nil, op{"SetShareProperties", shareWrite, (*handler).setShareProps}),
	on(shareLevel, "*", "metadata", "PUT", nil, op{"SetShareMetadata", shareWrite, (*handler).setShareMetadata}),
	on(shareLevel, "*", "snapshot", "PUT", nil, op{"SnapshotShare", shareCreate, (*handler).snapshotShare}),
	on(shareLevel, "*", "acl", "GET HEAD", nil, op{"GetShareACL", shareACL, (*handler).getShareACL}),
	on(shareLevel, "*", "acl", "PUT", nil, op{"SetShareACL", shareACL, (*handler).setShareACL}),
	on(shareLevel, "*", "stats", "GET HEAD", nil, op{"GetShareStats", shareRead, (*handler).shareStats}),
	on(shareLevel, "*", "lease", "PUT", nil, op{"LeaseShare", shareWrite, (*handler).leaseShare}),
	on(shareLevel, "*", "filepermission", "PUT", nil, op{"CreatePermission", shareCreate, (*handler).createPermission}),
	on(shareLevel, "*", "filepermission", "GET HEAD", nil, op{"GetPermission", shareRead, (*handler).getPermission}),
	on(shareLevel, "*", "undelete", "PUT", nil, op{"RestoreShare", shareCreate, (*handler).restoreShare}),

	on(dirLevel, "*", "", "PUT", nil, op{"CreateDirectory", create, (*handler).create}),
	on(dirLevel, "*", "", "GET HEAD", nil, op{"GetDirectoryProperties", read, (*handler).getProps}),
	on(dirLevel, "*", "metadata", "GET HEAD", nil, op{"GetDirectoryProperties", read, (*handler).getProps}),
	on(dirLevel, "*", "", "DELETE", nil, op{"DeleteDirectory", remove, (*handler).delete}),
	on(dirLevel, "*", "properties", "PUT", nil, op{"SetDirectoryProperties", write, (*handler).setProps}),
	on(dirLevel, "*", "metadata", "PUT", nil, op{"SetDirectoryMetadata", write, (*handler).setMetadata}),
	on(dirLevel, "*", "list", "GET", nil, op{"ListFilesAndDirectories", list, (*handler).list}),
	on(dirLevel, "*", "rename", "PUT", nil, op{"RenameDirectory", write, (*handler).rename}),
	on(dirLevel, "*", "listhandles", "GET", nil, listHandles),
	on(dirLevel, "*", "forceclosehandles", "PUT", nil, closeHandles),

	on(rootLevel, "*", "listhandles", "GET", nil, listHandles),
	on(rootLevel, "*", "forceclosehandles", "PUT", nil, closeHandles),

	on(fileLevel, "*", "", "PUT", copySource, op{"CopyFile", create, (*handler).copyFile}),
	on(fileLevel, "*", "", "PUT", nil, op{"CreateFile", create, (*handler).create}),
	on(fileLevel, "*", "", "GET", nil, op{"GetFile", read, (*handler).getFile}),
	on(fileLevel, "*", "", "HEAD", nil, op{"GetFileProperties", read, (*handler).getFile}),
	on(fileLevel, "*", "", "DELETE", nil, op{"DeleteFile", remove, (*handler).delete}),
	on(fileLevel, "*", "properties", "PUT", nil, op{"SetFileProperties", write, (*handler).setProps}),
	on(fileLevel, "*", "metadata", "GET HEAD", nil, op{"GetFileMetadata", read, (*handler).getProps}),
	on(fileLevel, "*", "metadata", "PUT", nil, op{"SetFileMetadata", write, (*handler).setMetadata}),
	on(fileLevel, "*", "range", "PUT", copySource, op{"PutRangeFromURL", write, (*handler).putRange}),
	on(fileLevel, "*", "range", "PUT", nil, op{"PutRange", write, (*handler).putRange}),
	on(fileLevel, "*", "rangelist", "GET", nil, op{"ListRanges", read, (*handler).listRanges}),
	on(fileLevel, "*", "copy", "PUT", nil, op{"AbortCopyFile", write, (*handler).abortCopy}),
	on(fileLevel, "*", "lease", "PUT", nil, op{"LeaseFile", write, (*handler).leaseFile}),
	on(fileLevel, "*", "rename", "PUT", nil, op{"RenameFile", write, (*handler).rename}),
	on(fileLevel, "*", "listhandles", "GET", nil, listHandles),
	on(fileLevel, "*", "forceclosehandles", "PUT", nil, closeHandles),
})

func copySource(r *http.Request) bool { return r.Header.Get("X-Ms-Copy-Source") != "" }

// route runs the operation the request asks for: it names it, checks the
// caller's access and calls its handler.
func (h *handler) route(rq *req) error {
	m := rq.r.Method
	comp := rq.q.Get("comp")
	restype := rq.q.Get("restype")
	get := m == http.MethodGet || m == http.MethodHead
	if err := rq.checkConditions(get && comp == "" && restype == "" && rq.path != ""); err != nil {
		return err
	}
	lv := fileLevel
	switch {
	case rq.share == "":
		lv = serviceLevel
	case rq.path == "" && restype == "share":
		lv = shareLevel
	case restype == "directory":
		lv = dirLevel
	case rq.path == "":
		lv = rootLevel
	}
	if lv != serviceLevel && !file.ValidShareName(rq.share) {
		return azerr.New(azerr.InvalidResourceName)
	}
	o, _ := routes.Find(rq.r, m, lv, restype, comp)
	if o == nil {
		if lv == rootLevel && restype == "" && get {
			return azerr.New(azerr.InvalidQueryParameterValue).WithDetail("QueryParameterName", "restype")
		}
		return badRoute(m, comp)
	}
	if err := rq.info.SetOperation(rq.r.Context(), o.name); err != nil {
		return err
	}
	rq.dir = lv == dirLevel
	if err := h.authorize(rq, o.access); err != nil {
		return err
	}
	return o.serve(h, rq)
}
