package httpx

import (
	"log/slog"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
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
	// BaseURL returns the service endpoint for an account as clients see
	// it, e.g. "http://127.0.0.1:10000/devstoreaccount1" (used in
	// ServiceEndpoint attributes and odata.metadata).
	BaseURL func(account string) string
}
