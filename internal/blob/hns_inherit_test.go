package blob

import (
	"context"
	"testing"
)

// A new path takes the parent's default ACL: a file as its access ACL, a
// directory as both; the create mode caps owner, mask and other, the
// umask is ignored, and directories made on the way inherit too.
func TestHNSDefaultACLInherited(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d"), Dir: true}); err != nil {
			t.Fatal(err)
		}
		acl := "user::rwx,group::r-x,other::---," +
			"default:user::rwx,default:user:oid-1:rwx,default:group::r-x,default:mask::rwx,default:other::r-x"
		if _, err := s.SetAccessControl(ctx, ref("d"), "", "staff", "", acl, Cond{}); err != nil {
			t.Fatal(err)
		}
		f, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d/f"), Umask: "0777"})
		if err != nil {
			t.Fatal(err)
		}
		// 0666 caps the inherited entries; the umask 0777 is not applied.
		if f.ACL.ACL != "user::rw-,user:oid-1:rwx,group::r-x,mask::rw-,other::r--" || f.ACL.Permissions != "rw-rw-r--" || f.ACL.Group != "staff" || f.ACL.Owner != Superuser {
			t.Fatalf("file: %+v", f.ACL)
		}
		g, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d/g"), Dir: true, Permissions: "rwxr-x---"})
		if err != nil {
			t.Fatal(err)
		}
		wantDir := "user::rwx,user:oid-1:rwx,group::r-x,mask::r-x,other::---," +
			"default:user::rwx,default:user:oid-1:rwx,default:group::r-x,default:mask::rwx,default:other::r-x"
		if g.ACL.ACL != wantDir || g.ACL.Permissions != "rwxr-x---" {
			t.Fatalf("directory: %+v", g.ACL)
		}
		// d/x/y is made with x on the way: both inherit.
		if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d/x/y")}); err != nil {
			t.Fatal(err)
		}
		x, err := s.GetPath(ctx, ref("d/x"), Cond{})
		if err != nil || x.ACL.ACL != "user::rwx,user:oid-1:rwx,group::r-x,mask::rwx,other::r-x,"+
			"default:user::rwx,default:user:oid-1:rwx,default:group::r-x,default:mask::rwx,default:other::r-x" {
			t.Fatalf("made on the way: %+v %v", x, err)
		}
		y, err := s.GetPath(ctx, ref("d/x/y"), Cond{})
		if err != nil || y.ACL.ACL != "user::rw-,user:oid-1:rwx,group::r-x,mask::rw-,other::r--" {
			t.Fatalf("under it: %+v %v", y, err)
		}
		// An explicit ACL wins over the default one.
		e, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d/e"), ACL: "user::rw-,group::---,other::---"})
		if err != nil || e.ACL.ACL != "user::rw-,group::---,other::---" {
			t.Fatalf("explicit: %+v %v", e, err)
		}
		// g has the defaults, h is made on the way with them, i gets them.
		p, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d/g/h/i"), Umask: "0077"})
		if err != nil || p.ACL.ACL != f.ACL.ACL {
			t.Fatalf("two levels down: %+v %v", p, err)
		}
		// Without a default ACL the umask applies as before.
		if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("plain"), Dir: true}); err != nil {
			t.Fatal(err)
		}
		p, err = s.CreatePath(ctx, CreatePathRequest{Ref: ref("plain/f"), Umask: "0077"})
		if err != nil || p.ACL.ACL != "" || p.ACL.Permissions != "rw-------" {
			t.Fatalf("umask without default ACL: %+v %v", p.ACL, err)
		}
		if _, err := s.CreatePath(ctx, CreatePathRequest{Ref: ref("d/bad"), Umask: "99"}); code(err) == "" {
			t.Fatal("malformed umask accepted under a default ACL")
		}
	})
}
