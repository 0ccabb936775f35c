package queue

import (
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/lazuli-storage/lazuli/conformance/harness"
)

// TestAccountSASPermissionTable pins the account SAS letter each Queue
// operation needs, as Azure's account SAS table gives them (every resource
// type granted): List Queues l; service properties and stats r, setting
// them w; Create Queue c or w; Delete Queue d; Get Queue Metadata r, Set
// Queue Metadata w; Put Message a; Peek Messages r; Get Messages p;
// Delete Message p (d does not reach single messages); Update Message u;
// Clear Messages d. For each, a SAS with every other letter is 403
// AuthorizationPermissionMismatch.
func TestAccountSASPermissionTable(t *testing.T) {
	harness.ForEach(t, func(t *testing.T, tg *harness.Target) {
		ctx := harness.Ctx(t)
		cred, err := azqueue.NewSharedKeyCredential(tg.Account, tg.Key)
		MustNoErr(t, err)
		const letters = "rwdlacup"
		client := func(perms string) *azqueue.ServiceClient {
			t.Helper()
			p := sas.AccountPermissions{}
			for _, c := range perms {
				switch c {
				case 'r':
					p.Read = true
				case 'w':
					p.Write = true
				case 'd':
					p.Delete = true
				case 'l':
					p.List = true
				case 'a':
					p.Add = true
				case 'c':
					p.Create = true
				case 'u':
					p.Update = true
				case 'p':
					p.Process = true
				}
			}
			qp, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
				Permissions: p.String(), ResourceTypes: (&sas.AccountResourceTypes{Service: true, Container: true, Object: true}).String()}.SignWithSharedKey(cred)
			MustNoErr(t, err)
			c, err := azqueue.NewServiceClientWithNoCredential(tg.QueueURL+"/?"+qp.Encode(), &azqueue.ClientOptions{ClientOptions: tg.ClientOptions()})
			MustNoErr(t, err)
			return c
		}
		owner := tg.Queue(t)
		name := harness.UniqueName("perm")
		_, err = owner.CreateQueue(ctx, name, nil)
		MustNoErr(t, err)
		// A message whose pop receipt the Delete and Update cases use.
		popped := func() (string, string) {
			t.Helper()
			_, err := owner.NewQueueClient(name).EnqueueMessage(ctx, "m", nil)
			MustNoErr(t, err)
			r, err := owner.NewQueueClient(name).DequeueMessage(ctx, nil)
			MustNoErr(t, err)
			return *r.Messages[0].MessageID, *r.Messages[0].PopReceipt
		}
		cases := []struct {
			op      string
			letters []string // each alone allows the operation
			run     func(c *azqueue.ServiceClient) error
		}{
			{"ListQueues", []string{"l"}, func(c *azqueue.ServiceClient) error { _, err := c.NewListQueuesPager(nil).NextPage(ctx); return err }},
			{"GetQueueServiceProperties", []string{"r"}, func(c *azqueue.ServiceClient) error { _, err := c.GetServiceProperties(ctx, nil); return err }},
			{"SetQueueServiceProperties", []string{"w"}, func(c *azqueue.ServiceClient) error { _, err := c.SetProperties(ctx, nil); return err }},
			{"CreateQueue", []string{"c", "w"}, func(c *azqueue.ServiceClient) error {
				_, err := c.CreateQueue(ctx, harness.UniqueName("made"), nil)
				return err
			}},
			{"GetQueueMetadata", []string{"r"}, func(c *azqueue.ServiceClient) error {
				_, err := c.NewQueueClient(name).GetProperties(ctx, nil)
				return err
			}},
			{"SetQueueMetadata", []string{"w"}, func(c *azqueue.ServiceClient) error {
				_, err := c.NewQueueClient(name).SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"k": ptr("v")}})
				return err
			}},
			{"PutMessage", []string{"a"}, func(c *azqueue.ServiceClient) error {
				_, err := c.NewQueueClient(name).EnqueueMessage(ctx, "x", nil)
				return err
			}},
			{"PeekMessages", []string{"r"}, func(c *azqueue.ServiceClient) error {
				_, err := c.NewQueueClient(name).PeekMessages(ctx, nil)
				return err
			}},
			{"GetMessages", []string{"p"}, func(c *azqueue.ServiceClient) error {
				_, err := c.NewQueueClient(name).DequeueMessages(ctx, nil)
				return err
			}},
			{"DeleteMessage", []string{"p"}, func(c *azqueue.ServiceClient) error {
				id, pr := popped()
				_, err := c.NewQueueClient(name).DeleteMessage(ctx, id, pr, nil)
				return err
			}},
			{"UpdateMessage", []string{"u"}, func(c *azqueue.ServiceClient) error {
				id, pr := popped()
				_, err := c.NewQueueClient(name).UpdateMessage(ctx, id, pr, "new", nil)
				return err
			}},
			{"ClearMessages", []string{"d"}, func(c *azqueue.ServiceClient) error {
				_, err := c.NewQueueClient(name).ClearMessages(ctx, nil)
				return err
			}},
		}
		for _, tc := range cases {
			for _, l := range tc.letters {
				if err := tc.run(client(l)); err != nil {
					t.Errorf("%s with %q: %v", tc.op, l, err)
				}
			}
			// Every letter but the allowing ones.
			others := ""
			for _, c := range letters {
				allowed := false
				for _, l := range tc.letters {
					allowed = allowed || string(c) == l
				}
				if !allowed {
					others += string(c)
				}
			}
			var re *azcore.ResponseError
			if err := tc.run(client(others)); !errors.As(err, &re) || re.StatusCode != 403 || re.ErrorCode != "AuthorizationPermissionMismatch" {
				t.Errorf("%s with %q: %v, want 403 AuthorizationPermissionMismatch", tc.op, others, err)
			}
		}
		_, err = owner.DeleteQueue(ctx, name, nil)
		MustNoErr(t, err)
	})
}
