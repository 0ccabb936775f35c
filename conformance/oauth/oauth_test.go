// Package oauth_test drives lazuli started with OAuth (the reference
// emulator's --oauth basic) over TLS through the official SDKs built with a
// token credential: bearer tokens on Blob, Queue and Table, Azure's errors
// for bad tokens, Get User Delegation Key and user delegation SAS.
package oauth_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/lazuli-storage/lazuli/emulator"
)

// testToken mints Azure AD shaped access tokens (JWT, unsigned: the
// server checks issuer, audience and lifetime only).
type testToken struct {
	iss, aud, oid, tid string
	nbf, exp           time.Time
	// groups and roles, when set, are the groups and roles claims.
	groups, roles []string
	// upn, when set, is the upn claim (a user's principal name).
	upn string
	// scopes records what the SDK asked for.
	scopes []string
}

func (c *testToken) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.scopes = append(c.scopes, o.Scopes...)
	return azcore.AccessToken{Token: c.jwt(), ExpiresOn: c.exp}, nil
}

func (c *testToken) jwt() string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now()
	claims := map[string]any{
		"iss": c.iss, "aud": c.aud, "oid": c.oid, "tid": c.tid,
		"nbf": c.nbf.Unix(), "exp": c.exp.Unix(), "iat": now.Add(-time.Minute).Unix(),
	}
	if c.groups != nil {
		claims["groups"] = c.groups
	}
	if c.roles != nil {
		claims["roles"] = c.roles
	}
	if c.upn != "" {
		claims["upn"] = c.upn
	}
	return enc(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + enc(claims) + "." + base64.RawURLEncoding.EncodeToString([]byte("not checked"))
}

const tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

func goodToken() *testToken {
	now := time.Now()
	return &testToken{iss: "https://sts.windows.net/" + tenant + "/", aud: "https://storage.azure.com",
		oid: "0b6c6d9e-1111-2222-3333-444455556666", tid: tenant, nbf: now.Add(-time.Minute), exp: now.Add(time.Hour)}
}

// server is a lazuli with TLS and OAuth, and a client transport that
// trusts its certificate and reaches it under any host name (the SDKs
// take the account for user delegation from the first label of the host).
type server struct {
	emu       *emulator.Emulator
	transport *http.Client
}

func start(t *testing.T, oauth bool) *server {
	t.Helper()
	return startWith(t, emulator.Options{OAuth: oauth})
}

// startWith starts lazuli over HTTPS with o (in memory, with the test
// certificate).
func startWith(t *testing.T, o emulator.Options) *server {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lazuli test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost", "devstoreaccount1.blob.localhost", "devstoreaccount1.queue.localhost", "devstoreaccount1.table.localhost", "devstoreaccount1.file.localhost", "devstoreaccount1.dfs.localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	o.InMemory, o.CertFile, o.KeyFile = true, certFile, keyFile
	emu, err := emulator.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	hosts := map[string]emulator.Service{"blob": emulator.Blob, "queue": emulator.Queue, "table": emulator.Table, "file": emulator.File, "dfs": emulator.Blob}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		// devstoreaccount1.<service>.localhost:<any> goes to that service.
		host, _, _ := net.SplitHostPort(addr)
		if labels := strings.Split(host, "."); len(labels) == 3 {
			if svc, ok := hosts[labels[1]]; ok {
				addr = emu.Addr(svc)
			}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &server{emu: emu, transport: &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, DialContext: dial}}}
}

// url returns the host-style endpoint of a service, as Azure's.
func (s *server) url(svc string) string {
	_, port, _ := net.SplitHostPort(s.emu.Addr(map[string]emulator.Service{"blob": emulator.Blob, "queue": emulator.Queue, "table": emulator.Table, "file": emulator.File}[svc]))
	return "https://devstoreaccount1." + svc + ".localhost:" + port + "/"
}

