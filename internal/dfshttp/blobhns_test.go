package dfshttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The Blob API on an account with a hierarchical namespace, where Azure
// answers differently from a flat account.

var blockBlob = map[string]string{"x-ms-blob-type": "BlockBlob"}

// resourceType is what Path - Get Properties says name is ("" when it is
// not there).
func resourceType(t *testing.T, h http.Handler, name string) string {
	t.Helper()
	w := send(t, h, "HEAD", acct+"/fsys/"+name+"?action=getStatus", nil, "")
	if w.Code == 404 {
		return ""
	}
	if w.Code != 200 {
		t.Fatalf("getStatus %s: %d", name, w.Code)
	}
	return w.Header().Get("x-ms-resource-type")
}

// hnsTree makes fsys with the directory dir holding the file dir/f, the
// empty directory empty, and the implied directory imp (imp/x/y.txt
// written through the Blob API).
func hnsTree(t *testing.T) http.Handler {
	t.Helper()
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?restype=container", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/dir/f?resource=file", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/empty?resource=directory", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/imp/x/y.txt", blockBlob, "y"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/src.txt", blockBlob, "source"), 201, "")
	return h
}

// A name is a file or a directory: a Blob write of a file at a directory,
// with children or empty, with a record or implied, is 409 PathConflict
// (the code Path - Create answers for a file over a directory), and the
// directory stays as it was.
func TestBlobWriteOverDirectoryIsPathConflict(t *testing.T) {
	h := hnsTree(t)
	src := "http://127.0.0.1:10000/devstoreaccount1/fsys/src.txt"
	for _, name := range []string{"dir", "empty", "imp", "imp/x"} {
		want(t, send(t, h, "PUT", acct+"/fsys/"+name+"?comp=block&blockid=QUFBQQ==", nil, "abcd"), 201, "")
		writes := []struct {
			what, method, query string
			hdr                 map[string]string
			body                string
		}{
			{"Put Blob", "PUT", "", blockBlob, "data"},
			{"Put Blob (append)", "PUT", "", map[string]string{"x-ms-blob-type": "AppendBlob"}, ""},
			{"Put Block List", "PUT", "?comp=blocklist", nil, "<BlockList><Latest>QUFBQQ==</Latest></BlockList>"},
			{"Copy Blob", "PUT", "", map[string]string{"x-ms-copy-source": src}, ""},
		}
		for _, wr := range writes {
			t.Run(wr.what+" "+name, func(t *testing.T) {
				want(t, send(t, h, wr.method, acct+"/fsys/"+name+wr.query, wr.hdr, wr.body), 409, "PathConflict")
				if got := resourceType(t, h, name); got != "directory" {
					t.Fatalf("%s is now %q", name, got)
				}
			})
		}
	}
	if got := resourceType(t, h, "dir/f"); got != "file" {
		t.Fatalf("dir/f is %q", got)
	}
	if got := resourceType(t, h, "imp/x/y.txt"); got != "file" {
		t.Fatalf("imp/x/y.txt is %q", got)
	}
}

// Every ancestor of a path is a directory: a Blob write under a file is
// 409 PathConflict, and the file keeps its content.
func TestBlobWriteUnderFileIsPathConflict(t *testing.T) {
	h := hnsTree(t)
	src := "http://127.0.0.1:10000/devstoreaccount1/fsys/src.txt"
	for _, name := range []string{"src.txt/g", "src.txt/a/b/c"} {
		want(t, send(t, h, "PUT", acct+"/fsys/"+name, blockBlob, "data"), 409, "PathConflict")
		want(t, send(t, h, "PUT", acct+"/fsys/"+name, map[string]string{"x-ms-blob-type": "AppendBlob"}, ""), 409, "PathConflict")
		want(t, send(t, h, "PUT", acct+"/fsys/"+name, map[string]string{"x-ms-copy-source": src}, ""), 409, "PathConflict")
		want(t, send(t, h, "PUT", acct+"/fsys/"+name+"?comp=block&blockid=QUFBQQ==", nil, "abcd"), 201, "")
		want(t, send(t, h, "PUT", acct+"/fsys/"+name+"?comp=blocklist", nil, "<BlockList><Latest>QUFBQQ==</Latest></BlockList>"), 409, "PathConflict")
	}
	if got := resourceType(t, h, "src.txt"); got != "file" {
		t.Fatalf("src.txt is %q", got)
	}
	if w := send(t, h, "GET", acct+"/fsys/src.txt", nil, ""); w.Body.String() != "source" {
		t.Fatalf("src.txt holds %q", w.Body.String())
	}
	if w := send(t, h, "GET", acct+"/fsys?restype=container&comp=list&prefix=src.txt/", nil, ""); strings.Contains(w.Body.String(), "<Blob>") {
		t.Fatalf("a blob under the file: %s", w.Body.String())
	}
}

