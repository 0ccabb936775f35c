package blob_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestTagExpressions pins tag expression validation. Find Blobs by Tags
// refuses, with 400 InvalidQueryParameterValue and Azure's "Error parsing
// query ..." messages, expressions with a single-quoted or over-long tag
// name, an over-long value, characters outside the tag set, OR, <>, a
// missing operator, or more than 10 distinct tags; 10 are fine.
// x-ms-if-tags takes OR and <>, accepts long valid expressions and names
// and values of any length, and answers 400 InvalidHeaderValue to ones
// that do not parse, among them @container and bare names holding "+" or "--". Both
// take any tag character in a double-quoted name.
func TestTagExpressions(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		e := newEnv(t, tg)
		ctx := harness.Ctx(t)
		tags := map[string]string{}
		var conds []string
		for i := 0; i < 10; i++ {
			k, v := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
			tags[k] = v
			conds = append(conds, fmt.Sprintf("%s='%s'", k, v))
		}
		bb := e.cc.NewBlockBlobClient("tagged")
		_, err := bb.Upload(ctx, body([]byte("x")), &blockblob.UploadOptions{Tags: tags})
		must(t, err)
		ten := strings.Join(conds, " and ")
		find := func(where string) *http.Response {
			return raw(t, tg, http.MethodGet, e.name+"?restype=container&comp=blobs&where="+url.QueryEscape(where), nil, nil)
		}
		if r := find(ten); r.StatusCode != 200 || !strings.Contains(string(readAll(t, r.Body)), "<Name>tagged</Name>") {
			t.Fatalf("ten conditions: %d", r.StatusCode)
		}
		for where, msg := range map[string]string{
			ten + " and k10='x'":                    "Error parsing query: there can be at most 10 unique tags in a query",
			"'key 1'='v'":                           "Error parsing query at or near character position",
			"k" + strings.Repeat("x", 128) + "='v'": "tag must be between 1 and 128 characters in length",
			"k='" + strings.Repeat("v", 257) + "'":  "tag value must be between 0 and 256 characters in length",
			"k='bad @'":                             "not permitted in tag name or value",
			"astring":                               "Error parsing query at or near character position",
			"k0<>'v0'":                              "Error parsing query at or near character position",
			"k0='v0' or k1='v1'":                    "Error parsing query at or near character position",
			"key+1='v1'":                            "Error parsing query at or near character position",
			"key--1='v1'":                           "Error parsing query at or near character position",
		} {
			r := find(where)
			body := string(readAll(t, r.Body))
			if r.StatusCode != 400 || r.Header.Get("x-ms-error-code") != "InvalidQueryParameterValue" || !strings.Contains(body, msg) {
				t.Errorf("%.40q: %d %s %s", where, r.StatusCode, r.Header.Get("x-ms-error-code"), body)
			}
		}
		ifTags := func(expr string) *blob.GetPropertiesOptions {
			return &blob.GetPropertiesOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfTags: &expr}}}
		}
		// A long condition with OR, <> and parentheses, ten distinct tags.
		long := "(" + ten + ") or (k0<>'v0' and k9 >= '" + strings.Repeat("z", 256) + "')"
		_, err = bb.GetProperties(ctx, ifTags(long))
		must(t, err)
		_, err = bb.GetProperties(ctx, ifTags("k0 <> 'v0'"))
		mustCode(t, err, 412, "ConditionNotMet")
		// Over-long names and values are no error in a condition: a
		// name longer than any tag's matches nothing.
		_, err = bb.GetProperties(ctx, ifTags("k"+strings.Repeat("x", 128)+" <> 'v'"))
		mustCode(t, err, 412, "ConditionNotMet")
		_, err = bb.GetProperties(ctx, ifTags("k0 <> '"+strings.Repeat("v", 257)+"'"))
		must(t, err)
		// Quoted, such names are fine.
		_, err = bb.GetProperties(ctx, ifTags(`k0='v0' or ("key+1"='x' and "key--1"='y')`))
		must(t, err)
		if r := find(`k0='v0' and "key+1"='v1'`); r.StatusCode != 200 {
			t.Fatalf("quoted name in a query: %d", r.StatusCode)
		}
		// A bare tag name is letters, digits and underscores ("+" or "--"
		// need double quotes), and x-ms-if-tags cannot name @container.
		for _, bad := range []string{"k0 = v0", "k0 == 'v0'", "(k0 = 'v0'", ten + " and k10='x'", "k0='bad @'",
			"key+1='v1'", "key--1='v1'", "@container='" + e.name + "'", "k0='v0' and @container='" + e.name + "'"} {
			resp := raw(t, tg, http.MethodHead, e.name+"/tagged", map[string]string{"x-ms-if-tags": bad}, nil)
			expectStatus(t, resp, 400, "InvalidHeaderValue")
		}
	})
}
