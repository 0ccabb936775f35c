package auth

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sas"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// mintServiceSAS signs query (without sig) as a service SAS for the given
// resource with key and returns it with sig added.
func mintServiceSAS(tb testing.TB, key []byte, svc sas.Service, container, object, timestamp, query string) string {
	tb.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		tb.Fatal(err)
	}
	q.Set("sig", "placeholder")
	v, err := sas.Parse(q)
	if err != nil {
		tb.Fatal(err)
	}
	canon := sas.CanonicalizedResource(svc, v.Version, DevAccount, container, object)
	q.Set("sig", sharedkey.ComputeSignature(key, sas.ServiceStringToSign(svc, canon, v, timestamp)))
	return q.Encode()
}

func mintAccountSAS(tb testing.TB, key []byte, query string) string {
	tb.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		tb.Fatal(err)
	}
	q.Set("sig", "placeholder")
	v, err := sas.Parse(q)
	if err != nil {
		tb.Fatal(err)
	}
	q.Set("sig", sharedkey.ComputeSignature(key, sas.AccountStringToSign(DevAccount, v)))
	return q.Encode()
}

// runSAS runs one request through Authenticate and Authorize and returns
// the first error.
func runSAS(tb testing.TB, a *Authenticator, svc Service, path, query string, need Access, mut func(*http.Request)) error {
	tb.Helper()
	r := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/"+path+"?"+query, nil)
	r.RemoteAddr = "10.1.2.3:5555"
	if mut != nil {
		mut(r)
	}
	id, err := a.Authenticate(r, svc, DevAccount)
	if err != nil {
		return err
	}
	if id.SAS == nil || id.SAS.Values == nil {
		tb.Fatalf("identity %+v carries no SAS", id)
	}
	need.Service = svc
	return a.Authorize(id, r, need)
}

const (
	future = "se=2027-01-01T00:00:00Z"
	sv     = "sv=2026-12-06"
)

func blobRead(container, object string) Access {
	return Access{Resource: ResObject, Perms: "r", Container: container, Object: object}
}

// wantResult asserts err is nil (code "") or the Azure code.
func wantResult(tb testing.TB, err error, code azerr.Code) {
	tb.Helper()
	if code == 0 {
		if err != nil {
			tb.Fatalf("refused: %v", err)
		}
		return
	}
	e, ok := azerr.As(err)
	if !ok || e.Code != code {
		tb.Fatalf("got %v, want %s", err, code)
	}
	if e.Status != code.Status() {
		tb.Fatalf("status %d for %s", e.Status, code)
	}
}

