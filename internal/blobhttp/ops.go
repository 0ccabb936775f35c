package blobhttp

import (
	"net/http"
	"strings"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/httpx"
)

// op is one Blob operation: the REST operation's name (for the access log),
// what the caller must be granted, and the handler that does the rest. The
// dispatcher names the operation and authorizes the caller before serve
// runs, so handlers start at decoding their request.
type op struct {
	name   string
	access auth.Access
	check  check
	serve  func(*handler, *req) error
}

// check is how an operation's access is checked.
type check uint8

const (
	// checkAccess: the caller must be granted op.access.
	checkAccess check = iota
	// checkPublic: op.access, or an anonymous caller let in by the
	// container's public access level (container reads need "container",
	// blob reads "blob" or "container").
	checkPublic
	// checkCreate: write permission, or create permission alone for a
	// blob that does not exist yet (rq.createOnly asks the domain to check
	// that in its transaction).
	checkCreate
	// checkSelf: the handler checks the caller itself.
	checkSelf
)

// Levels of a Blob request's path.
const (
	serviceLevel = iota
	containerLevel
	blobLevel
)

// Access rules shared by several operations.
var (
	serviceRead    = auth.Access{Resource: auth.ResService, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}
	serviceWrite   = auth.Access{Resource: auth.ResService, Perms: "w", AccountPerms: "w", ServiceSASDenied: true}
	containerRead  = auth.Access{Resource: auth.ResContainer, Perms: "r", AccountPerms: "r", ServiceSASDenied: true}
	containerWrite = auth.Access{Resource: auth.ResContainer, Perms: "w", AccountPerms: "w", ServiceSASDenied: true}
	blobRead       = auth.Access{Resource: auth.ResObject, Perms: "r"}
	blobWrite      = auth.Access{Resource: auth.ResObject, Perms: "w"}
	blobAddWrite   = auth.Access{Resource: auth.ResObject, Perms: "cw"}
	// blobImmutable is the set-immutability permission (i) of the
	// immutability policy and legal hold operations.
	blobImmutable = auth.Access{Resource: auth.ResObject, Perms: "i"}
	accountInfo   = op{"GetAccountInfo", auth.Access{Resource: auth.ResService, Perms: "racwdl", AccountPerms: "racwdlup"}, checkAccess, (*handler).accountInfo}
)

// on is one row of the operation table.
var on = httpx.On[op]

