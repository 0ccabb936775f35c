package blob_test

import (
	"strings"
	"testing"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestMetadataNamesKeepTheirCase: Azure stores metadata names with the case
// the client sent. Go's HTTP stack canonicalizes header names on both ends,
// so this is checked in the List Blobs XML.
func TestMetadataNamesKeepTheirCase(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		c := client(t, tg)
		cn := harness.UniqueName("case")
		_, err := c.CreateContainer(ctx, cn, nil)
		must(t, err)
		_, err = c.UploadBuffer(ctx, cn, "b", []byte("x"), nil)
		must(t, err)
		bc := c.ServiceClient().NewContainerClient(cn).NewBlobClient("b")
		_, err = bc.SetMetadata(ctx, map[string]*string{"MyKey": ptr("v1"), "lower": ptr("v2"), "UPPER": ptr("v3")}, nil)
		must(t, err)
		// The Go SDK lower-cases names when it parses listings; read the XML.
		resp := raw(t, tg, "GET", cn+"?restype=container&comp=list&include=metadata", nil, nil)
		xml := string(readAll(t, resp.Body))
		for _, want := range []string{"<MyKey>v1</MyKey>", "<lower>v2</lower>", "<UPPER>v3</UPPER>"} {
			if !strings.Contains(xml, want) {
				t.Fatalf("listing lacks %s: %s", want, xml)
			}
		}
	})
}
