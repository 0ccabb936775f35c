package httpx

import (
	"context"
	"log/slog"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/md5lanes"
	"github.com/lazuli-storage/lazuli/storage"
)

// Deps is what the composition root hands every service constructor.
type Deps struct {
	Engine storage.Engine
	Auth   *auth.Authenticator
	Log    *slog.Logger
	// Now is the clock every time-driven rule (leases, visibility, SAS
	// windows) reads.
	Now func() time.Time
	// Floor, when set, is the time below which the times a service
	// writes and its ETag stamps never go: the latest time a test clock
	// showed before it was moved back.
	Floor func() time.Time
	// BaseURL returns the service endpoint for an account as clients see
	// it, e.g. "http://127.0.0.1:10000/devstoreaccount1" (used in
	// ServiceEndpoint attributes and odata.metadata).
	BaseURL func(account string) string
	// Workers receives the service's background workers (purges): the
	// server runs each until it shuts down. Nil (a handler built by a
	// test) runs them for the life of the process.
	Workers func(run func(ctx context.Context) error)
	// MD5 hashes request bodies, many at once (nil: one at a time).
	MD5 *md5lanes.Lanes
	// EncryptionScopes are the Blob encryption scopes every account has
	// (besides its own key, "$account-encryption-key").
	EncryptionScopes []string
	// BlobVersioning says which accounts keep blob versions (nil: none).
	BlobVersioning func(account string) bool
	// ContainerRetention is the container delete retention in days of
	// each account (nil or 0: off).
	ContainerRetention func(account string) int
}

// StartWorker hands run to d.Workers, or runs it in the background for
// the life of the process when there is no owner.
func (d Deps) StartWorker(run func(ctx context.Context) error) {
	if d.Workers != nil {
		d.Workers(run)
		return
	}
	go run(context.Background())
}