// A directory marker (a Put Blob with hdi_isfolder=true, as Blob tools
// make directories) over a directory keeps it and what is under it; over
// a file it is 409 PathConflict.
func TestBlobDirectoryMarker(t *testing.T) {
	h := hnsTree(t)
	marker := map[string]string{"x-ms-blob-type": "BlockBlob", "x-ms-meta-hdi_isfolder": "true"}
	for _, name := range []string{"dir", "empty", "imp", "newdir/sub"} {
		want(t, send(t, h, "PUT", acct+"/fsys/"+name, marker, ""), 201, "")
		if got := resourceType(t, h, name); got != "directory" {
			t.Fatalf("%s is %q", name, got)
		}
	}
	if got := resourceType(t, h, "dir/f"); got != "file" {
		t.Fatalf("dir/f is %q", got)
	}
	want(t, send(t, h, "PUT", acct+"/fsys/src.txt", marker, ""), 409, "PathConflict")
	want(t, send(t, h, "PUT", acct+"/fsys/dir/f", marker, ""), 409, "PathConflict")
}

// Set Blob Metadata replaces the metadata but not the resource type: a
// directory keeps hdi_isfolder whatever the caller sends, a file never
// gains it.
func TestBlobSetMetadataKeepsResourceType(t *testing.T) {
	h := hnsTree(t)
	want(t, send(t, h, "PUT", acct+"/fsys/dir?comp=metadata", map[string]string{"x-ms-meta-a": "b"}, ""), 200, "")
	if got := resourceType(t, h, "dir"); got != "directory" {
		t.Fatalf("dir is %q after Set Blob Metadata", got)
	}
	w := send(t, h, "HEAD", acct+"/fsys/dir", nil, "")
	if meta(w, "a") != "b" || !strings.EqualFold(meta(w, "hdi_isfolder"), "true") {
		t.Fatalf("dir metadata: %v", w.Header())
	}
	// Still a non-empty directory for Delete Blob.
	want(t, send(t, h, "DELETE", acct+"/fsys/dir", nil, ""), 409, "DirectoryNotEmpty")
	want(t, send(t, h, "PUT", acct+"/fsys/src.txt?comp=metadata", map[string]string{"x-ms-meta-hdi_isfolder": "true", "x-ms-meta-c": "d"}, ""), 200, "")
	if got := resourceType(t, h, "src.txt"); got != "file" {
		t.Fatalf("src.txt is %q after Set Blob Metadata", got)
	}
	w = send(t, h, "HEAD", acct+"/fsys/src.txt", nil, "")
	if meta(w, "c") != "d" || meta(w, "hdi_isfolder") != "" {
		t.Fatalf("src.txt metadata: %v", w.Header())
	}
}

// meta is the metadata value name in a response (whose metadata headers
// keep the case they were set with).
func meta(w *httptest.ResponseRecorder, name string) string {
	for k, v := range w.Header() {
		if strings.EqualFold(k, "x-ms-meta-"+name) {
			return v[0]
		}
	}
	return ""
}