// routes is every Blob operation.
var routes = httpx.NewRouter([]httpx.Route[op]{
	on(serviceLevel, "account", "properties", "GET HEAD", nil, accountInfo),
	on(serviceLevel, "*", "list", "GET", nil, op{"ListContainers", auth.Access{Resource: auth.ResService, Perms: "l", AccountPerms: "l", ServiceSASDenied: true}, checkAccess, (*handler).listContainers}),
	on(serviceLevel, "service", "properties", "GET", nil, op{"GetBlobServiceProperties", serviceRead, checkAccess, (*handler).getServiceProps}),
	on(serviceLevel, "service", "properties", "PUT", nil, op{"SetBlobServiceProperties", serviceWrite, checkAccess, (*handler).setServiceProps}),
	on(serviceLevel, "*", "blobs", "GET", nil, op{"FindBlobsByTags", auth.Access{Resource: auth.ResService, Perms: "f", AccountPerms: "f"}, checkAccess, (*handler).findBlobs}),
	on(serviceLevel, "service", "stats", "GET", nil, op{"GetServiceStats", auth.Access{Resource: auth.ResService, Perms: "r", ServiceSASDenied: true}, checkAccess, (*handler).serviceStats}),
	on(serviceLevel, "service", "userdelegationkey", "POST", nil, op{"GetUserDelegationKey", auth.Access{}, checkSelf, (*handler).getUserDelegationKey}),
	on(serviceLevel, "*", "batch", "POST", nil, op{"BlobBatch", auth.Access{Resource: auth.ResService, Perms: "dw", AccountPerms: "dw"}, checkAccess, (*handler).batch}),

	on(containerLevel, "account", "properties", "GET HEAD", nil, accountInfo),
	on(containerLevel, "container", "", "PUT", nil, op{"CreateContainer", auth.Access{Resource: auth.ResContainer, Perms: "c", AccountPerms: "cw", ServiceSASDenied: true}, checkAccess, (*handler).createContainer}),
	on(containerLevel, "container", "", "DELETE", nil, op{"DeleteContainer", auth.Access{Resource: auth.ResContainer, Perms: "d", AccountPerms: "d", ServiceSASDenied: true}, checkAccess, (*handler).deleteContainer}),
	// Container properties and metadata are out of a service SAS's reach
	// (its read permission covers the blobs in the container).
	on(containerLevel, "container", "", "GET HEAD", nil, op{"GetContainerProperties", containerRead, checkPublic, (*handler).getContainerProps}),
	on(containerLevel, "container", "metadata", "GET HEAD", nil, op{"GetContainerMetadata", containerRead, checkAccess, (*handler).getContainerProps}),
	on(containerLevel, "container", "metadata", "PUT", nil, op{"SetContainerMetadata", containerWrite, checkAccess, (*handler).setContainerMetadata}),
	on(containerLevel, "container", "acl", "GET HEAD", nil, op{"GetContainerACL", containerRead, checkAccess, (*handler).getContainerACL}),
	on(containerLevel, "container", "acl", "PUT", nil, op{"SetContainerACL", containerWrite, checkAccess, (*handler).setContainerACL}),
	on(containerLevel, "container", "undelete", "PUT", nil, op{"RestoreContainer", auth.Access{Resource: auth.ResContainer, Perms: "c", AccountPerms: "cw", ServiceSASDenied: true}, checkAccess, (*handler).restoreContainer}),
	on(containerLevel, "container", "lease", "PUT", nil, op{"LeaseContainer", containerWrite, checkAccess, (*handler).leaseContainer}),
	on(containerLevel, "container", "list", "GET", nil, op{"ListBlobs", auth.Access{Resource: auth.ResContainer, Perms: "l", AccountPerms: "l"}, checkPublic, (*handler).listBlobs}),
	on(containerLevel, "container", "blobs", "GET", nil, op{"FindBlobsByTags", auth.Access{Resource: auth.ResContainer, Perms: "f", AccountPerms: "f"}, checkAccess, (*handler).findBlobs}),
	on(containerLevel, "container", "batch", "POST", nil, op{"BlobBatch", auth.Access{Resource: auth.ResContainer, Perms: "dw", AccountPerms: "dw"}, checkAccess, (*handler).batch}),

	on(blobLevel, "account", "properties", "GET HEAD", nil, accountInfo),
	on(blobLevel, "*", "", "PUT", fromURL, op{"PutBlobFromURL", auth.Access{}, checkCreate, (*handler).putBlobFromURL}),
	on(blobLevel, "*", "", "PUT", syncCopy, op{"CopyBlobFromURL", auth.Access{}, checkCreate, (*handler).copyBlob}),
	on(blobLevel, "*", "", "PUT", copySource, op{"CopyBlob", auth.Access{}, checkCreate, (*handler).copyBlob}),
	on(blobLevel, "*", "", "PUT", nil, op{"PutBlob", auth.Access{}, checkCreate, (*handler).putBlob}),
	on(blobLevel, "*", "", "GET", nil, op{"GetBlob", blobRead, checkPublic, (*handler).getBlob}),
	on(blobLevel, "*", "", "HEAD", nil, op{"GetBlobProperties", blobRead, checkPublic, (*handler).getBlob}),
	on(blobLevel, "*", "", "DELETE", nil, op{"DeleteBlob", auth.Access{Resource: auth.ResObject, Perms: "d"}, checkAccess, (*handler).deleteBlob}),
	on(blobLevel, "*", "properties", "PUT", nil, op{"SetBlobProperties", blobWrite, checkAccess, (*handler).setBlobProperties}),
	on(blobLevel, "*", "metadata", "GET HEAD", nil, op{"GetBlobMetadata", blobRead, checkPublic, (*handler).getBlobMetadata}),
	on(blobLevel, "*", "metadata", "PUT", nil, op{"SetBlobMetadata", blobWrite, checkAccess, (*handler).setBlobMetadata}),
	on(blobLevel, "*", "snapshot", "PUT", nil, op{"SnapshotBlob", blobAddWrite, checkAccess, (*handler).snapshotBlob}),
	on(blobLevel, "*", "lease", "PUT", nil, op{"LeaseBlob", blobWrite, checkAccess, (*handler).leaseBlob}),
	on(blobLevel, "*", "block", "PUT", copySource, op{"PutBlockFromURL", blobAddWrite, checkAccess, (*handler).putBlockFromURL}),
	on(blobLevel, "*", "block", "PUT", nil, op{"PutBlock", blobAddWrite, checkAccess, (*handler).putBlock}),
	on(blobLevel, "*", "blocklist", "PUT", nil, op{"PutBlockList", auth.Access{}, checkCreate, (*handler).putBlockList}),
	on(blobLevel, "*", "blocklist", "GET", nil, op{"GetBlockList", blobRead, checkPublic, (*handler).getBlockList}),
	// Put Page and Append Block name themselves ...FromURL when they take
	// their bytes from a source blob.
	on(blobLevel, "*", "page", "PUT", nil, op{"PutPage", blobWrite, checkAccess, (*handler).putPage}),
	on(blobLevel, "*", "pagelist", "GET", nil, op{"GetPageRanges", blobRead, checkPublic, (*handler).getPageRanges}),
	on(blobLevel, "*", "appendblock", "PUT", nil, op{"AppendBlock", auth.Access{Resource: auth.ResObject, Perms: "aw"}, checkAccess, (*handler).appendBlock}),
	on(blobLevel, "*", "seal", "PUT", nil, op{"AppendBlobSeal", blobWrite, checkAccess, (*handler).sealBlob}),
	on(blobLevel, "*", "copy", "PUT", nil, op{"AbortCopyBlob", blobWrite, checkAccess, (*handler).abortCopy}),
	on(blobLevel, "*", "incrementalcopy", "PUT", nil, op{"IncrementalCopyBlob", blobWrite, checkAccess, (*handler).incrementalCopy}),
	on(blobLevel, "*", "tags", "GET", nil, op{"GetBlobTags", auth.Access{Resource: auth.ResObject, Perms: "t"}, checkAccess, (*handler).getTags}),
	on(blobLevel, "*", "tags", "PUT", nil, op{"SetBlobTags", auth.Access{Resource: auth.ResObject, Perms: "t"}, checkAccess, (*handler).setTags}),
	on(blobLevel, "*", "undelete", "PUT", nil, op{"UndeleteBlob", blobWrite, checkAccess, (*handler).undeleteBlob}),
	on(blobLevel, "*", "tier", "PUT", nil, op{"SetBlobTier", blobWrite, checkAccess, (*handler).setTier}),
	on(blobLevel, "*", "immutabilityPolicies", "PUT", nil, op{"SetBlobImmutabilityPolicy", blobImmutable, checkAccess, (*handler).setImmutabilityPolicy}),
	on(blobLevel, "*", "immutabilityPolicies", "DELETE", nil, op{"DeleteBlobImmutabilityPolicy", blobImmutable, checkAccess, (*handler).deleteImmutabilityPolicy}),
	on(blobLevel, "*", "legalhold", "PUT", nil, op{"SetBlobLegalHold", blobImmutable, checkAccess, (*handler).setLegalHold}),
	on(blobLevel, "*", "expiry", "PUT", nil, op{"SetBlobExpiry", blobWrite, checkAccess, (*handler).setExpiry}),
})

