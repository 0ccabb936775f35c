package dfshttp

import (
	"regexp"
	"testing"
)

const softDeleteOn = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` +
	`<DeleteRetentionPolicy><Enabled>true</Enabled><Days>3</Days></DeleteRetentionPolicy></StorageServiceProperties>`

// The wire of path soft delete: Path - Delete answers x-ms-deletion-id;
// List Blobs showonly=deleted lists the entry with Deleted, DeletionId,
// DeletedTime and RemainingRetentionDays; Undelete Blob with
// x-ms-undelete-source answers x-ms-resource-type; a source without a
// deletion id is 400 InvalidHeaderValue; showonly on an account without
// a namespace, or with another value, is 400 InvalidQueryParameterValue.
func TestPathSoftDeleteWire(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/?restype=service&comp=properties", nil, softDeleteOn), 202, "")
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/d/f?resource=file", nil, ""), 201, "")
	w := send(t, h, "DELETE", acct+"/fsys/d?recursive=true", nil, "")
	want(t, w, 200, "")
	id := w.Header().Get("x-ms-deletion-id")
	if !regexp.MustCompile(`^\d{18}$`).MatchString(id) {
		t.Fatalf("x-ms-deletion-id %q", id)
	}
	w = send(t, h, "GET", acct+"/fsys?restype=container&comp=list&showonly=deleted", nil, "")
	want(t, w, 200, "")
	re := regexp.MustCompile(`<Blobs><Blob><Name>d</Name><Deleted>true</Deleted><DeletionId>` + id +
		`</DeletionId><Properties><Creation-Time>[^<]+</Creation-Time>.*<DeletedTime>[^<]+</DeletedTime><RemainingRetentionDays>3</RemainingRetentionDays>.*</Blob></Blobs>`)
	if !re.MatchString(w.Body.String()) {
		t.Fatalf("listing: %s", w.Body.String())
	}
	want(t, send(t, h, "PUT", acct+"/fsys/d?comp=undelete", map[string]string{"x-ms-undelete-source": "d?deletionid="}, ""), 400, "InvalidHeaderValue")
	want(t, send(t, h, "GET", acct+"/fsys?restype=container&comp=list&showonly=bogus", nil, ""), 400, "InvalidQueryParameterValue")
	w = send(t, h, "PUT", acct+"/fsys/d?comp=undelete", map[string]string{"x-ms-undelete-source": "d?deletionid=" + id}, "")
	want(t, w, 200, "")
	if got := w.Header().Get("x-ms-resource-type"); got != "directory" {
		t.Fatalf("x-ms-resource-type %q", got)
	}
	if got := resourceType(t, h, "d/f"); got != "file" {
		t.Fatalf("d/f is %q", got)
	}

	plain := newPortWith(func(string) bool { return false })
	want(t, send(t, plain, "PUT", acct+"/plainc?restype=container", nil, ""), 201, "")
	want(t, send(t, plain, "GET", acct+"/plainc?restype=container&comp=list&showonly=deleted", nil, ""), 400, "InvalidQueryParameterValue")
}
