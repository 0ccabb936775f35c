package blobhttp

import (
	"encoding/xml"
	"testing"

	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
)

func TestListingXMLWellFormed(t *testing.T) {
	h := handlerFor(memstore.New())
	do(t, h, "PUT", "xml1?restype=container", map[string]string{"x-ms-meta-k": "a&b<c>"}, nil)
	do(t, h, "PUT", "xml1/a%26b%3Cc%3E%20%C3%A9", map[string]string{"x-ms-blob-type": "BlockBlob", "x-ms-meta-m": "v&", "x-ms-tags": "t=x%2Fy"}, []byte("x"))
	if w := do(t, h, "HEAD", "xml1/a%26b%3Cc%3E%20%C3%A9", nil, nil); w.Code != 200 {
		t.Fatalf("put failed: %d", w.Code)
	}
	for _, p := range []string{"?comp=list&include=metadata", "xml1?restype=container&comp=list&include=metadata,tags,copy,snapshots", "xml1?restype=container&comp=list&delimiter=%26", "?restype=service&comp=properties", "xml1?restype=container&comp=acl", "xml1/a%26b%3Cc%3E%20%C3%A9?comp=tags", "xml1/a%26b%3Cc%3E%20%C3%A9?comp=blocklist&blocklisttype=all", "?comp=blobs&where=t%3D%27x%2Fy%27"} {
		w := do(t, h, "GET", p, nil, nil)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", p, w.Code, w.Body.String())
		}
		if testing.Verbose() {
			t.Log(w.Body.String())
		}
		var v struct{}
		if err := xml.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v\n%s", p, err, w.Body.String())
		}
	}
}
