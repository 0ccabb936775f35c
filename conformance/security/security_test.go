// Package security_test checks, through the official SDKs, that lazuli
// refuses every caller it must refuse on every service: a wrong key, an
// anonymous caller on private data, an expired, tampered or out-of-scope SAS,
// a SAS without the permission, and a SAS whose stored policy was revoked.
package security_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	blobsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	queuesas "github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

const wrongKey = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="

// refused asserts err is an HTTP error with the given status and code.
func refused(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d %s, got %d %s", status, code, re.StatusCode, re.ErrorCode)
	}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// rawGet sends an unsigned GET and returns status, error code and body.
func rawGet(t *testing.T, tg *harness.Target, url string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("x-ms-version", "2025-11-05")
	resp, err := tg.HTTP.Do(req)
	ok(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("x-ms-error-code"), string(b)
}

func TestWrongKeyIsRefusedOnEveryService(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		bad := *tg
		bad.Key = wrongKey
		_, err := bad.Blob(t).ServiceClient().GetProperties(ctx, nil)
		refused(t, err, 403, "AuthenticationFailed")
		_, err = bad.Queue(t).GetServiceProperties(ctx, nil)
		refused(t, err, 403, "AuthenticationFailed")
		_, err = bad.Table(t).GetProperties(ctx, nil)
		refused(t, err, 403, "AuthenticationFailed")
		_, err = bad.File(t).GetProperties(ctx, nil)
		refused(t, err, 403, "AuthenticationFailed")
		_, err = bad.File(t).NewListSharesPager(nil).NextPage(ctx)
		refused(t, err, 403, "AuthenticationFailed")
	})
}

func TestBlobAccessControl(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		client := tg.Blob(t)
		c1, c2 := harness.UniqueName("sec1"), harness.UniqueName("sec2")
		_, err := client.CreateContainer(ctx, c1, nil)
		ok(t, err)
		_, err = client.CreateContainer(ctx, c2, nil)
		ok(t, err)
		secret := "top secret"
		_, err = client.UploadBuffer(ctx, c1, "b", []byte(secret), nil)
		ok(t, err)
		_, err = client.UploadBuffer(ctx, c2, "b", []byte(secret), nil)
		ok(t, err)

		// Anonymous callers read nothing of a private container.
		status, code, body := rawGet(t, tg, tg.BlobURL+"/"+c1+"/b")
		if status < 400 || strings.Contains(body, secret) || code == "" {
			t.Fatalf("anonymous read of private blob: %d %s %q", status, code, body)
		}
		status, _, body = rawGet(t, tg, tg.BlobURL+"/"+c1+"?restype=container&comp=list")
		if status < 400 || strings.Contains(body, "<Name>b</Name>") {
			t.Fatalf("anonymous list of private container: %d %q", status, body)
		}

		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		ok(t, err)
		sign := func(v blobsas.BlobSignatureValues) string {
			qp, err := v.SignWithSharedKey(cred)
			ok(t, err)
			return qp.Encode()
		}
		blobOpts := &blob.ClientOptions{ClientOptions: tg.ClientOptions()}
		download := func(containerName, query string) error {
			bc, err := blob.NewClientWithNoCredential(tg.BlobURL+"/"+containerName+"/b?"+query, blobOpts)
			ok(t, err)
			resp, err := bc.DownloadStream(ctx, nil)
			if err != nil {
				return err
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != secret {
				t.Fatalf("downloaded %q", b)
			}
			return nil
		}
		readPerm := (&blobsas.ContainerPermissions{Read: true}).String()
		valid := sign(blobsas.BlobSignatureValues{Protocol: blobsas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
			Permissions: readPerm, ContainerName: c1})
		ok(t, download(c1, valid))

		// Expired.
		expired := sign(blobsas.BlobSignatureValues{Protocol: blobsas.ProtocolHTTPSandHTTP, StartTime: time.Now().Add(-2 * time.Hour),
			ExpiryTime: time.Now().Add(-time.Hour), Permissions: readPerm, ContainerName: c1})
		refused(t, download(c1, expired), 403, "AuthenticationFailed")

		// Tampered: widen the permissions without re-signing.
		tampered := strings.Replace(valid, "sp=r", "sp=rw", 1)
		if tampered == valid {
			t.Fatalf("token has no sp=r: %s", valid)
		}
		refused(t, download(c1, tampered), 403, "AuthenticationFailed")

		// Out of scope: a SAS for c1 used on c2.
		err = download(c2, valid)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != 403 {
			t.Fatalf("SAS for %s used on %s: %v", c1, c2, err)
		}

		// Missing permission: a read SAS cannot write.
		bc, err := blob.NewClientWithNoCredential(tg.BlobURL+"/"+c1+"/b?"+valid, blobOpts)
		ok(t, err)
		_, err = bc.SetMetadata(ctx, map[string]*string{"x": to.Ptr("1")}, nil)
		refused(t, err, 403, "AuthorizationPermissionMismatch")

		// Stored access policy: works while present, refused at once when removed.
		cc := client.ServiceClient().NewContainerClient(c1)
		_, err = cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{ContainerACL: []*container.SignedIdentifier{{
			ID: to.Ptr("pol1"), AccessPolicy: &container.AccessPolicy{Expiry: to.Ptr(time.Now().Add(time.Hour).UTC().Truncate(time.Second)),
				Permission: to.Ptr("r")}}}})
		ok(t, err)
		withPolicy := sign(blobsas.BlobSignatureValues{Protocol: blobsas.ProtocolHTTPSandHTTP, Identifier: "pol1", ContainerName: c1})
		ok(t, download(c1, withPolicy))
		_, err = cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{})
		ok(t, err)
		refused(t, download(c1, withPolicy), 403, "AuthenticationFailed")

		// Public access "blob": anonymous reads of blobs work, listing does not.
		_, err = cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{Access: to.Ptr(container.PublicAccessTypeBlob)})
		ok(t, err)
		status, _, body = rawGet(t, tg, tg.BlobURL+"/"+c1+"/b")
		if status != 200 || body != secret {
			t.Fatalf("anonymous read of public blob: %d %q", status, body)
		}
		status, _, _ = rawGet(t, tg, tg.BlobURL+"/"+c1+"?restype=container&comp=list")
		if status < 400 {
			t.Fatalf("anonymous list with blob-level public access: %d", status)
		}
	})
}

