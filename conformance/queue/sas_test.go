package queue

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// sasQueue returns a client for queue name authorized only by a service
// SAS with perms (or the stored policy id when perms is empty).
func sasQueue(t *testing.T, tg *harness.Target, name, perms, id string) *azqueue.QueueClient {
	t.Helper()
	cred, err := azqueue.NewSharedKeyCredential(tg.Account, tg.Key)
	MustNoErr(t, err)
	v := sas.QueueSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, Permissions: perms, QueueName: name, Identifier: id}
	if id == "" {
		v.ExpiryTime = time.Now().Add(time.Hour).UTC()
	}
	qp, err := v.SignWithSharedKey(cred)
	MustNoErr(t, err)
	qc, err := azqueue.NewQueueClientWithNoCredential(tg.QueueURL+"/"+name+"?"+qp.Encode(), &azqueue.ClientOptions{ClientOptions: tg.ClientOptions()})
	MustNoErr(t, err)
	return qc
}

// TestServiceSASPermissions checks which operations each queue SAS letter
// allows: r peek, a add, u update, p process (get and delete), and that a
// stored access policy named by si supplies the permissions.
func TestServiceSASPermissions(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		owner, name := MustQueue(t, tg, "sas")
		_, err := owner.EnqueueMessage(ctx, "seed", nil)
		MustNoErr(t, err)

		reader := sasQueue(t, tg, name, "r", "")
		peek, err := reader.PeekMessages(ctx, nil)
		MustNoErr(t, err)
		if len(peek.Messages) != 1 {
			t.Fatalf("peek with r: %d messages", len(peek.Messages))
		}
		_, err = reader.EnqueueMessage(ctx, "x", nil)
		MustCode(t, err, 403, "AuthorizationPermissionMismatch")
		_, err = reader.DequeueMessage(ctx, nil)
		MustCode(t, err, 403, "AuthorizationPermissionMismatch")

		worker := sasQueue(t, tg, name, "ap", "")
		_, err = worker.EnqueueMessage(ctx, "from sas", nil)
		MustNoErr(t, err)
		got, err := worker.DequeueMessage(ctx, nil)
		MustNoErr(t, err)
		m := got.Messages[0]
		_, err = worker.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, "y", nil)
		MustCode(t, err, 403, "AuthorizationPermissionMismatch")
		_, err = worker.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil)
		MustNoErr(t, err)
		// Queue-level management is never allowed with a service SAS.
		// lazuli answers AuthorizationFailure (the operation is outside
		// what any service SAS grants); the reference emulator treats it
		// as a missing permission.
		denied := "AuthorizationFailure"
		if tg.Remote {
			denied = "AuthorizationPermissionMismatch"
		}
		_, err = worker.ClearMessages(ctx, nil)
		MustCode(t, err, 403, denied)
		_, err = worker.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"k": ptr("v")}})
		MustCode(t, err, 403, denied)

		start := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
		expiry := start.Add(time.Hour)
		_, err = owner.SetAccessPolicy(ctx, &azqueue.SetAccessPolicyOptions{QueueACL: []*azqueue.SignedIdentifier{
			{ID: ptr("peekers"), AccessPolicy: &azqueue.AccessPolicy{Start: &start, Expiry: &expiry, Permission: ptr("r")}},
		}})
		MustNoErr(t, err)
		byPolicy := sasQueue(t, tg, name, "", "peekers")
		_, err = byPolicy.PeekMessages(ctx, nil)
		MustNoErr(t, err)
		_, err = byPolicy.EnqueueMessage(ctx, "x", nil)
		MustCode(t, err, 403, "AuthorizationPermissionMismatch")
	})
}

// TestAccountSASResourceTypes checks the account SAS scopes of queue
// operations: listing needs service scope and l, creating a queue
// container scope and c, messages object scope.
func TestAccountSASResourceTypes(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		cred, err := azqueue.NewSharedKeyCredential(tg.Account, tg.Key)
		MustNoErr(t, err)
		client := func(rt sas.AccountResourceTypes, p sas.AccountPermissions) *azqueue.ServiceClient {
			qp, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
				Permissions: p.String(), ResourceTypes: rt.String()}.SignWithSharedKey(cred)
			MustNoErr(t, err)
			c, err := azqueue.NewServiceClientWithNoCredential(tg.QueueURL+"/?"+qp.Encode(), &azqueue.ClientOptions{ClientOptions: tg.ClientOptions()})
			MustNoErr(t, err)
			return c
		}
		all := sas.AccountResourceTypes{Service: true, Container: true, Object: true}
		full := client(all, sas.AccountPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true, Process: true})
		name := harness.UniqueName("asas")
		_, err = full.CreateQueue(ctx, name, nil)
		MustNoErr(t, err)
		qc := full.NewQueueClient(name)
		_, err = qc.EnqueueMessage(ctx, "x", nil)
		MustNoErr(t, err)
		_, err = full.NewListQueuesPager(nil).NextPage(ctx)
		MustNoErr(t, err)

		objectsOnly := client(sas.AccountResourceTypes{Object: true}, sas.AccountPermissions{Read: true, List: true, Create: true, Add: true, Process: true})
		_, err = objectsOnly.NewListQueuesPager(nil).NextPage(ctx)
		MustCode(t, err, 403, "AuthorizationResourceTypeMismatch")
		_, err = objectsOnly.CreateQueue(ctx, harness.UniqueName("nope"), nil)
		MustCode(t, err, 403, "AuthorizationResourceTypeMismatch")
		_, err = objectsOnly.NewQueueClient(name).EnqueueMessage(ctx, "y", nil)
		MustNoErr(t, err)

		// Queue ACLs are the account owner's: an account SAS with every
		// permission cannot read or set them.
		_, err = full.NewQueueClient(name).GetAccessPolicy(ctx, nil)
		MustCode(t, err, 403, "AuthorizationFailure")
		_, err = full.NewQueueClient(name).SetAccessPolicy(ctx, nil)
		MustCode(t, err, 403, "AuthorizationFailure")

		readOnly := client(all, sas.AccountPermissions{Read: true})
		_, err = readOnly.NewQueueClient(name).EnqueueMessage(ctx, "z", nil)
		MustCode(t, err, 403, "AuthorizationPermissionMismatch")
		_, err = readOnly.NewQueueClient(name).PeekMessages(ctx, nil)
		MustNoErr(t, err)
		_, err = full.DeleteQueue(ctx, name, nil)
		MustNoErr(t, err)
	})
}