func TestServiceSASBlob(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	key := devKey()
	containerSAS := mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=rl&"+future)
	blobSAS := mintServiceSAS(t, key, sas.Blob, "c1", "dir/b1", "", sv+"&sr=b&sp=rw&"+future)
	secondKeySAS := mintServiceSAS(t, testKey2(), sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&"+future)
	snapSAS := mintServiceSAS(t, key, sas.Blob, "c1", "b1", "2026-11-01T00:00:00.0000000Z", sv+"&sr=bs&sp=r&"+future)
	dirSAS := mintServiceSAS(t, key, sas.Blob, "c1", "dir", "", sv+"&sr=d&sdd=1&sp=r&"+future)
	oldSAS := mintServiceSAS(t, key, sas.Blob, "c1", "b1", "", "sv=2017-11-09&sr=b&sp=r&"+future)
	withSnap := func(s string) Access { acc := blobRead("c1", "b1"); acc.Snapshot = s; return acc }
	tests := []struct {
		name  string
		path  string
		query string
		need  Access
		mut   func(*http.Request)
		code  azerr.Code
	}{
		{"container SAS reads a blob of its container", "c1/x", containerSAS, blobRead("c1", "x"), nil, 0},
		{"container SAS lists its container", "c1", containerSAS, Access{Resource: ResContainer, Perms: "l", Container: "c1"}, nil, 0},
		{"second key", "c1/x", secondKeySAS, blobRead("c1", "x"), nil, 0},
		{"container SAS on another container: signature covers the container", "c2/x", containerSAS, blobRead("c2", "x"), nil, azerr.AuthenticationFailed},
		{"blob SAS on its blob", "c1/dir/b1", blobSAS, Access{Resource: ResObject, Perms: "w", Container: "c1", Object: "dir/b1"}, nil, 0},
		{"blob SAS on another blob", "c1/b2", blobSAS, blobRead("c1", "b2"), nil, azerr.AuthenticationFailed},
		{"blob SAS on a container operation", "c1", blobSAS, Access{Resource: ResContainer, Perms: "rl", Container: "c1"}, nil, azerr.AuthorizationFailure},
		{"service SAS on an operation it can never do", "c1", containerSAS, Access{Resource: ResContainer, Perms: "rl", Container: "c1", ServiceSASDenied: true}, nil, azerr.AuthorizationFailure},
		// The signature covers a container the URL does not name (Azure
		// answers a Blob Batch to the account so).
		{"service SAS on a service-level operation", "", containerSAS, Access{Resource: ResService, Perms: "rl"}, nil, azerr.AuthenticationFailed},
		{"service SAS on Get Account Information through its container", "c1", containerSAS, Access{Resource: ResService, Perms: "racwdl", Container: "c1"}, nil, 0},
		{"missing permission", "c1/x", containerSAS, Access{Resource: ResObject, Perms: "wd", Container: "c1", Object: "x"}, nil, azerr.AuthorizationPermissionMismatch},
		{"operation without SAS permission letters", "c1/x", containerSAS, Access{Resource: ResObject, Container: "c1", Object: "x"}, nil, azerr.AuthorizationPermissionMismatch},
		{"snapshot SAS on its snapshot", "c1/b1", snapSAS, withSnap("2026-11-01T00:00:00.0000000Z"), nil, 0},
		{"snapshot SAS on another snapshot", "c1/b1", snapSAS, withSnap("2026-11-02T00:00:00.0000000Z"), nil, azerr.AuthenticationFailed},
		{"snapshot SAS on the base blob", "c1/b1", snapSAS, blobRead("c1", "b1"), nil, azerr.AuthenticationFailed},
		{"directory SAS on a blob below it", "c1/dir/sub/x", dirSAS, blobRead("c1", "dir/sub/x"), nil, 0},
		{"directory SAS elsewhere", "c1/other/x", dirSAS, blobRead("c1", "other/x"), nil, azerr.AuthenticationFailed},
		{"sv 2017-11-09 layout", "c1/b1", oldSAS, blobRead("c1", "b1"), nil, 0},
		{"tampered permissions", "c1/x", replaceParam(containerSAS, "sp", "rwdl"), blobRead("c1", "x"), nil, azerr.AuthenticationFailed},
		{"missing sr", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sp=r&"+future), blobRead("c1", "x"), nil, azerr.AuthenticationFailed},
		{"unknown sr", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=z&sp=r&"+future), blobRead("c1", "x"), nil, azerr.AuthenticationFailed},
		{"no expiry and no policy", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r"), blobRead("c1", "x"), nil, azerr.AuthenticationFailed},
		{"no permissions and no policy", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&"+future), blobRead("c1", "x"), nil, azerr.AuthenticationFailed},
		{"expired", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&se=2026-11-22T11:59:59Z"), blobRead("c1", "x"), nil, azerr.AuthenticationFailed},
		{"not started", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&st=2026-11-22T12:01Z&"+future), blobRead("c1", "x"), nil, azerr.AuthenticationFailed},
		{"started", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&st=2026-11-22T11:59Z&"+future), blobRead("c1", "x"), nil, 0},
		{"source IP in range", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&sip=10.1.0.0-10.1.255.255&"+future), blobRead("c1", "x"), nil, 0},
		{"source IP outside range", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&sip=10.2.0.0-10.2.255.255&"+future), blobRead("c1", "x"), nil, azerr.AuthorizationSourceIPMismatch},
		{"single source IP mismatch", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&sip=10.1.2.4&"+future), blobRead("c1", "x"), nil, azerr.AuthorizationSourceIPMismatch},
		{"https only over http", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&spr=https&"+future), blobRead("c1", "x"), nil, azerr.AuthorizationProtocolMismatch},
		{"https only over https", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&spr=https&"+future), blobRead("c1", "x"), func(r *http.Request) { r.TLS = &tls.ConnectionState{} }, 0},
		{"https,http over http", "c1/x", mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&spr=https,http&"+future), blobRead("c1", "x"), nil, 0},
		{"user delegation SAS", "c1/x", containerSAS + "&skoid=00000000-0000-0000-0000-000000000000", blobRead("c1", "x"), nil, azerr.AuthenticationFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, runSAS(t, a, Blob, tt.path, tt.query, tt.need, tt.mut), tt.code)
		})
	}
}

func replaceParam(query, name, value string) string {
	q, _ := url.ParseQuery(query)
	q.Set(name, value)
	return q.Encode()
}

func TestServiceSASBadSignatureDetail(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	q := mintServiceSAS(t, []byte("not the key"), sas.Blob, "c1", "", "", sv+"&sr=c&sp=r&"+future)
	err := runSAS(t, a, Blob, "c1/x", q, blobRead("c1", "x"), nil)
	e := wantCode(t, err, azerr.AuthenticationFailed, 403)
	want := "Signature did not match. String to sign used was r\n\n2027-01-01T00:00:00Z\n/blob/devstoreaccount1/c1\n\n\n\n2026-12-06\nc\n\n\n\n\n\n\n"
	if detail(e) != want {
		t.Fatalf("detail\n got %q\nwant %q", detail(e), want)
	}
}

func TestServiceSASFileQueueTable(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	key := devKey()
	shareSAS := mintServiceSAS(t, key, sas.File, "share", "", "", "sv=2026-06-06&sr=s&sp=rcwdl&"+future)
	fileSAS := mintServiceSAS(t, key, sas.File, "share", "dir/f.txt", "", "sv=2026-06-06&sr=f&sp=r&"+future)
	queueSAS := mintServiceSAS(t, key, sas.Queue, "q1", "", "", "sv=2020-02-10&sp=ap&"+future)
	tableSAS := mintServiceSAS(t, key, sas.Table, "mytable", "", "", "sv=2019-02-02&tn=mytable&sp=raud&spk=b&srk=5&epk=d&erk=5&"+future)
	pk := func(s string) *string { return &s }
	entity := func(table, p, r string) Access {
		return Access{Resource: ResObject, Perms: "r", Container: table, PartitionKey: pk(p), RowKey: pk(r)}
	}
	tests := []struct {
		name  string
		svc   Service
		query string
		need  Access
		code  azerr.Code
	}{
		{"share SAS on a file", File, shareSAS, Access{Resource: ResObject, Perms: "w", Container: "share", Object: "a/b.txt"}, 0},
		{"share SAS lists a directory", File, shareSAS, Access{Resource: ResContainer, Perms: "l", Container: "share", Object: "a"}, 0},
		{"file SAS on its file", File, fileSAS, Access{Resource: ResObject, Perms: "r", Container: "share", Object: "dir/f.txt"}, 0},
		{"file SAS on another file", File, fileSAS, Access{Resource: ResObject, Perms: "r", Container: "share", Object: "dir/g.txt"}, azerr.AuthenticationFailed},
		{"file SAS write", File, fileSAS, Access{Resource: ResObject, Perms: "w", Container: "share", Object: "dir/f.txt"}, azerr.AuthorizationPermissionMismatch},
		{"queue SAS add message", Queue, queueSAS, Access{Resource: ResObject, Perms: "a", Container: "q1"}, 0},
		{"queue SAS peek", Queue, queueSAS, Access{Resource: ResObject, Perms: "r", Container: "q1"}, azerr.AuthorizationPermissionMismatch},
		{"queue SAS on another queue", Queue, queueSAS, Access{Resource: ResObject, Perms: "a", Container: "q2"}, azerr.AuthenticationFailed},
		{"queue SAS clear messages", Queue, queueSAS, Access{Resource: ResObject, Perms: "d", Container: "q1", ServiceSASDenied: true}, azerr.AuthorizationFailure},
		{"table SAS in range", Table, tableSAS, entity("mytable", "c", "0"), 0},
		{"table SAS table name any case", Table, tableSAS, entity("MyTable", "c", "0"), 0},
		{"table SAS lower bound row inclusive", Table, tableSAS, entity("mytable", "b", "5"), 0},
		{"table SAS below lower row", Table, tableSAS, entity("mytable", "b", "4"), azerr.AuthorizationFailure},
		{"table SAS below lower partition", Table, tableSAS, entity("mytable", "a", "9"), azerr.AuthorizationFailure},
		{"table SAS upper bound inclusive", Table, tableSAS, entity("mytable", "d", "5"), 0},
		{"table SAS above upper row", Table, tableSAS, entity("mytable", "d", "6"), azerr.AuthorizationFailure},
		{"table SAS above upper partition", Table, tableSAS, entity("mytable", "e", "0"), azerr.AuthorizationFailure},
		{"table SAS entity operation without keys", Table, tableSAS, Access{Resource: ResObject, Perms: "r", Container: "mytable"}, azerr.AuthorizationFailure},
		{"table SAS entity operation without row key", Table, tableSAS, Access{Resource: ResObject, Perms: "r", Container: "mytable", PartitionKey: pk("c")}, azerr.AuthorizationFailure},
		{"table SAS query confined to the range", Table, tableSAS, Access{Resource: ResObject, Perms: "r", Container: "mytable", KeyRangeApplied: true}, 0},
		{"table SAS on another table", Table, tableSAS, entity("other", "c", "0"), azerr.AuthorizationFailure},
		{"table SAS create table", Table, tableSAS, Access{Resource: ResContainer, Perms: "a", Container: "mytable", ServiceSASDenied: true}, azerr.AuthorizationFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, runSAS(t, a, tt.svc, "x", tt.query, tt.need, nil), tt.code)
		})
	}
}

func TestStoredAccessPolicy(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	key := devKey()
	// The ACL is read at every request, as the services do.
	acl := map[string]*Policy{
		"full":   {Expiry: testNow.Add(time.Hour), Permission: "rw"},
		"noperm": {Expiry: testNow.Add(time.Hour)},
		"old":    {Start: testNow.Add(-2 * time.Hour), Expiry: testNow.Add(-time.Hour), Permission: "r"},
		"empty":  {},
	}
	lookup := func(id string) (*Policy, error) { return acl[id], nil }
	need := blobRead("c1", "x")
	need.Policy = lookup
	sign := func(q string) string { return mintServiceSAS(t, key, sas.Blob, "c1", "", "", sv+"&sr=c&"+q) }
	tests := []struct {
		name, query string
		code        azerr.Code
	}{
		{"policy gives expiry and permissions", sign("si=full"), 0},
		{"SAS gives permissions the policy lacks", sign("si=noperm&sp=r"), 0},
		{"permissions in neither", sign("si=noperm"), azerr.AuthenticationFailed},
		{"permissions in both", sign("si=full&sp=r"), azerr.AuthenticationFailed},
		{"expiry in both", sign("si=noperm&sp=r&" + future), azerr.AuthenticationFailed},
		{"start in both", sign("si=old&st=2026-01-01"), azerr.AuthenticationFailed},
		{"expired policy", sign("si=old"), azerr.AuthenticationFailed},
		{"policy with nothing, SAS with everything", sign("si=empty&sp=r&" + future), 0},
		{"unknown identifier", sign("si=nope&sp=r&" + future), azerr.AuthenticationFailed},
		{"policy permissions apply", sign("si=full"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, runSAS(t, a, Blob, "c1/x", tt.query, need, nil), tt.code)
		})
	}

	// Permission from the policy, not the operation's letter.
	del := need
	del.Perms = "d"
	wantResult(t, runSAS(t, a, Blob, "c1/x", sign("si=full"), del, nil), azerr.AuthorizationPermissionMismatch)

	// Editing or removing the policy takes effect on the next request.
	q := sign("si=full")
	wantResult(t, runSAS(t, a, Blob, "c1/x", q, need, nil), 0)
	acl["full"] = &Policy{Expiry: testNow.Add(-time.Minute), Permission: "rw"}
	wantResult(t, runSAS(t, a, Blob, "c1/x", q, need, nil), azerr.AuthenticationFailed)
	acl["full"] = &Policy{Expiry: testNow.Add(time.Hour), Permission: "w"}
	wantResult(t, runSAS(t, a, Blob, "c1/x", q, need, nil), azerr.AuthorizationPermissionMismatch)
	delete(acl, "full")
	wantResult(t, runSAS(t, a, Blob, "c1/x", q, need, nil), azerr.AuthenticationFailed)

	// A resource without an ACL knows no identifier.
	noACL := blobRead("c1", "x")
	wantResult(t, runSAS(t, a, Blob, "c1/x", sign("si=full"), noACL, nil), azerr.AuthenticationFailed)

	// A failing lookup (the container is gone) is passed through.
	gone := blobRead("c1", "x")
	gone.Policy = func(string) (*Policy, error) { return nil, azerr.New(azerr.ContainerNotFound) }
	wantResult(t, runSAS(t, a, Blob, "c1/x", sign("si=full"), gone, nil), azerr.ContainerNotFound)

	// Identifiers are at most 64 characters.
	long := "p1234567890123456789012345678901234567890123456789012345678901234"
	wantResult(t, runSAS(t, a, Blob, "c1/x", sign("si="+long), need, nil), azerr.AuthenticationFailed)
}

func TestAccountSAS(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	key := devKey()
	blobSAS := mintAccountSAS(t, key, "sv=2026-12-06&ss=b&srt=co&sp=rl&"+future)
	oldSAS := mintAccountSAS(t, key, "sv=2019-02-02&ss=qt&srt=sco&sp=raup&"+future)
	tests := []struct {
		name  string
		svc   Service
		query string
		need  Access
		code  azerr.Code
	}{
		{"read blob", Blob, blobSAS, blobRead("c", "b"), 0},
		{"list blobs", Blob, blobSAS, Access{Resource: ResContainer, Perms: "l", Container: "c"}, 0},
		{"account SAS may create containers", Blob, mintAccountSAS(t, key, sv+"&ss=b&srt=c&sp=c&"+future), Access{Resource: ResContainer, Perms: "c", Container: "c", ServiceSASDenied: true}, 0},
		{"wrong service", Queue, blobSAS, Access{Resource: ResObject, Perms: "r", Container: "q"}, azerr.AuthorizationServiceMismatch},
		{"wrong resource type", Blob, blobSAS, Access{Resource: ResService, Perms: "r"}, azerr.AuthorizationResourceTypeMismatch},
		{"wrong permission", Blob, blobSAS, Access{Resource: ResObject, Perms: "w", Container: "c", Object: "b"}, azerr.AuthorizationPermissionMismatch},
		{"AccountPerms take precedence", Blob, blobSAS, Access{Resource: ResObject, Perms: "r", AccountPerms: "w", Container: "c", Object: "b"}, azerr.AuthorizationPermissionMismatch},
		{"AccountPerms allow", Blob, blobSAS, Access{Resource: ResObject, Perms: "w", AccountPerms: "l", Container: "c", Object: "b"}, 0},
		{"sv 2019-02-02 layout, queue", Queue, oldSAS, Access{Resource: ResObject, Perms: "p", Container: "q"}, 0},
		{"sv 2019-02-02 layout, table", Table, oldSAS, Access{Resource: ResService, Perms: "r"}, 0},
		{"sv 2019-02-02 layout, wrong service", File, oldSAS, Access{Resource: ResService, Perms: "r"}, azerr.AuthorizationServiceMismatch},
		{"expired", Blob, mintAccountSAS(t, key, sv+"&ss=b&srt=o&sp=r&se=2026-11-22T11:00Z"), blobRead("c", "b"), azerr.AuthenticationFailed},
		{"not yet valid", Blob, mintAccountSAS(t, key, sv+"&ss=b&srt=o&sp=r&st=2026-11-23&"+future), blobRead("c", "b"), azerr.AuthenticationFailed},
		{"no expiry", Blob, mintAccountSAS(t, key, sv+"&ss=b&srt=o&sp=r"), blobRead("c", "b"), azerr.AuthenticationFailed},
		{"no permissions", Blob, mintAccountSAS(t, key, sv+"&ss=b&srt=o&"+future), blobRead("c", "b"), azerr.AuthenticationFailed},
		{"wrong key", Blob, mintAccountSAS(t, []byte("x"), sv+"&ss=b&srt=o&sp=r&"+future), blobRead("c", "b"), azerr.AuthenticationFailed},
		{"second key", Blob, mintAccountSAS(t, testKey2(), sv+"&ss=b&srt=o&sp=r&"+future), blobRead("c", "b"), 0},
		{"tampered services", Blob, replaceParam(mintAccountSAS(t, key, sv+"&ss=q&srt=o&sp=r&"+future), "ss", "bq"), blobRead("c", "b"), azerr.AuthenticationFailed},
		{"ip mismatch", Blob, mintAccountSAS(t, key, sv+"&ss=b&srt=o&sp=r&sip=192.168.0.1&"+future), blobRead("c", "b"), azerr.AuthorizationSourceIPMismatch},
		{"https only", Blob, mintAccountSAS(t, key, sv+"&ss=b&srt=o&sp=r&spr=https&"+future), blobRead("c", "b"), azerr.AuthorizationProtocolMismatch},
		{"encryption scope signed", Blob, mintAccountSAS(t, key, sv+"&ss=b&srt=o&sp=r&ses=scope&"+future), blobRead("c", "b"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, runSAS(t, a, tt.svc, "c/b", tt.query, tt.need, nil), tt.code)
		})
	}
}

func TestAccountSASSignatureCheckedAtAuthenticate(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	q := mintAccountSAS(t, []byte("x"), sv+"&ss=b&srt=o&sp=r&"+future)
	r := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/c/b?"+q, nil)
	_, err := a.Authenticate(r, Blob, DevAccount)
	e := wantCode(t, err, azerr.AuthenticationFailed, 403)
	if want := "Signature did not match. String to sign used was devstoreaccount1\nr\nb\no\n\n2027-01-01T00:00:00Z\n\n\n2026-12-06\n\n"; detail(e) != want {
		t.Fatalf("detail %q", detail(e))
	}
}

// Anonymous requests: allowed only where the service offers public read
// access and the resource grants it. Azure answers an anonymous read of a
// private blob resource with 404 ResourceNotFound, hiding whether it
// exists; lazuli does the same for every Blob operation the service offers
// to public access. Every other anonymous request (other services, Blob
// operations never public such as writes or List Containers) answers 401
// NoAuthenticationInformation.
func TestAnonymousPrivateBlobReadIsResourceNotFound(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	r := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/c/b", nil)
	id, err := a.Authenticate(r, Blob, DevAccount)
	if err != nil || id.Kind != Anonymous {
		t.Fatalf("%+v %v", id, err)
	}
	public := func(ok bool, err error) func() (bool, error) { return func() (bool, error) { return ok, err } }
	tests := []struct {
		name string
		need Access
		code azerr.Code
	}{
		{"public blob read", Access{Service: Blob, Resource: ResObject, Perms: "r", Container: "c", Object: "b", PublicRead: public(true, nil)}, 0},
		{"private blob read", Access{Service: Blob, Resource: ResObject, Perms: "r", Container: "c", Object: "b", PublicRead: public(false, nil)}, azerr.ResourceNotFound},
		{"private container list", Access{Service: Blob, Resource: ResContainer, Perms: "l", Container: "c", PublicRead: public(false, nil)}, azerr.ResourceNotFound},
		{"blob write", Access{Service: Blob, Resource: ResObject, Perms: "w", Container: "c", Object: "b"}, azerr.NoAuthenticationInformation},
		{"list containers", Access{Service: Blob, Resource: ResService, Perms: "l"}, azerr.NoAuthenticationInformation},
		{"queue", Access{Service: Queue, Resource: ResObject, Perms: "r", Container: "q", PublicRead: public(false, nil)}, azerr.NoAuthenticationInformation},
		{"table", Access{Service: Table, Resource: ResObject, Perms: "r", Container: "t"}, azerr.NoAuthenticationInformation},
		{"lookup error passes through", Access{Service: Blob, Resource: ResObject, Perms: "r", Container: "c", Object: "b", PublicRead: public(false, azerr.New(azerr.ContainerNotFound))}, azerr.ContainerNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, a.Authorize(id, r, tt.need), tt.code)
		})
	}
	if err := a.Authorize(nil, r, Access{Service: Queue}); err == nil {
		t.Fatal("nil identity authorized")
	}
	plain := errors.New("boom")
	if err := a.Authorize(id, r, Access{Service: Blob, PublicRead: public(false, plain)}); !errors.Is(err, plain) {
		t.Fatalf("err = %v", err)
	}
}

func TestSharedKeyAuthorizesEverything(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	r := httptest.NewRequest("DELETE", "http://127.0.0.1:10000/devstoreaccount1/c", nil)
	for _, k := range []Kind{SharedKey, SharedKeyLite} {
		if err := a.Authorize(&Identity{Kind: k, Account: DevAccount}, r, Access{Service: Blob, Resource: ResContainer, ServiceSASDenied: true}); err != nil {
			t.Fatal(err)
		}
	}
	// A SAS identity without parameters is refused, not trusted.
	wantResult(t, a.Authorize(&Identity{Kind: ServiceSAS, Account: DevAccount}, r, Access{Service: Blob}), azerr.AuthenticationFailed)
	wantResult(t, a.Authorize(&Identity{Kind: AccountSAS, Account: DevAccount}, r, Access{Service: Blob}), azerr.AuthenticationFailed)
}

func TestSASRawParamsExposed(t *testing.T) {
	a := MustAuthenticator(t, nil, false)
	q := mintServiceSAS(t, devKey(), sas.Blob, "c1", "b", "", sv+"&sr=b&sp=r&rsct=text/csv&"+future)
	r := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/c1/b?"+q, nil)
	id, err := a.Authenticate(r, Blob, DevAccount)
	if err != nil {
		t.Fatal(err)
	}
	if id.Kind != ServiceSAS || id.SAS.Raw["rsct"] != "text/csv" || id.SAS.Values.ContentType != "text/csv" {
		t.Fatalf("%+v", id.SAS)
	}
	if err := a.Authorize(id, r, Access{Service: Blob, Resource: ResObject, Perms: "r", Container: "c1", Object: "b"}); err != nil {
		t.Fatal(err)
	}
}

// FuzzAuthenticate drives arbitrary Authorization headers, dates and query
// strings through Authenticate and Authorize: refusals are Azure errors,
// never panics.
func FuzzAuthenticate(f *testing.F) {
	a := MustAuthenticator(f, nil, false)
	f.Add("SharedKey devstoreaccount1:abc=", "Sun, 22 Nov 2026 12:00:00 GMT", "comp=list", "c/b", uint8(0))
	f.Add("", "", "sv=2026-12-06&sr=c&sp=r&se=2027-01-01&sig=x", "c", uint8(1))
	f.Add("", "", "sv=2026-12-06&ss=bqtf&srt=sco&sp=rwdlacup&se=2027-01-01&sig=x&sip=10.0.0.0-10.255.255.255", "", uint8(2))
	f.Add("SharedKeyLite devstoreaccount1:x", "garbage", "sv=2019-02-02&tn=t&spk=a&sig=%2B", "t(PartitionKey='a',RowKey='b')", uint8(3))
	f.Add("", "", "sv=2026-12-06&sr=d&sdd=-1&sp=r&se=2027-01-01&sig=x&si=p", "c/a/b/c", uint8(4))
	f.Fuzz(func(t *testing.T, authz, date, query, path string, sel uint8) {
		u := &url.URL{Scheme: "http", Host: "127.0.0.1:10000", Path: "/devstoreaccount1/" + path, RawQuery: query}
		r := &http.Request{Method: "GET", URL: u, Header: http.Header{}, RemoteAddr: "10.0.0.1:1"}
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		if date != "" {
			r.Header.Set("x-ms-date", date)
		}
		svc := Service(sel % 4)
		id, err := a.Authenticate(r, svc, DevAccount)
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %T %v", err, err)
			}
			return
		}
		container, object, _ := strings.Cut(path, "/")
		pk := "p"
		need := Access{Service: svc, Resource: ResourceType("sco"[int(sel/4)%3]), Perms: "racwdlup", Container: container, Object: object,
			Snapshot: query, PartitionKey: &pk, RowKey: &path,
			Policy:     func(id string) (*Policy, error) { return &Policy{Permission: id}, nil },
			PublicRead: func() (bool, error) { return sel%2 == 0, nil }}
		if err := a.Authorize(id, r, need); err != nil {
			if _, ok := azerr.As(err); !ok {
				t.Fatalf("non-Azure error %T %v", err, err)
			}
		}
	})
}