func TestQueueAccessControl(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Queue(t)
		q1, q2 := harness.UniqueName("sec1"), harness.UniqueName("sec2")
		_, err := svc.CreateQueue(ctx, q1, nil)
		ok(t, err)
		_, err = svc.CreateQueue(ctx, q2, nil)
		ok(t, err)
		_, err = svc.NewQueueClient(q1).EnqueueMessage(ctx, "hello", nil)
		ok(t, err)

		status, _, body := rawGet(t, tg, tg.QueueURL+"/"+q1+"/messages?peekonly=true")
		if status < 400 || strings.Contains(body, "hello") {
			t.Fatalf("anonymous peek: %d %q", status, body)
		}

		cred, err := azqueue.NewSharedKeyCredential(tg.Account, tg.Key)
		ok(t, err)
		sign := func(v queuesas.QueueSignatureValues) string {
			qp, err := v.SignWithSharedKey(cred)
			ok(t, err)
			return qp.Encode()
		}
		opts := &azqueue.ClientOptions{ClientOptions: tg.ClientOptions()}
		peek := func(queue, query string) error {
			qc, err := azqueue.NewQueueClientWithNoCredential(tg.QueueURL+"/"+queue+"?"+query, opts)
			ok(t, err)
			_, err = qc.PeekMessages(ctx, nil)
			return err
		}
		readPerm := (&queuesas.QueuePermissions{Read: true}).String()
		valid := sign(queuesas.QueueSignatureValues{Protocol: queuesas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
			Permissions: readPerm, QueueName: q1})
		ok(t, peek(q1, valid))
		expired := sign(queuesas.QueueSignatureValues{Protocol: queuesas.ProtocolHTTPSandHTTP, StartTime: time.Now().Add(-2 * time.Hour),
			ExpiryTime: time.Now().Add(-time.Hour), Permissions: readPerm, QueueName: q1})
		refused(t, peek(q1, expired), 403, "AuthenticationFailed")
		refused(t, peek(q1, strings.Replace(valid, "sp=r", "sp=raup", 1)), 403, "AuthenticationFailed")
		var re *azcore.ResponseError
		if err := peek(q2, valid); !errors.As(err, &re) || re.StatusCode != 403 {
			t.Fatalf("SAS for %s used on %s: %v", q1, q2, err)
		}
		qc, err := azqueue.NewQueueClientWithNoCredential(tg.QueueURL+"/"+q1+"?"+valid, opts)
		ok(t, err)
		_, err = qc.EnqueueMessage(ctx, "nope", nil)
		refused(t, err, 403, "AuthorizationPermissionMismatch")

		admin := svc.NewQueueClient(q1)
		_, err = admin.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{{
			ID: to.Ptr("pol1"), AccessPolicy: &azqueue.AccessPolicy{Expiry: to.Ptr(time.Now().Add(time.Hour).UTC().Truncate(time.Second)),
				Permission: to.Ptr("r")}}}})
		ok(t, err)
		withPolicy := sign(queuesas.QueueSignatureValues{Protocol: queuesas.ProtocolHTTPSandHTTP, Identifier: "pol1", QueueName: q1})
		ok(t, peek(q1, withPolicy))
		_, err = admin.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{})
		ok(t, err)
		refused(t, peek(q1, withPolicy), 403, "AuthenticationFailed")
	})
}