func copySource(r *http.Request) bool { return r.Header.Get("X-Ms-Copy-Source") != "" }

// fromURL is Put Blob From URL: a copy source and a blob type.
func fromURL(r *http.Request) bool { return copySource(r) && r.Header.Get("X-Ms-Blob-Type") != "" }

// syncCopy is Copy Blob From URL: a copy that must finish before the answer.
func syncCopy(r *http.Request) bool {
	return copySource(r) && strings.EqualFold(r.Header.Get("X-Ms-Requires-Sync"), "true")
}

// route runs the operation the request asks for: it names it, checks the
// caller's access and calls its handler.
func (h *handler) route(rq *req, hasBlob bool) error {
	m := rq.r.Method
	comp := rq.q.Get("comp")
	restype := rq.q.Get("restype")
	lv := serviceLevel
	switch {
	case hasBlob:
		lv = blobLevel
	case rq.container != "":
		lv = containerLevel
	}
	o, _ := routes.Find(rq.r, m, lv, restype, comp)
	if o == nil {
		if lv == containerLevel && restype != "container" && comp == "" && (m == http.MethodGet || m == http.MethodHead) {
			return azerr.New(azerr.InvalidQueryParameterValue).WithDetail("QueryParameterName", "restype")
		}
		if m != http.MethodGet && m != http.MethodHead && m != http.MethodPut && m != http.MethodDelete && m != http.MethodPost {
			return azerr.New(azerr.UnsupportedHttpVerb)
		}
		return azerr.New(azerr.InvalidQueryParameterValue).WithDetail("QueryParameterName", "comp").WithDetail("QueryParameterValue", comp)
	}
	if err := rq.info.SetOperation(rq.r.Context(), o.name); err != nil {
		return err
	}
	if err := inBatchScope(rq, o.name); err != nil {
		return err
	}
	var err error
	switch o.check {
	case checkAccess:
		err = h.authorize(rq, o.access)
	case checkPublic:
		a := o.access
		a.PublicRead = h.publicRead(rq, a.Resource == auth.ResContainer)
		err = h.authorize(rq, a)
	case checkCreate:
		rq.createOnly, err = h.authorizeCreate(rq)
	}
	if err != nil {
		return err
	}
	if err := h.hnsRefused(rq, o.name); err != nil {
		return err
	}
	return o.serve(h, rq)
}
