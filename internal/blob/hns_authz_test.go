package blob

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The evaluation order of ADLS: owner (its entry unmasked), named user
// (masked), owning and named groups (masked, any one granting), other
// (masked, as ADLS's access check has it).
func TestCallerMay(t *testing.T) {
	acl := PathACL{Owner: "o", Group: "g", Permissions: "rwxr-x---"}
	if err := acl.SetACL("user::rw-,user:u:rwx,group::r--,group:team:-w-,mask::r-x,other::r-x"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		c      *Caller
		want   perm
		allows bool
	}{
		{"superuser", &Caller{OID: "x", Superuser: true}, permR | permW | permX, true},
		{"owner entry", &Caller{OID: "o"}, permR | permW, true},
		{"owner entry is not masked nor widened", &Caller{OID: "o"}, permX, false},
		{"named user masked", &Caller{OID: "u"}, permR | permX, true},
		{"named user write masked away", &Caller{OID: "u"}, permW, false},
		{"named user does not fall to other", &Caller{OID: "u", Groups: []string{"team"}}, permW, false},
		{"owning group", &Caller{OID: "m", Groups: []string{"g"}}, permR, true},
		{"named group write masked away", &Caller{OID: "m", Groups: []string{"team"}}, permW, false},
		{"other", &Caller{OID: "z"}, permR | permX, true},
		{"other write", &Caller{OID: "z"}, permW, false},
		{"no oid is other", &Caller{}, permR, true},
	}
	for _, c := range cases {
		if got := c.c.may(acl, c.want); got != c.allows {
			t.Errorf("%s: may = %v", c.name, got)
		}
	}
	// Without a mask nothing caps the groups; other is capped by the mask
	// when there is one.
	plain := PathACL{Owner: "o", Group: "g", Permissions: "rwxrwx---"}
	if !(&Caller{OID: "m", Groups: []string{"g"}}).may(plain, permR|permW|permX) {
		t.Error("owning group rwx without a mask")
	}
	masked := PathACL{Owner: "o", Group: "g", Permissions: "rwxr--rwx"}
	if err := masked.SetACL("user::rwx,group::r--,mask::r--,other::rwx"); err != nil {
		t.Fatal(err)
	}
	if (&Caller{OID: "z"}).may(masked, permW) {
		t.Error("the mask caps other")
	}
	if !sticky(PathACL{Permissions: "rwxrwxrwt"}) || sticky(PathACL{Permissions: "rwxrwxrwx"}) {
		t.Error("sticky bit")
	}
}

// An ACL change races creates on every engine: no create that starts
// after the change revoking its write was acknowledged succeeds, because
// the check reads the ACL in the create's own transaction.
func TestACLChangeRacesCreates(t *testing.T) {
	onHNSEngines(t, func(t *testing.T, s *Service) {
		bg := context.Background()
		if _, err := s.CreatePath(bg, CreatePathRequest{Ref: ref("shared"), Dir: true}); err != nil {
			t.Fatal(err)
		}
		grant := "user::rwx,user:alice:rwx,group::r-x,mask::rwx,other::--x"
		if _, err := s.SetAccessControl(bg, ref("shared"), "", "", "", grant, Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetRootAccessControl(bg, "acct", "fsys", "", "", "rwxr-x--x", ""); err != nil {
			t.Fatal(err)
		}
		alice := WithCaller(bg, &Caller{OID: "alice"})
		var revoked atomic.Bool
		var late, made, refused atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				// Create until five creates have started after the change.
				for i, after := 0, 0; after < 5; i++ {
					started := revoked.Load()
					if started {
						after++
					}
					_, err := s.CreatePath(alice, CreatePathRequest{Ref: ref(fmt.Sprintf("shared/f-%d-%d", g, i)), Owner: "alice"})
					switch {
					case err == nil && started:
						late.Add(1)
					case err == nil:
						made.Add(1)
					case code(err) == "AuthorizationPermissionMismatch":
						refused.Add(1)
					default:
						t.Errorf("create: %v", err)
						return
					}
				}
			}(g)
		}
		for deadline := time.Now().Add(30 * time.Second); made.Load() < 16 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if _, err := s.SetAccessControl(bg, ref("shared"), "", "", "", "user::rwx,group::r-x,other::--x", Cond{}); err != nil {
			t.Fatal(err)
		}
		revoked.Store(true)
		wg.Wait()
		if late.Load() != 0 || made.Load() < 16 || refused.Load() < 40 {
			t.Fatalf("%d creates passed after the revocation, %d before, %d refused", late.Load(), made.Load(), refused.Load())
		}
	})
}
