package dfshttp

import "testing"

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
