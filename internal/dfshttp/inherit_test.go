package dfshttp

import (
	"encoding/json"
	"testing"
)

// A file made under a directory with a default ACL answers the inherited
// ACL on the wire, capped by x-ms-permissions, with x-ms-umask ignored.
func TestDefaultACLInheritedWire(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	want(t, send(t, h, "PUT", acct+"/fsys/d?resource=directory", nil, ""), 201, "")
	acl := "user::rwx,group::r-x,other::---,default:user::rwx,default:user:oid-1:r-x,default:group::r-x,default:mask::r-x,default:other::---"
	want(t, send(t, h, "PATCH", acct+"/fsys/d?action=setAccessControl", map[string]string{"x-ms-acl": acl}, ""), 200, "")
	want(t, send(t, h, "PUT", acct+"/fsys/d/f?resource=file", map[string]string{"x-ms-permissions": "0640", "x-ms-umask": "0777"}, ""), 201, "")
	w := send(t, h, "HEAD", acct+"/fsys/d/f?action=getAccessControl", nil, "")
	if w.Header().Get("x-ms-acl") != "user::rw-,user:oid-1:r-x,group::r-x,mask::r--,other::---" || w.Header().Get("x-ms-permissions") != "rw-r-----+" {
		t.Fatalf("file %v", w.Header())
	}
	want(t, send(t, h, "PUT", acct+"/fsys/d/sub?resource=directory", nil, ""), 201, "")
	w = send(t, h, "HEAD", acct+"/fsys/d/sub?action=getAccessControl", nil, "")
	if w.Header().Get("x-ms-acl") != "user::rwx,user:oid-1:r-x,group::r-x,mask::r-x,other::---,"+
		"default:user::rwx,default:user:oid-1:r-x,default:group::r-x,default:mask::r-x,default:other::---" {
		t.Fatalf("directory %v", w.Header())
	}
	want(t, send(t, h, "PUT", acct+"/fsys/d/g?resource=file", map[string]string{"x-ms-umask": "abcd"}, ""), 400, "InvalidHeaderValue")
}

// upn=true asks Azure to translate object ids to user principal names;
// ids lazuli has learned no name for (from no token) come back as stored.
func TestUPNLeavesNamesAsStored(t *testing.T) {
	h := newPort()
	want(t, send(t, h, "PUT", acct+"/fsys?resource=filesystem", nil, ""), 201, "")
	hdr := map[string]string{"x-ms-owner": "oid-1", "x-ms-group": "oid-2", "x-ms-acl": "user::rw-,user:oid-3:r--,group::r--,mask::r--,other::---"}
	want(t, send(t, h, "PUT", acct+"/fsys/f?resource=file", hdr, ""), 201, "")
	w := send(t, h, "HEAD", acct+"/fsys/f?action=getAccessControl&upn=true", nil, "")
	if w.Code != 200 || w.Header().Get("x-ms-owner") != "oid-1" || w.Header().Get("x-ms-group") != "oid-2" || w.Header().Get("x-ms-acl") != hdr["x-ms-acl"] {
		t.Fatalf("get access control %d %v", w.Code, w.Header())
	}
	w = send(t, h, "GET", acct+"/fsys?resource=filesystem&recursive=true&upn=true", nil, "")
	var page struct {
		Paths []map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || len(page.Paths) != 1 || page.Paths[0]["owner"] != "oid-1" || page.Paths[0]["group"] != "oid-2" {
		t.Fatalf("list %d %s", w.Code, w.Body.String())
	}
}
