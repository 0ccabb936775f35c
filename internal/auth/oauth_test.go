package auth

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sas"
	"github.com/lazuli-storage/lazuli/internal/azerr"
)

func oauthAuthenticator() *Authenticator {
	return New(Config{OAuth: true, Now: func() time.Time { return testNow }})
}

func testJWT(claims map[string]any) string {
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	return enc(map[string]string{"alg": "RS256"}) + "." + enc(claims) + "."
}

func goodClaims() map[string]any {
	return map[string]any{"iss": "https://sts.windows.net/t/", "aud": "https://storage.azure.com", "oid": "o", "tid": "t",
		"nbf": testNow.Add(-time.Minute).Unix(), "exp": testNow.Add(time.Hour).Unix(), "iat": testNow.Add(-time.Minute).Unix()}
}

func bearerRequest(token string, secure bool) *http.Request {
	r := httptest.NewRequest("GET", "https://127.0.0.1:10000/devstoreaccount1/c?restype=container", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	if !secure {
		r.TLS = nil
	} else if r.TLS == nil {
		r.TLS = &tls.ConnectionState{}
	}
	return r
}

func TestBearerToken(t *testing.T) {
	a := oauthAuthenticator()
	id, err := a.Authenticate(bearerRequest(testJWT(goodClaims()), true), Blob, DevAccount)
	if err != nil || id.Kind != Bearer || id.Token.ObjectID != "o" {
		t.Fatalf("good token: %+v %v", id, err)
	}
	if err := a.Authorize(id, bearerRequest("", true), Access{Service: Blob, Perms: "w"}); err != nil {
		t.Fatalf("bearer not authorized: %v", err)
	}
	// Over plain HTTP the scheme is refused.
	_, err = a.Authenticate(bearerRequest(testJWT(goodClaims()), false), Blob, DevAccount)
	wantResult(t, err, azerr.AuthenticationFailed)
	// A bad token is 401 InvalidAuthenticationInfo with a challenge.
	c := goodClaims()
	c["exp"] = testNow.Add(-time.Second).Unix()
	_, err = a.Authenticate(bearerRequest(testJWT(c), true), Blob, DevAccount)
	e, ok := azerr.As(err)
	if !ok || e.Code != azerr.InvalidAuthenticationInfo || e.Status != 401 || e.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("expired token: %+v", err)
	}
	// An unknown account is refused whatever the token.
	_, err = a.Authenticate(bearerRequest(testJWT(goodClaims()), true), Blob, "nosuch")
	wantResult(t, err, azerr.AuthenticationFailed)
	// Without OAuth, Bearer is an unsupported scheme.
	_, err = MustAuthenticator(t, nil, false).Authenticate(bearerRequest(testJWT(goodClaims()), true), Blob, DevAccount)
	wantResult(t, err, azerr.AuthenticationFailed)
}

// TestUserDelegationSASRules: a user delegation SAS verifies with the key
// derived from the account key, only on Blob, only within the key's
// lifetime, never with a stored policy, and never without OAuth.
func TestUserDelegationSASRules(t *testing.T) {
	key := devKey()
	kStart, kExpiry := testNow.Add(-time.Hour), testNow.Add(time.Hour)
	mint := func(mut func(*sas.Values)) string {
		v := &sas.Values{Version: "2025-11-05", Resource: "b", Permissions: "r", Expiry: "2027-01-01T00:00:00Z",
			KeyOID: "o", KeyTID: "t", KeyStart: kStart.Format(sas.KeyTimeLayout), KeyExpiry: kExpiry.Format(sas.KeyTimeLayout),
			KeyService: "b", KeyVersion: "2025-11-05"}
		if mut != nil {
			mut(v)
		}
		udk := sas.UserDelegationKey(key, "o", "t", kStart, kExpiry, "b", "2025-11-05", "")
		return sas.SignUserDelegation(DevAccount, udk, "c", "b", "", v)
	}
	a := oauthAuthenticator()
	wantResult(t, runSAS(t, a, Blob, "c/b", mint(nil), blobRead("c", "b"), nil), 0)
	wantResult(t, runSAS(t, a, Blob, "c/other", mint(nil), blobRead("c", "other"), nil), azerr.AuthenticationFailed)
	wantResult(t, runSAS(t, a, Blob, "c/b", mint(nil), Access{Resource: ResObject, Perms: "w", Container: "c", Object: "b"}, nil), azerr.AuthorizationPermissionMismatch)
	// Another oid than the key was issued to: a different key.
	q, _ := url.ParseQuery(mint(nil))
	q.Set("skoid", "someone-else")
	wantResult(t, runSAS(t, a, Blob, "c/b", q.Encode(), blobRead("c", "b"), nil), azerr.AuthenticationFailed)
	// The key's lifetime bounds the SAS.
	expired := New(Config{OAuth: true, Now: func() time.Time { return kExpiry.Add(time.Minute) }})
	wantResult(t, runSAS(t, expired, Blob, "c/b", mint(nil), blobRead("c", "b"), nil), azerr.AuthenticationFailed)
	wantResult(t, runSAS(t, a, Blob, "c/b", mint(func(v *sas.Values) { v.Identifier = "p" }), blobRead("c", "b"), nil), azerr.AuthenticationFailed)
	wantResult(t, runSAS(t, a, Queue, "c/b", mint(nil), Access{Resource: ResObject, Perms: "r", Container: "c"}, nil), azerr.AuthenticationFailed)
	// Without OAuth no key was ever issued.
	_, err := MustAuthenticator(t, nil, false).Authenticate(httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/c/b?"+mint(nil), nil), Blob, DevAccount)
	wantResult(t, err, azerr.AuthenticationFailed)
}