// Page blobs and incremental copies are not offered on an account with a
// hierarchical namespace (409 BlobOperationNotSupported); append blobs
// are, and page blobs stay as they were on a flat account.
func TestHNSPageBlobsNotSupported(t *testing.T) {
	h := hnsTree(t)
	page := map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "512"}
	want(t, send(t, h, "PUT", acct+"/fsys/disk.vhd", page, ""), 409, "BlobOperationNotSupported")
	if got := resourceType(t, h, "disk.vhd"); got != "" {
		t.Fatalf("disk.vhd was made: %q", got)
	}
	// Put Blob From URL makes block blobs only, here as on every account.
	want(t, send(t, h, "PUT", acct+"/fsys/disk.vhd", map[string]string{"x-ms-blob-type": "PageBlob", "x-ms-copy-source": "http://127.0.0.1:10000/devstoreaccount1/fsys/src.txt"}, ""), 400, "InvalidHeaderValue")
	pageWrite := map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-511"}
	want(t, send(t, h, "PUT", acct+"/fsys/src.txt?comp=page", pageWrite, strings.Repeat("p", 512)), 409, "BlobOperationNotSupported")
	want(t, send(t, h, "PUT", acct+"/fsys/src.txt?comp=page", map[string]string{"x-ms-page-write": "clear", "x-ms-range": "bytes=0-511"}, ""), 409, "BlobOperationNotSupported")
	want(t, send(t, h, "PUT", acct+"/fsys/src.txt?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-511",
		"x-ms-copy-source": "http://127.0.0.1:10000/devstoreaccount1/fsys/src.txt", "x-ms-source-range": "bytes=0-511"}, ""), 409, "BlobOperationNotSupported")
	want(t, send(t, h, "GET", acct+"/fsys/src.txt?comp=pagelist", nil, ""), 409, "BlobOperationNotSupported")
	want(t, send(t, h, "PUT", acct+"/fsys/inc.vhd?comp=incrementalcopy", map[string]string{
		"x-ms-copy-source": "http://127.0.0.1:10000/devstoreaccount1/fsys/src.txt?snapshot=2026-01-01T00:00:00.0000000Z"}, ""), 409, "BlobOperationNotSupported")

	want(t, send(t, h, "PUT", acct+"/fsys/logs/app.log", map[string]string{"x-ms-blob-type": "AppendBlob"}, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/logs/app.log?comp=appendblock", nil, "line\n"), 201, "")
	if got := resourceType(t, h, "logs"); got != "directory" {
		t.Fatalf("logs is %q", got)
	}
	// An append block on a directory (a block blob to the Blob API) is the
	// wrong blob type.
	want(t, send(t, h, "PUT", acct+"/fsys/dir?comp=appendblock", nil, "x"), 409, "InvalidBlobType")

	want(t, send(t, h, "PUT", "/plainaccount/flat?restype=container", nil, ""), 201, "")
	want(t, send(t, h, "PUT", "/plainaccount/flat/disk.vhd", page, ""), 201, "")
	want(t, send(t, h, "PUT", "/plainaccount/flat/disk.vhd?comp=page", pageWrite, strings.Repeat("p", 512)), 201, "")
	want(t, send(t, h, "GET", "/plainaccount/flat/disk.vhd?comp=pagelist", nil, ""), 200, "")
}

// A file at a name and a blob under it race: exactly one wins, whatever
// the order, and the loser is 409 PathConflict.
func TestBlobFileAndChildRace(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?restype=container", nil, ""), 201, "")
	const rounds, writers = 40, 6
	for r := 0; r < rounds; r++ {
		codes := make([]int, writers)
		var wg sync.WaitGroup
		for g := 0; g < writers; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				name := fmt.Sprintf("%s/fsys/r%d", acct, r)
				if g%2 == 1 {
					name += fmt.Sprintf("/child%d", g)
				}
				w := send(t, h, "PUT", name, blockBlob, "x")
				codes[g] = w.Code
				if w.Code != 201 && w.Header().Get("x-ms-error-code") != "PathConflict" {
					t.Errorf("writer %d: %d %s", g, w.Code, w.Body.String())
				}
			}(g)
		}
		wg.Wait()
		file, kids := codes[0] == 201 || codes[2] == 201 || codes[4] == 201, codes[1] == 201 || codes[3] == 201 || codes[5] == 201
		if file == kids {
			t.Fatalf("round %d: file written %v, children written %v: %v", r, file, kids, codes)
		}
		want := "file"
		if kids {
			want = "directory"
		}
		if got := resourceType(t, h, fmt.Sprintf("r%d", r)); got != want {
			t.Fatalf("round %d: r%d is %q, want %q", r, r, got, want)
		}
	}
}

