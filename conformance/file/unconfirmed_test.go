package file_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// Choices the protocol digest marks UNCONFIRMED, each pinned by a test
// named after it.

// TestUnconfirmedSMBHeadersRequiredBefore20210608: versions 2019-02-02 up
// to (not including) 2021-06-08 require x-ms-file-attributes, the creation
// and last-write times and a permission (or key) on Create File/Directory
// and Set Properties; from 2021-06-08 they default.
func TestUnconfirmedSMBHeadersRequiredBefore20210608(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		for v, want := range map[string]int{"2019-02-02": 400, "2021-04-10": 400, "2021-06-08": 201, "2018-11-09": 201} {
			resp := raw(t, tg, http.MethodPut, e.name+"/d"+strings.ReplaceAll(v, "-", "")+"?restype=directory", map[string]string{"x-ms-version": v}, nil)
			if resp.StatusCode != want {
				t.Errorf("version %s: %d, want %d", v, resp.StatusCode, want)
			}
		}
	})
}

// TestUnconfirmedShareSizeLimitReachedIs413: a write past the quota is
// 413 ShareSizeLimitReached (the code azfile knows; the status is not
// documented) and stores nothing.
func TestUnconfirmedShareSizeLimitReachedIs413(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"?restype=share&comp=properties", map[string]string{"x-ms-share-quota": "1"}, nil), 200, "")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1073741825"}, nil), 413, "ShareSizeLimitReached")
		wantRaw(t, raw(t, tg, http.MethodHead, e.name+"/f", nil, nil), 404, "ResourceNotFound")
	})
}

// TestUnconfirmedPutRangePastEndIs416: a Put Range ending past the file's
// size is 416 InvalidRange.
func TestUnconfirmedPutRangePastEndIs416(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "10"}, nil), 201, "")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f?comp=range", map[string]string{"x-ms-range": "bytes=8-11", "x-ms-write": "update"}, []byte("abcd")), 416, "InvalidRange")
	})
}

// TestUnconfirmedReadOnlyAttributeIs409: REST writes to a file with the
// ReadOnly attribute (Put Range, Set Metadata, overwrite, delete) are 409
// ReadOnlyAttribute; Set Properties may still clear the attribute.
func TestUnconfirmedReadOnlyAttributeIs409(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/ro", map[string]string{"x-ms-type": "file", "x-ms-content-length": "10", "x-ms-file-attributes": "ReadOnly"}, nil), 201, "")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/ro?comp=range", map[string]string{"x-ms-range": "bytes=0-0", "x-ms-write": "update"}, []byte("a")), 409, "ReadOnlyAttribute")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/ro?comp=metadata", map[string]string{"x-ms-meta-a": "b"}, nil), 409, "ReadOnlyAttribute")
		wantRaw(t, raw(t, tg, http.MethodDelete, e.name+"/ro", nil, nil), 409, "ReadOnlyAttribute")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/ro?comp=properties", map[string]string{"x-ms-file-attributes": "None"}, nil), 200, "")
		wantRaw(t, raw(t, tg, http.MethodDelete, e.name+"/ro", nil, nil), 202, "")
	})
}

// TestUnconfirmedShareLeaseCodes: a set-share operation with a wrong lease
// id is 412 LeaseIdMismatchWithShareOperation, with an id but no lease
// 412 LeaseNotPresentWithShareOperation.
func TestUnconfirmedShareLeaseCodes(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		id := "11111111-1111-1111-1111-111111111111"
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"?restype=share&comp=metadata", map[string]string{"x-ms-lease-id": id}, nil), 412, "LeaseNotPresentWithShareOperation")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"?restype=share&comp=lease", map[string]string{"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1", "x-ms-proposed-lease-id": id}, nil), 201, "")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"?restype=share&comp=metadata", map[string]string{"x-ms-lease-id": "22222222-2222-2222-2222-222222222222"}, nil), 412, "LeaseIdMismatchWithShareOperation")
	})
}

// TestUnconfirmedListHandlesXML: List Handles answers the shape azfile
// parses, handles under <Entries>.
func TestUnconfirmedListHandlesXML(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		resp := raw(t, tg, http.MethodGet, e.name+"?comp=listhandles", nil, nil)
		wantRaw(t, resp, 200, "")
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), "<EnumerationResults><Entries></Entries><NextMarker></NextMarker></EnumerationResults>") {
			t.Fatalf("body %s", b)
		}
	})
}

