// Package auth holds the storage accounts and decides who a request comes
// from (Authenticate: Shared Key, Shared Key Lite, SAS or anonymous) and
// whether that caller may run an operation (Authorize: SAS permissions,
// resource scope, time window, IP range, protocol, stored access policies,
// public access).
//
// Authenticate needs only the request; Authorize also needs what the
// service knows about the operation, passed as an Access.
package auth

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/bearer"
	"github.com/lazuli-storage/lazuli/internal/auth/sas"
)

// Service names one of the four storage services. It is the SAS
// package's type, whose values are the letters an account SAS's ss
// parameter uses, so that there is one enumeration of the services.
type Service = sas.Service

// The services.
const (
	Blob  = sas.Blob
	Queue = sas.Queue
	Table = sas.Table
	File  = sas.File
)

// DevAccount and DevKey are the published development account and key.
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Account is a storage account with one or two keys (decoded bytes).
type Account struct {
	Name string
	Keys [][]byte
}

// ParseAccounts parses the AZURITE_ACCOUNTS form
// "name1:key1[:key2];name2:key1" (keys base64) and returns one warning
// per key that is not strict base64. Such keys are decoded the way
// Node.js decodes base64, as the reference emulator does, because its
// users' scripts carry keys like that: the standard and URL-safe
// alphabets both count, any other character is skipped, the first "="
// ends the key, and left-over bits are dropped.
func ParseAccounts(s string) ([]Account, []string, error) {
	var out []Account
	var warnings []string
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := strings.Split(part, ":")
		if len(fields) < 2 || len(fields) > 3 || fields[0] == "" {
			return nil, nil, fmt.Errorf("accounts: %q is not name:key[:key2]", part)
		}
		acc := Account{Name: fields[0]}
		for _, k := range fields[1:] {
			b, err := base64.StdEncoding.DecodeString(k)
			if err != nil {
				b = lenientBase64(k)
				warnings = append(warnings, fmt.Sprintf("accounts: a key of %q is not strict base64; it is read as the reference emulator reads it (%d bytes)", fields[0], len(b)))
			}
			if len(b) == 0 {
				return nil, nil, fmt.Errorf("accounts: key of %q is empty once decoded", fields[0])
			}
			acc.Keys = append(acc.Keys, b)
		}
		out = append(out, acc)
	}
	return out, warnings, nil
}

// lenientBase64 decodes s as Node.js's Buffer.from(s, "base64") does.
func lenientBase64(s string) []byte {
	var out []byte
	var acc uint32
	bits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var v uint32
		switch {
		case c == '=':
			return out
		case c >= 'A' && c <= 'Z':
			v = uint32(c - 'A')
		case c >= 'a' && c <= 'z':
			v = uint32(c-'a') + 26
		case c >= '0' && c <= '9':
			v = uint32(c-'0') + 52
		case c == '+' || c == '-':
			v = 62
		case c == '/' || c == '_':
			v = 63
		default:
			continue
		}
		acc = acc<<6 | v
		bits += 6
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
			acc &= 1<<bits - 1
		}
	}
	return out
}

// DevelopmentAccount returns devstoreaccount1 with its published key.
func DevelopmentAccount() Account {
	k, _ := base64.StdEncoding.DecodeString(DevKey)
	return Account{Name: DevAccount, Keys: [][]byte{k}}
}

// Kind is how a request authenticated.
type Kind int

const (
	Anonymous Kind = iota
	SharedKey
	SharedKeyLite
	AccountSAS
	ServiceSAS
	// Bearer is an Azure AD token (with Config.OAuth only).
	Bearer
)

// Identity is the outcome of Authenticate.
type Identity struct {
	Kind    Kind
	Account string
	// SAS holds the parsed query parameters of a SAS request (AccountSAS or
	// ServiceSAS); its signature is verified by Authorize, which knows the
	// resource the request addresses.
	SAS *SASParams
	// Token holds the claims of a Bearer request.
	Token *bearer.Claims
}

// Config configures an Authenticator.
type Config struct {
	Accounts []Account
	// Log receives string-to-sign details for failed signatures when Debug
	// is set.
	Log   *slog.Logger
	Debug bool
	// Now is the clock of SAS and token validity; nil means time.Now.
	Now func() time.Time
	// DateClock is the clock a Shared Key request's date must be within
	// MaxClockSkew of: clients date requests by their own wall clock, so
	// it stays real time when Now is a test clock moved away from it.
	// Nil means Now.
	DateClock func() time.Time
	// OAuth accepts Azure AD bearer tokens over HTTPS (package bearer
	// says which) and, with them, user delegation keys and SAS.
	OAuth bool
}