// A file made by Path - Create can be overwritten by Put Blob but not by
// Put Block or Put Block List (409 BlobOperationNotSupported), as Azure's
// known issues of Data Lake Storage and its Blob error catalog say; the
// rule goes with the file when it is renamed and ends when Put Blob
// replaces it. Blobs the Blob API made take blocks as before.
func TestBlockWritesRefusedOnPathCreatedFile(t *testing.T) {
	h := hnsTree(t)
	const block = "?comp=block&blockid=QUFBQQ=="
	const list = "?comp=blocklist"
	const commit = "<BlockList><Latest>QUFBQQ==</Latest></BlockList>"
	want(t, send(t, h, "PATCH", acct+"/fsys/dir/f?action=append&position=0", nil, "lake"), 202, "")
	want(t, send(t, h, "PATCH", acct+"/fsys/dir/f?action=flush&position=4", nil, ""), 200, "")
	want(t, send(t, h, "PUT", acct+"/fsys/dir/f"+block, nil, "abcd"), 409, "BlobOperationNotSupported")
	want(t, send(t, h, "PUT", acct+"/fsys/dir/f"+list, nil, commit), 409, "BlobOperationNotSupported")
	if w := send(t, h, "GET", acct+"/fsys/dir/f", nil, ""); w.Body.String() != "lake" {
		t.Fatalf("dir/f holds %q", w.Body.String())
	}
	// Renamed, it is still the file Path - Create made.
	want(t, send(t, h, "PUT", acct+"/fsys/dir/g", map[string]string{"x-ms-rename-source": "/fsys/dir/f"}, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/dir/g"+block, nil, "abcd"), 409, "BlobOperationNotSupported")
	// Put Blob replaces it with a blob of the Blob API.
	want(t, send(t, h, "PUT", acct+"/fsys/dir/g", blockBlob, "blob"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/dir/g"+block, nil, "abcd"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/dir/g"+list, nil, commit), 201, "")
	if w := send(t, h, "GET", acct+"/fsys/dir/g", nil, ""); w.Body.String() != "abcd" {
		t.Fatalf("dir/g holds %q", w.Body.String())
	}
	// A blob the Blob API made, and one that does not exist yet, take
	// blocks.
	want(t, send(t, h, "PUT", acct+"/fsys/src.txt"+block, nil, "abcd"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/src.txt"+list, nil, commit), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/new/blocks.bin"+block, nil, "abcd"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/new/blocks.bin"+list, nil, commit), 201, "")
}

// Undelete Blob brings a soft-deleted file back only where the namespace
// still has room for it: not as a file where a directory now is, nor
// under what is now a file (409 PathConflict, as a Blob write there
// answers). A file whose directories were deleted after it gets them
// back as a Blob write makes them (lazuli's choice: Azure's pages do not
// say).
func TestUndeleteKeepsTheNamespace(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/?restype=service&comp=properties", nil, `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>`+
		`<DeleteRetentionPolicy><Enabled>true</Enabled><Days>7</Days></DeleteRetentionPolicy></StorageServiceProperties>`), 202, "")
	want(t, send(t, h, "PUT", acct+"/fsys?restype=container", nil, ""), 201, "")

	// x was a file; x/y makes x a directory.
	want(t, send(t, h, "PUT", acct+"/fsys/x", blockBlob, "x"), 201, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/x", nil, ""), 202, "")
	want(t, send(t, h, "PUT", acct+"/fsys/x/y", blockBlob, "y"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/x?comp=undelete", nil, ""), 409, "PathConflict")
	if got := resourceType(t, h, "x"); got != "directory" {
		t.Fatalf("x is %q", got)
	}

	// p/q was a file in the directory p, which is now a file.
	want(t, send(t, h, "PUT", acct+"/fsys/p/q", blockBlob, "q"), 201, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/p/q", nil, ""), 202, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/p", nil, ""), 202, "")
	want(t, send(t, h, "PUT", acct+"/fsys/p", blockBlob, "p"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/p/q?comp=undelete", nil, ""), 409, "PathConflict")
	if got := resourceType(t, h, "p"); got != "file" {
		t.Fatalf("p is %q", got)
	}

	// a/b/c.txt outlived its directories: they come back with it.
	want(t, send(t, h, "PUT", acct+"/fsys/a/b/c.txt", blockBlob, "c"), 201, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/a/b/c.txt", nil, ""), 202, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/a/b", nil, ""), 202, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/a", nil, ""), 202, "")
	want(t, send(t, h, "PUT", acct+"/fsys/a/b/c.txt?comp=undelete", nil, ""), 200, "")
	for name, typ := range map[string]string{"a": "directory", "a/b": "directory", "a/b/c.txt": "file"} {
		if got := resourceType(t, h, name); got != typ {
			t.Fatalf("%s is %q, want %q", name, got, typ)
		}
	}
	w := send(t, h, "GET", acct+"/fsys?restype=container&comp=list&prefix=a", nil, "")
	for _, n := range []string{"<Name>a</Name>", "<Name>a/b</Name>", "<Name>a/b/c.txt</Name>"} {
		if !strings.Contains(w.Body.String(), n) {
			t.Fatalf("listing lacks %s: %s", n, w.Body.String())
		}
	}
}

// Undelete Blob without a deletion id restores the newest deleted file of
// the name even when a directory of the name was deleted after it, and
// the newest deleted directory when the name has no deleted file
// (lazuli's choices: the Blob API names blobs; Azure's pages do not say).
func TestUndeleteWithoutIDPrefersTheNewestFile(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/?restype=service&comp=properties", nil, `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>`+
		`<DeleteRetentionPolicy><Enabled>true</Enabled><Days>7</Days></DeleteRetentionPolicy></StorageServiceProperties>`), 202, "")
	want(t, send(t, h, "PUT", acct+"/fsys?restype=container", nil, ""), 201, "")

	// m: an older file, a newer file, then a directory, each deleted.
	for _, c := range []string{"m1", "m2"} {
		want(t, send(t, h, "PUT", acct+"/fsys/m", blockBlob, c), 201, "")
		want(t, send(t, h, "DELETE", acct+"/fsys/m", nil, ""), 202, "")
	}
	want(t, send(t, h, "PUT", acct+"/fsys/m?resource=directory", nil, ""), 201, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/m?recursive=true", nil, ""), 200, "")
	want(t, send(t, h, "PUT", acct+"/fsys/m?comp=undelete", nil, ""), 200, "")
	if w := send(t, h, "GET", acct+"/fsys/m", nil, ""); w.Code != 200 || w.Body.String() != "m2" {
		t.Fatalf("m: %d %q", w.Code, w.Body.String())
	}

	// n: two directories deleted in turn, the newer holding n/c.
	want(t, send(t, h, "PUT", acct+"/fsys/n?resource=directory", nil, ""), 201, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/n?recursive=true", nil, ""), 200, "")
	want(t, send(t, h, "PUT", acct+"/fsys/n/c", blockBlob, "c"), 201, "")
	want(t, send(t, h, "DELETE", acct+"/fsys/n?recursive=true", nil, ""), 200, "")
	want(t, send(t, h, "PUT", acct+"/fsys/n?comp=undelete", nil, ""), 200, "")
	if got := resourceType(t, h, "n"); got != "directory" {
		t.Fatalf("n is %q", got)
	}
	if w := send(t, h, "GET", acct+"/fsys/n/c", nil, ""); w.Code != 200 || w.Body.String() != "c" {
		t.Fatalf("n/c: %d %q", w.Code, w.Body.String())
	}
}

// List Blobs showonly=files or showonly=directories (the Data Lake SDKs'
// List Directory Paths) keeps the paths of one kind; prefixes stay; a
// page of maxresults counts only what it keeps; an account without a
// hierarchical namespace answers 400.
func TestListBlobsShowOnlyKind(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?restype=container", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/a/b/f1", blockBlob, "1"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/a/f2", blockBlob, "2"), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/e?resource=directory", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/z", blockBlob, "z"), 201, "")
	names := func(q string) []string {
		t.Helper()
		w := send(t, h, "GET", acct+"/fsys?restype=container&comp=list&"+q, nil, "")
		want(t, w, 200, "")
		var out []string
		for _, m := range regexp.MustCompile(`<(Name|BlobPrefix><Name)>([^<]*)</Name>|<NextMarker>([^<]+)</NextMarker>`).FindAllStringSubmatch(w.Body.String(), -1) {
			switch {
			case m[3] != "":
				out = append(out, "next")
			case m[1] == "Name":
				out = append(out, m[2])
			default:
				out = append(out, m[2]+"(prefix)")
			}
		}
		return out
	}
	for q, wantNames := range map[string][]string{
		"showonly=directories":              {"a", "a/b", "e"},
		"showonly=files":                    {"a/b/f1", "a/f2", "z"},
		"showonly=files&prefix=a/":          {"a/b/f1", "a/f2"},
		"showonly=directories&delimiter=/":  {"a", "a/(prefix)", "e"},
		"showonly=files&delimiter=/":        {"a/(prefix)", "z"},
		"showonly=directories&maxresults=2": {"a", "a/b", "next"},
		"showonly=files&maxresults=1&marker=" + markerOf(t, h, "showonly=files&maxresults=1"): {"a/f2", "next"},
	} {
		if got := names(q); strings.Join(got, ",") != strings.Join(wantNames, ",") {
			t.Errorf("%s: %v, want %v", q, got, wantNames)
		}
	}
	plain := newPortWith(func(string) bool { return false })
	want(t, send(t, plain, "PUT", acct+"/plainc?restype=container", nil, ""), 201, "")
	want(t, send(t, plain, "GET", acct+"/plainc?restype=container&comp=list&showonly=files", nil, ""), 400, "InvalidQueryParameterValue")
	want(t, send(t, plain, "GET", acct+"/plainc?restype=container&comp=list&showonly=directories", nil, ""), 400, "InvalidQueryParameterValue")
}

// markerOf is the NextMarker of a listing of fsys with the query q.
func markerOf(t *testing.T, h http.Handler, q string) string {
	t.Helper()
	w := send(t, h, "GET", acct+"/fsys?restype=container&comp=list&"+q, nil, "")
	m := regexp.MustCompile(`<NextMarker>([^<]+)</NextMarker>`).FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatalf("%s: no NextMarker in %s", q, w.Body.String())
	}
	return url.QueryEscape(m[1])
}

// x-ms-encryption-context on Path - Create is kept on a file and returned
// as it was sent on Path - Get Properties, Get Blob and Get Blob
// Properties and in List Paths; a directory keeps none (lazuli's choice:
// Azure documents it as not applicable); longer than 1,024 characters it
// is 400 InvalidHeaderValue.
func TestEncryptionContext(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?restype=container", nil, ""), 201, "")
	ctxHdr := map[string]string{"x-ms-encryption-context": "key-id=42;tenant=a b"}
	want(t, send(t, h, "PUT", acct+"/fsys/d/f?resource=file", ctxHdr, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/e?resource=directory", ctxHdr, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/plain?resource=file", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/long?resource=file", map[string]string{"x-ms-encryption-context": strings.Repeat("k", 1025)}, ""), 400, "InvalidHeaderValue")
	want(t, send(t, h, "PUT", acct+"/fsys/max?resource=file", map[string]string{"x-ms-encryption-context": strings.Repeat("k", 1024)}, ""), 201, "")
	// Appends and a flush keep it.
	want(t, send(t, h, "PATCH", acct+"/fsys/d/f?action=append&position=0", nil, "data"), 202, "")
	want(t, send(t, h, "PATCH", acct+"/fsys/d/f?action=flush&position=4", nil, ""), 200, "")
	for _, r := range []struct{ method, path, want string }{
		{"HEAD", "d/f", "key-id=42;tenant=a b"},
		{"GET", "d/f", "key-id=42;tenant=a b"},
		{"HEAD", "e", ""},
		{"HEAD", "plain", ""},
	} {
		w := send(t, h, r.method, acct+"/fsys/"+r.path, nil, "")
		if got := w.Header().Get("x-ms-encryption-context"); w.Code != 200 || got != r.want {
			t.Errorf("%s %s: %d, context %q, want %q", r.method, r.path, w.Code, got, r.want)
		}
	}
	w := send(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=true", nil, "")
	want(t, w, 200, "")
	var list struct {
		Paths []map[string]string `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range list.Paths {
		if c, ok := p["EncryptionContext"]; ok {
			got[p["name"]] = c
		}
	}
	if len(got) != 2 || got["d/f"] != "key-id=42;tenant=a b" || got["max"] != strings.Repeat("k", 1024) {
		t.Fatalf("listed contexts %v", got)
	}
	// Put Blob replaces the file, and the context with it.
	want(t, send(t, h, "PUT", acct+"/fsys/d/f", blockBlob, "new"), 201, "")
	if got := send(t, h, "HEAD", acct+"/fsys/d/f", nil, "").Header().Get("x-ms-encryption-context"); got != "" {
		t.Fatalf("replaced file keeps context %q", got)
	}
}