// TestUnconfirmedConditionHeadersNotSupported: the File service refuses
// If-None-Match, If-Modified-Since and If-Unmodified-Since (400
// ConditionHeadersNotSupported, as browsers' revalidating GETs meet on
// Azure); If-Match is compared on Get File and Get File Properties (412
// ConditionNotMet on another ETag) and refused elsewhere.
func TestUnconfirmedConditionHeadersNotSupported(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		resp := raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1"}, nil)
		wantRaw(t, resp, 201, "")
		etag := resp.Header.Get("ETag")
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"/f", map[string]string{"If-None-Match": etag}, nil), 400, "ConditionHeadersNotSupported")
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"/f", map[string]string{"If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT"}, nil), 400, "ConditionHeadersNotSupported")
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f?comp=metadata", map[string]string{"If-Match": etag}, nil), 400, "ConditionHeadersNotSupported")
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"/f", map[string]string{"If-Match": etag}, nil), 200, "")
		wantRaw(t, raw(t, tg, http.MethodGet, e.name+"/f", map[string]string{"If-Match": `"0x1"`}, nil), 412, "ConditionNotMet")
	})
}

// TestUnconfirmedChangeTimeAcceptedInAllVersions: x-ms-file-change-time on
// a set is honoured whatever the request's version.
func TestUnconfirmedChangeTimeAcceptedInAllVersions(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		wantRaw(t, raw(t, tg, http.MethodPut, e.name+"/f", map[string]string{"x-ms-type": "file", "x-ms-content-length": "1"}, nil), 201, "")
		for _, v := range []string{"2021-06-08", "2025-11-05"} {
			when := "2020-02-0" + v[3:4] + "T01:02:03.0000000Z"
			resp := raw(t, tg, http.MethodPut, e.name+"/f?comp=properties", map[string]string{"x-ms-version": v, "x-ms-file-change-time": when}, nil)
			wantRaw(t, resp, 200, "")
			if got := resp.Header.Get("x-ms-file-change-time"); got != when {
				t.Errorf("version %s: change time %s, want %s", v, got, when)
			}
		}
	})
}

// TestUnconfirmedSecondDeleteShareIsShareNotFound: a second Delete Share
// right after the first, while the first one's keys are still being
// purged, is 404 ShareNotFound: the share is gone at once (its name is
// free) and the purge is invisible. Azure documents 409 ShareBeingDeleted
// for a share in the middle of deletion, a state lazuli never shows; the
// SDK's own tests delete, restore and delete again, which must work. With
// soft delete on, the second delete is 404 too (the deleted share is only
// a version to restore), and after Restore Share a delete succeeds.
func TestUnconfirmedSecondDeleteShareIsShareNotFound(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		e := newEnv(t, tg)
		for i := 0; i < 40; i++ {
			_, err := e.sc.NewRootDirectoryClient().NewFileClient(fmt.Sprint("f", i)).Create(ctx, 1<<20, nil)
			must(t, err)
		}
		_, err := e.sc.Delete(ctx, nil)
		must(t, err)
		_, err = e.sc.Delete(ctx, nil)
		mustCode(t, err, 404, "ShareNotFound")

		props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>3</Days></ShareDeleteRetentionPolicy></StorageServiceProperties>`
		wantRaw(t, raw(t, tg, http.MethodPut, "?restype=service&comp=properties", nil, []byte(props)), 202, "")
		e2 := newEnv(t, tg)
		_, err = e2.sc.Delete(ctx, nil)
		must(t, err)
		_, err = e2.sc.Delete(ctx, nil)
		mustCode(t, err, 404, "ShareNotFound")
		pg, err := e2.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: ptr(e2.name), Include: service.ListSharesInclude{Deleted: true}}).NextPage(ctx)
		must(t, err)
		if len(pg.Shares) != 1 {
			t.Fatalf("deleted shares %d", len(pg.Shares))
		}
		_, err = e2.svc.RestoreShare(ctx, e2.name, *pg.Shares[0].Version, nil)
		must(t, err)
		_, err = e2.sc.Delete(ctx, nil)
		must(t, err)
	})
}