func (s *server) opts() azcore.ClientOptions {
	return azcore.ClientOptions{Transport: s.transport, Retry: policy.RetryOptions{MaxRetries: -1}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func refused(t *testing.T, err error, status int, code string) *azcore.ResponseError {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d %s, got %d %s", status, code, re.StatusCode, re.ErrorCode)
	}
	return re
}

// TestTokenCredentialOnEveryService: Blob, Queue and Table clients built
// with a token credential work against lazuli with OAuth.
func TestTokenCredentialOnEveryService(t *testing.T) {
	s := start(t, true)
	ctx := context.Background()
	cred := goodToken()

	bc, err := azblob.NewClient(s.url("blob"), cred, &azblob.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = bc.CreateContainer(ctx, "tokens", nil)
	must(t, err)
	_, err = bc.UploadBuffer(ctx, "tokens", "hello.txt", []byte("hello, token"), nil)
	must(t, err)
	resp, err := bc.DownloadStream(ctx, "tokens", "hello.txt", nil)
	must(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "hello, token" {
		t.Fatalf("downloaded %q", got)
	}
	if len(cred.scopes) == 0 || cred.scopes[0] != "https://storage.azure.com/.default" {
		t.Errorf("scopes asked for: %v", cred.scopes)
	}

	qc, err := azqueue.NewServiceClient(s.url("queue"), cred, &azqueue.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = qc.CreateQueue(ctx, "tokens", nil)
	must(t, err)
	_, err = qc.NewQueueClient("tokens").EnqueueMessage(ctx, "hello", nil)
	must(t, err)
	msgs, err := qc.NewQueueClient("tokens").DequeueMessage(ctx, nil)
	must(t, err)
	if len(msgs.Messages) != 1 || *msgs.Messages[0].MessageText != "hello" {
		t.Fatalf("dequeued %+v", msgs.Messages)
	}

	tc, err := aztables.NewServiceClient(s.url("table"), cred, &aztables.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = tc.CreateTable(ctx, "tokens", nil)
	must(t, err)
	ent, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r", "Value": 7})
	_, err = tc.NewClient("tokens").AddEntity(ctx, ent, nil)
	must(t, err)
	e, err := tc.NewClient("tokens").GetEntity(ctx, "p", "r", nil)
	must(t, err)
	if !bytes.Contains(e.Value, []byte(`"Value":7`)) {
		t.Fatalf("entity %s", e.Value)
	}
}

// TestBadTokenIs401InvalidAuthenticationInfoAsOnAzure: expired, not yet
// valid, foreign issuer, foreign audience and malformed tokens answer 401
// InvalidAuthenticationInfo with a "Bearer authorization_uri=...
// resource_id=https://storage.azure.com" challenge and the failed check as
// AuthenticationErrorDetail, through the SDK and on the wire. This is
// Azure's answer (the REST error-code table lists InvalidAuthenticationInfo
// as 401 "Please refer to the information in the www-authenticate header",
// and Azure answers a token from a foreign issuer with that code, that
// challenge and "Issuer validation failed. Issuer did not match."); the
// reference emulator answers 403 AuthenticationFailed instead.
func TestBadTokenIs401InvalidAuthenticationInfoAsOnAzure(t *testing.T) {
	s := start(t, true)
	ctx := context.Background()
	now := time.Now()
	cases := map[string]func(*testToken){
		"expired":         func(c *testToken) { c.exp = now.Add(-time.Minute); c.nbf = now.Add(-time.Hour) },
		"not yet valid":   func(c *testToken) { c.nbf = now.Add(time.Hour); c.exp = now.Add(2 * time.Hour) },
		"issuer":          func(c *testToken) { c.iss = "https://evil.example.com/" + tenant + "/" },
		"audience":        func(c *testToken) { c.aud = "https://management.azure.com" },
		"other account":   func(c *testToken) { c.aud = "https://someoneelse.blob.core.windows.net" },
		"queue audience":  func(c *testToken) { c.aud = "https://devstoreaccount1.queue.core.windows.net" },
		"account allowed": nil,
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			cred := goodToken()
			if spoil != nil {
				spoil(cred)
			} else {
				cred.aud = "https://devstoreaccount1.blob.core.windows.net/"
			}
			bc, err := azblob.NewClient(s.url("blob"), cred, &azblob.ClientOptions{ClientOptions: s.opts()})
			must(t, err)
			_, err = bc.ServiceClient().GetProperties(ctx, nil)
			if spoil == nil {
				must(t, err)
				return
			}
			re := refused(t, err, http.StatusUnauthorized, "InvalidAuthenticationInfo")
			if !strings.HasPrefix(re.RawResponse.Header.Get("WWW-Authenticate"), "Bearer authorization_uri=https://login.microsoftonline.com/") {
				t.Errorf("WWW-Authenticate: %q", re.RawResponse.Header.Get("WWW-Authenticate"))
			}
		})
	}
	// Raw: a token that is no JWT, and the detail of an expired one.
	for token, detail := range map[string]string{
		"not-a-jwt": "The token is not a JWT",
		func() string {
			c := goodToken()
			c.exp = now.Add(-time.Minute)
			c.nbf = now.Add(-time.Hour)
			return c.jwt()
		}(): "Lifetime validation failed. The token is expired.",
	} {
		req, _ := http.NewRequest("GET", s.url("blob")+"?comp=list", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("x-ms-version", "2025-11-05")
		resp, err := s.transport.Do(req)
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Header.Get("x-ms-error-code") != "InvalidAuthenticationInfo" ||
			!strings.Contains(string(body), "<AuthenticationErrorDetail>"+detail) {
			t.Errorf("token %.20s: %d %s %s", token, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
		}
	}
}

// TestBearerWithoutOAuthIsRefused: without OAuth a bearer token is an
// unsupported scheme (403 AuthenticationFailed), as Azure answers an
// account that does not accept Azure AD.
func TestBearerWithoutOAuthIsRefused(t *testing.T) {
	s := start(t, false)
	bc, err := azblob.NewClient(s.url("blob"), goodToken(), &azblob.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = bc.ServiceClient().GetProperties(context.Background(), nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")
}

// TestUserDelegationSAS: a key from Get User Delegation Key signs SAS
// through azblob's helpers; they are verified like any SAS: scope,
// permissions, expiry and signature.
func TestUserDelegationSAS(t *testing.T) {
	s := start(t, true)
	ctx := context.Background()
	cred := goodToken()
	svc, err := service.NewClient(s.url("blob"), cred, &service.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = svc.CreateContainer(ctx, "delegated", nil)
	must(t, err)
	_, err = svc.NewContainerClient("delegated").NewBlockBlobClient("doc.txt").UploadBuffer(ctx, []byte("delegated read"), nil)
	must(t, err)

	now := time.Now().UTC()
	udc, err := svc.GetUserDelegationCredential(ctx, service.KeyInfo{
		Start: to.Ptr(now.Add(-time.Minute).Format(sas.TimeFormat)), Expiry: to.Ptr(now.Add(time.Hour).Format(sas.TimeFormat))}, nil)
	must(t, err)

	sign := func(v sas.BlobSignatureValues) string {
		t.Helper()
		v.Protocol = sas.ProtocolHTTPS
		qp, err := v.SignWithUserDelegation(udc)
		must(t, err)
		u := s.url("blob") + v.ContainerName
		if v.BlobName != "" {
			u += "/" + v.BlobName
		}
		return u + "?" + qp.Encode()
	}
	blobOpts := &blob.ClientOptions{ClientOptions: s.opts()}

	// Read with a blob SAS.
	readURL := sign(sas.BlobSignatureValues{ContainerName: "delegated", BlobName: "doc.txt",
		ExpiryTime: now.Add(30 * time.Minute), Permissions: to.Ptr(sas.BlobPermissions{Read: true}).String()})
	bl, err := blob.NewClientWithNoCredential(readURL, blobOpts)
	must(t, err)
	resp, err := bl.DownloadStream(ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "delegated read" {
		t.Fatalf("read %q", got)
	}
	// The same SAS cannot write.
	bb, err := blockblob.NewClientWithNoCredential(readURL, &blockblob.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = bb.UploadBuffer(ctx, []byte("x"), nil)
	refused(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")

	// A container SAS lists.
	listURL := sign(sas.BlobSignatureValues{ContainerName: "delegated", ExpiryTime: now.Add(30 * time.Minute),
		Permissions: to.Ptr(sas.ContainerPermissions{List: true}).String()})
	cc, err := container.NewClientWithNoCredential(listURL, &container.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	page, err := cc.NewListBlobsFlatPager(nil).NextPage(ctx)
	must(t, err)
	if len(page.Segment.BlobItems) != 1 {
		t.Fatalf("listed %d blobs", len(page.Segment.BlobItems))
	}

	// A tampered signature, another blob and an expired SAS are refused.
	tampered := strings.Replace(readURL, "sp=r", "sp=rw", 1)
	bt, _ := blob.NewClientWithNoCredential(tampered, blobOpts)
	_, err = bt.GetProperties(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")
	other, _ := blob.NewClientWithNoCredential(strings.Replace(readURL, "doc.txt", "other.txt", 1), blobOpts)
	_, err = other.GetProperties(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")
	expired := sign(sas.BlobSignatureValues{ContainerName: "delegated", BlobName: "doc.txt", StartTime: now.Add(-2 * time.Hour),
		ExpiryTime: now.Add(-time.Hour), Permissions: to.Ptr(sas.BlobPermissions{Read: true}).String()})
	be, _ := blob.NewClientWithNoCredential(expired, blobOpts)
	_, err = be.GetProperties(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")

	// Get User Delegation Key needs a bearer token: Shared Key is refused.
	sk, err := service.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	skc, err := service.NewClientWithSharedKeyCredential(s.url("blob"), sk, &service.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = skc.GetUserDelegationCredential(ctx, service.KeyInfo{
		Start: to.Ptr(now.Format(sas.TimeFormat)), Expiry: to.Ptr(now.Add(time.Hour).Format(sas.TimeFormat))}, nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")
	// A key may live at most seven days.
	_, err = svc.GetUserDelegationCredential(ctx, service.KeyInfo{
		Start: to.Ptr(now.Format(sas.TimeFormat)), Expiry: to.Ptr(now.Add(8 * 24 * time.Hour).Format(sas.TimeFormat))}, nil)
	refused(t, err, http.StatusBadRequest, "InvalidXmlNodeValue")
}

// TestUserDelegationSASWithoutOAuthIsRefused: a server without OAuth
// refuses user delegation SAS (it issued no key) and Get User Delegation
// Key.
func TestUserDelegationSASWithoutOAuthIsRefused(t *testing.T) {
	s := start(t, false)
	ctx := context.Background()
	now := time.Now().UTC()
	// A user delegation SAS as azblob writes one (the signature does not
	// matter: without OAuth no key was ever issued).
	q := url.Values{"sv": {"2025-11-05"}, "sr": {"b"}, "sp": {"r"}, "se": {now.Add(time.Hour).Format(sas.TimeFormat)},
		"skoid": {"o"}, "sktid": {tenant}, "skt": {now.Add(-time.Minute).Format(sas.TimeFormat)},
		"ske": {now.Add(time.Hour).Format(sas.TimeFormat)}, "sks": {"b"}, "skv": {"2025-11-05"}, "spr": {"https"},
		"sig": {base64.StdEncoding.EncodeToString(make([]byte, 32))}}
	bl, _ := blob.NewClientWithNoCredential(s.url("blob")+"c/b?"+q.Encode(), &blob.ClientOptions{ClientOptions: s.opts()})
	_, err := bl.GetProperties(ctx, nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")
}