func TestTableAccessControl(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		svc := tg.Table(t)
		t1, t2 := harness.UniqueTable("sec1"), harness.UniqueTable("sec2")
		_, err := svc.CreateTable(ctx, t1, nil)
		ok(t, err)
		_, err = svc.CreateTable(ctx, t2, nil)
		ok(t, err)
		_, err = svc.NewClient(t1).AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","Secret":"hidden"}`), nil)
		ok(t, err)
		_, err = svc.NewClient(t2).AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","Secret":"hidden"}`), nil)
		ok(t, err)

		status, _, body := rawGet(t, tg, tg.TableURL+"/"+t1+"()")
		if status < 400 || strings.Contains(body, "hidden") {
			t.Fatalf("anonymous query: %d %q", status, body)
		}

		cred, err := aztables.NewSharedKeyCredential(tg.Account, tg.Key)
		ok(t, err)
		sign := func(v aztables.SASSignatureValues) string {
			s, err := v.Sign(cred)
			ok(t, err)
			return s
		}
		opts := &aztables.ClientOptions{ClientOptions: tg.ClientOptions()}
		client := func(table, query string) *aztables.Client {
			c, err := aztables.NewClientWithNoCredential(tg.TableURL+"/"+table+"?"+query, opts)
			ok(t, err)
			return c
		}
		get := func(table, query string) error {
			_, err := client(table, query).GetEntity(ctx, "p", "r", nil)
			return err
		}
		readPerm := (aztables.SASPermissions{Read: true}).String()
		valid := sign(aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
			Permissions: readPerm, TableName: t1})
		ok(t, get(t1, valid))
		expired := sign(aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: time.Now().Add(-2 * time.Hour),
			ExpiryTime: time.Now().Add(-time.Hour), Permissions: readPerm, TableName: t1})
		refused(t, get(t1, expired), 403, "AuthenticationFailed")
		refused(t, get(t1, strings.Replace(valid, "sp=r", "sp=raud", 1)), 403, "AuthenticationFailed")
		var re *azcore.ResponseError
		if err := get(t2, valid); !errors.As(err, &re) || re.StatusCode != 403 {
			t.Fatalf("SAS for %s used on %s: %v", t1, t2, err)
		}
		_, err = client(t1, valid).AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r2"}`), nil)
		refused(t, err, 403, "AuthorizationPermissionMismatch")

		admin := svc.NewClient(t1)
		_, err = admin.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{
			ID: to.Ptr("pol1"), AccessPolicy: &aztables.AccessPolicy{Expiry: to.Ptr(time.Now().Add(time.Hour).UTC().Truncate(time.Second)),
				Permission: to.Ptr("r")}}}})
		ok(t, err)
		withPolicy := sign(aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, Identifier: "pol1", TableName: t1})
		ok(t, get(t1, withPolicy))
		_, err = admin.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{})
		ok(t, err)
		refused(t, get(t1, withPolicy), 403, "AuthenticationFailed")
	})
}

func TestAccountSAS(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		client := tg.Blob(t)
		c := harness.UniqueName("acct")
		_, err := client.CreateContainer(ctx, c, nil)
		ok(t, err)
		_, err = client.UploadBuffer(ctx, c, "b", []byte("data"), nil)
		ok(t, err)
		cred, err := azblob.NewSharedKeyCredential(tg.Account, tg.Key)
		ok(t, err)
		// blobSAS signs an account SAS for the blob service (ss=b).
		blobSAS := func(resources blobsas.AccountResourceTypes, perms blobsas.AccountPermissions, expiry time.Time) string {
			v := blobsas.AccountSignatureValues{Protocol: blobsas.ProtocolHTTPSandHTTP, ExpiryTime: expiry,
				Permissions: perms.String(), ResourceTypes: resources.String()}
			qp, err := v.SignWithSharedKey(cred)
			ok(t, err)
			return qp.Encode()
		}
		blobOpts := &blob.ClientOptions{ClientOptions: tg.ClientOptions()}
		props := func(query string) error {
			bc, err := blob.NewClientWithNoCredential(tg.BlobURL+"/"+c+"/b?"+query, blobOpts)
			ok(t, err)
			_, err = bc.GetProperties(ctx, nil)
			return err
		}
		soon := time.Now().Add(time.Hour)
		object := blobsas.AccountResourceTypes{Object: true}
		read := blobsas.AccountPermissions{Read: true}
		ok(t, props(blobSAS(object, read, soon)))
		refused(t, props(blobSAS(blobsas.AccountResourceTypes{Service: true}, read, soon)), 403, "AuthorizationResourceTypeMismatch")
		refused(t, props(blobSAS(object, blobsas.AccountPermissions{List: true}, soon)), 403, "AuthorizationPermissionMismatch")
		refused(t, props(blobSAS(object, read, time.Now().Add(-time.Minute))), 403, "AuthenticationFailed")

		// A queue-only account SAS (ss=q) does not open the blob service.
		qcred, err := azqueue.NewSharedKeyCredential(tg.Account, tg.Key)
		ok(t, err)
		qv := queuesas.AccountSignatureValues{Protocol: queuesas.ProtocolHTTPSandHTTP, ExpiryTime: soon,
			Permissions: (&queuesas.AccountPermissions{Read: true}).String(), ResourceTypes: (&queuesas.AccountResourceTypes{Object: true}).String()}
		qp, err := qv.SignWithSharedKey(qcred)
		ok(t, err)
		refused(t, props(qp.Encode()), 403, "AuthorizationServiceMismatch")
	})
}
