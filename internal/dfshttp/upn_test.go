package dfshttp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/blob"
	"github.com/lazuli-storage/lazuli/internal/blobhttp"
	"github.com/lazuli-storage/lazuli/internal/engine/memstore"
	"github.com/lazuli-storage/lazuli/internal/guid"
	"github.com/lazuli-storage/lazuli/internal/httpx"
	"github.com/lazuli-storage/lazuli/storage"
)

// newOAuthPort is newPort with --oauth basic, on engine e (two ports on
// one engine are two instances).
func newOAuthPort(e storage.Engine) http.Handler {
	hns := func(a string) bool { return a == "devstoreaccount1" }
	d := httpx.Deps{Auth: auth.New(auth.Config{OAuth: true}), Now: time.Now,
		BaseURL: func(a string) string { return "https://127.0.0.1:10000/" + a }}
	svc := blob.New(e, time.Now, guid.NewString)
	svc.UseHierarchicalNamespace(hns)
	return httpx.Wrap(auth.Blob, New(d, svc, blobhttp.New(d, svc), hns), httpx.Options{Silent: true, Auth: d.Auth})
}

// bearer is an unsigned Entra ID shaped token with claims added.
func bearer(claims map[string]any) string {
	now := time.Now()
	c := map[string]any{"iss": "https://sts.windows.net/t/", "aud": "https://storage.azure.com", "tid": "t",
		"nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(), "iat": now.Add(-time.Minute).Unix()}
	for k, v := range claims {
		c[k] = v
	}
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	return "Bearer " + enc(map[string]string{"alg": "RS256"}) + "." + enc(c) + "."
}

var admin = bearer(map[string]any{"oid": "oid-admin", "roles": []string{"Storage Blob Data Owner"}})

func sendTLS(t *testing.T, h http.Handler, method, url string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "https://127.0.0.1:10000"+url, nil)
	// The caller is the superuser (a Storage Blob Data Owner token) unless
	// hdr names another.
	r.Header.Set("Authorization", admin)
	r.Header.Set("x-ms-version", "2021-08-06")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func listOwners(t *testing.T, h http.Handler, query string) map[string][2]string {
	t.Helper()
	w := sendTLS(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=true"+query, nil)
	var page struct {
		Paths []struct{ Name, Owner, Group string } `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &page); w.Code != 200 || err != nil {
		t.Fatalf("list %d %s", w.Code, w.Body.String())
	}
	out := map[string][2]string{}
	for _, p := range page.Paths {
		out[p.Name] = [2]string{p.Owner, p.Group}
	}
	return out
}

// upn=true answers the object ids of users lazuli has learned from the
// tokens it accepted (upn, else unique_name, else preferred_username) as
// their names: owner, owning group and named-user entries. Group entries,
// unknown ids, applications and $superuser stay as stored; a name given
// to Set Access Control is stored as given (Azure documents object ids
// as its input). Learned on one instance, translated on another.
func TestUPNTranslation(t *testing.T) {
	e := memstore.New()
	h, other := newOAuthPort(e), newOAuthPort(e)
	want(t, sendTLS(t, h, "PUT", acct+"/fsys?resource=filesystem", nil), 201, "")
	acl := "user::rw-,user:oid-bob:r--,user:oid-app:r--,user:oid-nobody:r--,group::r--,group:oid-alice:r--,mask::r--,other::---,default:user:oid-bob:rwx"
	hdr := map[string]string{"x-ms-owner": "oid-alice", "x-ms-group": "oid-group", "x-ms-acl": acl}
	want(t, sendTLS(t, h, "PUT", acct+"/fsys/d?resource=directory", hdr), 201, "")
	want(t, sendTLS(t, h, "PUT", acct+"/fsys/d/f?resource=file", map[string]string{"x-ms-owner": "oid-bob", "x-ms-group": "oid-alice"}), 201, "")

	getACL := func(h http.Handler, path, query string) (owner, group, acl string) {
		t.Helper()
		w := sendTLS(t, h, "HEAD", acct+"/fsys/"+path+"?action=getAccessControl"+query, nil)
		if w.Code != 200 {
			t.Fatalf("get access control %s: %d %v", path, w.Code, w.Header())
		}
		return w.Header().Get("x-ms-owner"), w.Header().Get("x-ms-group"), w.Header().Get("x-ms-acl")
	}
	// Nothing learned yet.
	if o, g, a := getACL(h, "d", "&upn=true"); o != "oid-alice" || g != "oid-group" || a != acl {
		t.Fatalf("before: %q %q %q", o, g, a)
	}
	// Three callers whose tokens are accepted (what they may do does not
	// matter): a user with upn, a guest with unique_name only, an app.
	for _, c := range []map[string]any{
		{"oid": "oid-alice", "upn": "alice@contoso.com", "unique_name": "alice@other.example"},
		{"oid": "oid-bob", "unique_name": "live.com#bob@example.com"},
		{"oid": "oid-app"},
		{"oid": "$superuser", "upn": "root@evil.example"},
	} {
		w := sendTLS(t, h, "HEAD", acct+"/fsys/d?action=getStatus", map[string]string{"Authorization": bearer(c)})
		if w.Code != 200 && w.Code != 403 {
			t.Fatalf("token %v: %d", c, w.Code)
		}
	}
	for _, port := range []http.Handler{h, other} {
		o, g, a := getACL(port, "d", "&upn=true")
		wantACL := "user::rw-,user:live.com#bob@example.com:r--,user:oid-app:r--,user:oid-nobody:r--,group::r--,group:oid-alice:r--,mask::r--,other::---,default:user:live.com#bob@example.com:rwx"
		if o != "alice@contoso.com" || g != "oid-group" || a != wantACL {
			t.Fatalf("upn=true: %q %q %q", o, g, a)
		}
		if o, g, a := getACL(port, "d", ""); o != "oid-alice" || g != "oid-group" || a != acl {
			t.Fatalf("without upn: %q %q %q", o, g, a)
		}
		if o, g, _ := getACL(port, "d", "&upn=false"); o != "oid-alice" || g != "oid-group" {
			t.Fatalf("upn=false: %q %q", o, g)
		}
		// getStatus carries owner and group too; the owning group is a
		// user's id here, and a user's id is translated wherever it is.
		w := sendTLS(t, port, "HEAD", acct+"/fsys/d/f?action=getStatus&upn=true", nil)
		if w.Header().Get("x-ms-owner") != "live.com#bob@example.com" || w.Header().Get("x-ms-group") != "alice@contoso.com" {
			t.Fatalf("getStatus: %v", w.Header())
		}
		got := listOwners(t, port, "&upn=true")
		if got["d"] != [2]string{"alice@contoso.com", "oid-group"} || got["d/f"] != [2]string{"live.com#bob@example.com", "alice@contoso.com"} {
			t.Fatalf("list upn=true: %v", got)
		}
		if got := listOwners(t, port, ""); got["d"] != [2]string{"oid-alice", "oid-group"} || got["d/f"] != [2]string{"oid-bob", "oid-alice"} {
			t.Fatalf("list: %v", got)
		}
		// The root belongs to the token that made the filesystem, which
		// carried no name, and to the group $superuser, a special name
		// (a forged token claiming it taught nothing).
		w = sendTLS(t, port, "HEAD", acct+"/fsys/?action=getAccessControl&upn=true", nil)
		if w.Code != 200 || w.Header().Get("x-ms-owner") != "oid-admin" || w.Header().Get("x-ms-group") != "$superuser" {
			t.Fatalf("root: %d %v", w.Code, w.Header())
		}
	}
	want(t, sendTLS(t, h, "HEAD", acct+"/fsys/d?action=getAccessControl&upn=yes", nil), 400, "InvalidQueryParameterValue")
	want(t, sendTLS(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=true&upn=1", nil), 400, "InvalidQueryParameterValue")

	// A name as Set Access Control input is stored as given.
	want(t, sendTLS(t, h, "PATCH", acct+"/fsys/d/f?action=setAccessControl", map[string]string{"x-ms-owner": "alice@contoso.com"}), 200, "")
	if o, _, _ := getACL(h, "d/f", ""); o != "alice@contoso.com" {
		t.Fatalf("owner set by name: %q", o)
	}
}
