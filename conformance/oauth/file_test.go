package oauth_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	fileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/lazuli-storage/lazuli/emulator"
)

// TestFileCopySourceBearer: under OAuth, Put Range From URL reads a
// same-account file with an x-ms-copy-source-authorization bearer token
// (and not without: the caller's own token does not reach the source),
// and Copy File reads a same-account file with the caller's identity.
func TestFileCopySourceBearer(t *testing.T) {
	s := start(t, true)
	ctx := context.Background()
	sk, err := fileservice.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	svc, err := fileservice.NewClientWithSharedKeyCredential(s.url("file"), sk, &fileservice.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = svc.CreateShare(ctx, "tokens", nil)
	must(t, err)
	content := []byte("bytes read with a token")
	src := svc.NewShareClient("tokens").NewRootDirectoryClient().NewFileClient("src")
	_, err = src.Create(ctx, int64(len(content)), nil)
	must(t, err)
	_, err = src.UploadRange(ctx, 0, nopCloser{bytes.NewReader(content)}, nil)
	must(t, err)

	cred := goodToken()
	tok, err := cred.GetToken(ctx, policyOpts)
	must(t, err)
	opts := &file.ClientOptions{ClientOptions: s.opts(), FileRequestIntent: to.Ptr(file.ShareTokenIntentBackup)}
	dst, err := file.NewClient(s.url("file")+"tokens/dst", cred, opts)
	must(t, err)
	_, err = dst.Create(ctx, int64(len(content)), nil)
	must(t, err)
	_, err = dst.UploadRangeFromURL(ctx, src.URL(), 0, 0, int64(len(content)), nil)
	refused(t, err, http.StatusNotFound, "CannotVerifyCopySource")
	_, err = dst.UploadRangeFromURL(ctx, src.URL(), 0, 0, int64(len(content)), &file.UploadRangeFromURLOptions{CopySourceAuthorization: to.Ptr("Bearer " + tok.Token)})
	must(t, err)
	expectContent(t, dst, content)
	// A token that does not pass is the source's refusal.
	bad := goodToken()
	bad.aud = "https://management.azure.com"
	badTok, _ := bad.GetToken(ctx, policyOpts)
	_, err = dst.UploadRangeFromURL(ctx, src.URL(), 0, 0, int64(len(content)), &file.UploadRangeFromURLOptions{CopySourceAuthorization: to.Ptr("Bearer " + badTok.Token)})
	refused(t, err, http.StatusForbidden, "CannotVerifyCopySource")

	cp, err := file.NewClient(s.url("file")+"tokens/copy", cred, opts)
	must(t, err)
	_, err = cp.StartCopyFromURL(ctx, src.URL(), nil)
	must(t, err)
	expectContent(t, cp, content)
}

func expectContent(t *testing.T, f *file.Client, want []byte) {
	t.Helper()
	dl, err := f.DownloadStream(context.Background(), nil)
	must(t, err)
	got, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if !bytes.Equal(got, want) {
		t.Fatalf("content %q, want %q", got, want)
	}
}

var policyOpts = policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// TestFileUserDelegationKey: Get User Delegation Key works on the File
// endpoint for a bearer caller (a key for the File service); a
// DelegatedUserTid the caller cannot delegate to is 403
// AuthenticationFailed, and Shared Key callers are refused.
func TestFileUserDelegationKey(t *testing.T) {
	s := start(t, true)
	ctx := context.Background()
	svc, err := fileservice.NewClient(s.url("file"), goodToken(), &fileservice.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	now := time.Now().UTC()
	info := fileservice.KeyInfo{Start: to.Ptr(now.Add(-5 * time.Minute).Format(time.RFC3339)), Expiry: to.Ptr(now.Add(5 * time.Minute).Format(time.RFC3339))}
	udc, err := svc.GetUserDelegationCredential(ctx, info, nil)
	must(t, err)
	if udc == nil {
		t.Fatal("no credential")
	}
	bad := info
	bad.DelegatedUserTenantID = to.Ptr("00000000-0000-0000-0000-000000000000")
	_, err = svc.GetUserDelegationCredential(ctx, bad, nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")
	sk, err := fileservice.NewSharedKeyCredential(emulator.Account, emulator.Key)
	must(t, err)
	skc, err := fileservice.NewClientWithSharedKeyCredential(s.url("file"), sk, &fileservice.ClientOptions{ClientOptions: s.opts()})
	must(t, err)
	_, err = skc.GetUserDelegationCredential(ctx, info, nil)
	refused(t, err, http.StatusForbidden, "AuthenticationFailed")
}
