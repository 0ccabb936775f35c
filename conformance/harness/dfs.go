package harness

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"

	"github.com/lazuli-storage/lazuli/emulator"
)

// ForEachHNS is ForEach with every lazuli started with a hierarchical
// namespace (--hierarchicalNamespace).
func ForEachHNS(t *testing.T, fn func(t *testing.T, tg *Target)) {
	t.Helper()
	ForEachWith(t, func(o *emulator.Options) { o.HierarchicalNamespace = true }, fn)
}

// DataLake returns a Data Lake (azdatalake) service client for the
// target's Blob endpoint, where lazuli serves the dfs API.
func (tg *Target) DataLake(t testing.TB) *service.Client {
	t.Helper()
	cred, err := azdatalake.NewSharedKeyCredential(tg.Account, tg.Key)
	must(t, err)
	c, err := service.NewClientWithSharedKeyCredential(tg.BlobURL+"/", cred, &service.ClientOptions{ClientOptions: tg.ClientOptions()})
	must(t, err)
	return c
}
