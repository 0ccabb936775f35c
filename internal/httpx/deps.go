package httpx

import (
	"log/slog"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
)

// Deps is the plumbing the composition root hands every service
// constructor beside the domain service itself. The engine is not part of
// it: a protocol layer reaches storage only through its domain service,
// which the server builds once and shares between the layers that serve it.
type Deps struct {
	Auth *auth.Authenticator
	Log  *slog.Logger
	// Now is the clock every time-driven rule (leases, visibility, SAS
	// windows) reads.
	Now func() time.Time
	// BaseURL returns the service endpoint for an account as clients see
	// it, e.g. "http://127.0.0.1:10000/devstoreaccount1" (used in
	// ServiceEndpoint attributes and odata.metadata).
	BaseURL func(account string) string
	// EncryptionScopes are the Blob encryption scopes every account has
	// (besides its own key, "$account-encryption-key").
	EncryptionScopes []string
}