// Authenticator verifies requests against the configured accounts.
type Authenticator struct {
	accounts map[string]Account
	log      *slog.Logger
	debug    bool
	now      func() time.Time
	dateNow  func() time.Time // nil: now
	oauth    bool
	macs     macs // keyed HMAC states of the accounts' keys
	// lastDate is the request date parsed last (see checkDate).
	lastDate atomic.Pointer[parsedDate]
}

// New returns an Authenticator. The development account is always present.
func New(cfg Config) *Authenticator {
	a := &Authenticator{accounts: map[string]Account{}, log: cfg.Log, debug: cfg.Debug, now: cfg.Now, oauth: cfg.OAuth}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.dateNow = cfg.DateClock
	dev := DevelopmentAccount()
	a.accounts[dev.Name] = dev
	for _, acc := range cfg.Accounts {
		a.accounts[acc.Name] = acc
	}
	a.macs = newMACs(a.accounts)
	return a
}

// Account returns the named account.
func (a *Authenticator) Account(name string) (Account, bool) {
	acc, ok := a.accounts[name]
	return acc, ok
}

// Accounts returns every account, sorted by name.
func (a *Authenticator) Accounts() []Account {
	out := make([]Account, 0, len(a.accounts))
	for _, acc := range a.accounts {
		out = append(out, acc)
	}
	slices.SortFunc(out, func(x, y Account) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// ResourceType is the account SAS resource type (srt) an operation needs.
type ResourceType byte

const (
	ResService   ResourceType = 's'
	ResContainer ResourceType = 'c' // container, queue, table, share
	ResObject    ResourceType = 'o' // blob, message, entity, file, directory
)

// Access describes what one operation needs. Services fill it in per
// operation and call Authorize.
type Access struct {
	Service  Service
	Resource ResourceType
	// Perms are the service SAS permission letters of which any one allows
	// the operation; AccountPerms the same for an account SAS (empty means
	// Perms). An operation with no letters at all cannot be run with a SAS
	// (AuthorizationPermissionMismatch). With a stored access policy the
	// letters come from the policy.
	Perms        string
	AccountPerms string
	// ServiceSASDenied is set for operations a service SAS can never do
	// (create/delete/list containers, queues or tables; container metadata;
	// clear queue; container lease).
	ServiceSASDenied bool
	// AccountSASDenied is set for operations only the account owner may
	// run, which an account SAS cannot reach either (Get and Set Queue
	// ACL): AuthorizationFailure.
	AccountSASDenied bool

	// Scope of the request for service SAS checks and the canonicalized
	// resource: Container is the container, queue, table or share name;
	// Object the blob name or file path ("" for container-level ops).
	Container string
	Object    string
	// Snapshot is the snapshot or version the request addresses, if any.
	Snapshot string
	// PartitionKey and RowKey are the entity keys of a Table entity
	// operation (checked against spk/srk/epk/erk). Under a SAS with a key
	// range an entity operation without both keys is refused, unless
	// KeyRangeApplied says the operation itself confines what it reads to
	// the range (TableKeyRange), as Query Entities does.
	PartitionKey, RowKey *string
	KeyRangeApplied      bool

	// Policy looks up a stored access policy by id in the container,
	// queue, table or share ACL; it is only called for SAS with si.
	Policy func(id string) (*Policy, error)
	// PublicRead reports whether anonymous callers may run this operation
	// (blob public access); only called for anonymous requests. nil means
	// never. Set it only for read operations public access can allow: an
	// anonymous Blob request refused by it answers 404 ResourceNotFound
	// (Azure hides private resources), any other anonymous request 401
	// NoAuthenticationInformation.
	PublicRead func() (bool, error)
}

// KeyRange is the entity range a Table SAS grants: (PartitionKey, RowKey)
// pairs from (StartPK, StartRK) to (EndPK, EndRK), both inclusive. An empty
// StartPK or EndPK leaves that side open; an empty row key bound covers the
// whole boundary partition.
type KeyRange struct {
	StartPK, StartRK, EndPK, EndRK string
}

// TableKeyRange returns the key range a Table service SAS confines id to;
// the zero KeyRange for every other caller.
func TableKeyRange(id *Identity) KeyRange {
	if id == nil || id.Kind != ServiceSAS || id.SAS == nil || id.SAS.Values == nil {
		return KeyRange{}
	}
	v := id.SAS.Values
	return KeyRange{StartPK: v.StartPK, StartRK: v.StartRK, EndPK: v.EndPK, EndRK: v.EndRK}
}

// Policy is a stored access policy (one signed identifier).
type Policy struct {
	Start, Expiry time.Time // zero when absent
	Permission    string
}

// NoPolicy is a Policy lookup for resources that have no ACL.
func NoPolicy(string) (*Policy, error) { return nil, nil }

// RemoteIP returns the client address of r without the port.
func RemoteIP(r *http.Request) string {
	host := r.RemoteAddr
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	return strings.Trim(host, "[]")
}
