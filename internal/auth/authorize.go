package auth

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sas"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// Authorize decides whether id may run the operation described by need.
//
// Shared Key callers may do everything. SAS callers are checked in this
// order: scope the kind of SAS can reach at all (service SAS:
// AuthorizationFailure), signature (AuthenticationFailed), stored access
// policy, time window (AuthenticationFailed), source IP
// (AuthorizationSourceIPMismatch), protocol (AuthorizationProtocolMismatch),
// service and resource type of an account SAS (AuthorizationServiceMismatch,
// AuthorizationResourceTypeMismatch), permissions
// (AuthorizationPermissionMismatch) and the Table key range
// (AuthorizationFailure).
//
// Anonymous callers may run the operation only when need.PublicRead says
// so. Otherwise a Blob read that the service offered to public access (a
// non-nil PublicRead) answers 404 ResourceNotFound, hiding whether the
// resource exists, as Azure does; every other anonymous request answers 401
// NoAuthenticationInformation.
func (a *Authenticator) Authorize(id *Identity, r *http.Request, need Access) error {
	if id == nil {
		id = &Identity{Kind: Anonymous}
	}
	switch id.Kind {
	case SharedKey, SharedKeyLite, Bearer:
		return nil
	case AccountSAS:
		if id.SAS == nil || id.SAS.Values == nil {
			return authFailed("The SAS parameters are missing.")
		}
		return a.authorizeAccountSAS(id.SAS.Values, r, need)
	case ServiceSAS:
		if id.SAS == nil || id.SAS.Values == nil {
			return authFailed("The SAS parameters are missing.")
		}
		acc, ok := a.accounts[id.Account]
		if !ok {
			return unknownAccount(id.Account)
		}
		return a.authorizeServiceSAS(acc, id.SAS.Values, r, need)
	}
	if need.PublicRead != nil {
		ok, err := need.PublicRead()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if need.Service == Blob {
			return azerr.New(azerr.ResourceNotFound)
		}
	}
	return azerr.New(azerr.NoAuthenticationInformation)
}

func (a *Authenticator) authorizeAccountSAS(v *sas.Values, r *http.Request, need Access) error {
	if err := a.checkWindow(v.StartTime, v.ExpiryTime); err != nil {
		return err
	}
	if need.AccountSASDenied {
		return azerr.New(azerr.AuthorizationFailure)
	}
	if err := checkNetwork(v, r); err != nil {
		return err
	}
	if !strings.ContainsRune(v.Services, rune(need.Service)) {
		return azerr.New(azerr.AuthorizationServiceMismatch)
	}
	res := need.Resource
	if res == 0 {
		res = ResObject
	}
	if !strings.ContainsRune(v.ResourceTypes, rune(res)) {
		return azerr.New(azerr.AuthorizationResourceTypeMismatch)
	}
	perms := need.AccountPerms
	if perms == "" {
		perms = need.Perms
	}
	if !sas.HasPermission(v.Permissions, perms) {
		return azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	return nil
}

func (a *Authenticator) authorizeServiceSAS(acc Account, v *sas.Values, r *http.Request, need Access) error {
	svc := need.Service
	// What a service SAS can never reach: requests that name no container
	// and the operations that create, delete, list or configure
	// containers, queues, tables and shares. A service-level operation
	// addressed through a container URL (Get Account Information) is
	// checked against the container like any other.
	if need.Container == "" && svc == Blob {
		// The Blob service checks the signature against the resource the
		// URL names, and a URL naming no container matches no service
		// SAS: 403 AuthenticationFailed (what Azure answers a Blob Batch
		// sent to the account with a container SAS).
		return authFailed("Signature did not match. The request names no container the service SAS could be signed for.")
	}
	if need.ServiceSASDenied || need.Container == "" {
		return azerr.New(azerr.AuthorizationFailure)
	}
	container, object, timestamp := need.Container, "", ""
	switch need.Service {
	case Blob:
		switch v.Resource {
		case "c":
		case "b", "bs", "bv":
			if need.Object == "" {
				return azerr.New(azerr.AuthorizationFailure)
			}
			object = need.Object
			if v.Resource != "b" {
				timestamp = need.Snapshot
			}
		case "d":
			if need.Object == "" {
				return azerr.New(azerr.AuthorizationFailure)
			}
			depth, err := strconv.Atoi(v.DirectoryDepth)
			if err != nil || depth < 0 {
				return authFailed("sdd is mandatory for sr=d and must be a non-negative number.")
			}
			object = directoryPrefix(need.Object, depth)
		case "":
			return authFailed("sr is mandatory. Cannot be empty")
		default:
			return authFailed(fmt.Sprintf("sr '%s' is not a valid Blob signed resource.", v.Resource))
		}
	case File:
		switch v.Resource {
		case "s":
		case "f":
			if need.Object == "" {
				return azerr.New(azerr.AuthorizationFailure)
			}
			object = need.Object
		case "":
			return authFailed("sr is mandatory. Cannot be empty")
		default:
			return authFailed(fmt.Sprintf("sr '%s' is not a valid File signed resource.", v.Resource))
		}
	case Table:
		if v.TableName != "" && !strings.EqualFold(v.TableName, need.Container) {
			return azerr.New(azerr.AuthorizationFailure)
		}
	}
	canonical := sas.CanonicalizedResource(svc, v.Version, acc.Name, container, object)
	if v.UserDelegation {
		if err := a.checkUserDelegation(acc, v, r, need.Service, canonical, timestamp); err != nil {
			return err
		}
	} else if candidates := sas.ServiceStringsToSign(svc, canonical, v, timestamp); !a.macs.anyMatches(acc.Keys, candidates, v.Signature) {
		a.logSAS(r, acc.Name, "service", candidates[0])
		return sigMismatch(candidates[0])
	}

	start, expiry, perms := v.StartTime, v.ExpiryTime, v.Permissions
	if v.Identifier != "" {
		p, err := a.storedPolicy(need, v)
		if err != nil {
			return err
		}
		if !p.Start.IsZero() {
			start = p.Start
		}
		if !p.Expiry.IsZero() {
			expiry = p.Expiry
		}
		if p.Permission != "" {
			perms = p.Permission
		}
	}
	if expiry.IsZero() {
		return authFailed("se is mandatory. Cannot be empty")
	}
	if perms == "" {
		return authFailed("sp is mandatory. Cannot be empty")
	}
	if err := a.checkWindow(start, expiry); err != nil {
		return err
	}
	if err := checkNetwork(v, r); err != nil {
		return err
	}
	if !sas.HasPermission(perms, need.Perms) {
		return azerr.New(azerr.AuthorizationPermissionMismatch)
	}
	if need.Service == Table && !keysInRange(v, need) {
		return azerr.New(azerr.AuthorizationFailure)
	}
	return nil
}

// storedPolicy resolves si against the resource's ACL. Each of Start,
// Expiry and Permission must come from exactly one place: a field the
// policy sets must be left out of the SAS, and the other way round for the
// fields the SAS carries. The lookup reads the current ACL, so an edited or
// removed policy applies to the next request.
func (a *Authenticator) storedPolicy(need Access, v *sas.Values) (*Policy, error) {
	if len(v.Identifier) > 64 {
		return nil, authFailed("si is longer than 64 characters.")
	}
	lookup := need.Policy
	if lookup == nil {
		lookup = NoPolicy
	}
	p, err := lookup(v.Identifier)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, authFailed(fmt.Sprintf("The signed identifier '%s' does not match any stored access policy of the resource.", v.Identifier))
	}
	for _, c := range []struct {
		name          string
		inPolicy, inS bool
	}{
		{"start time (st)", !p.Start.IsZero(), v.Start != ""},
		{"expiry time (se)", !p.Expiry.IsZero(), v.Expiry != ""},
		{"permissions (sp)", p.Permission != "", v.Permissions != ""},
	} {
		if c.inPolicy && c.inS {
			return nil, authFailed(fmt.Sprintf("The %s is set both by the stored access policy '%s' and by the SAS.", c.name, v.Identifier))
		}
	}
	return p, nil
}

// checkWindow refuses a SAS used before its start or after its expiry.
func (a *Authenticator) checkWindow(start, expiry time.Time) error {
	now := a.now()
	if !start.IsZero() && !expiry.IsZero() && !expiry.After(start) {
		return authFailed(fmt.Sprintf("Signed expiry time [%s] has to be after signed start time [%s]", httpTime(expiry), httpTime(start)))
	}
	if (!start.IsZero() && now.Before(start)) || (!expiry.IsZero() && now.After(expiry)) {
		return authFailed(fmt.Sprintf("Signature not valid in the specified time frame: Start [%s] - Expiry [%s] - Current [%s]",
			httpTime(start), httpTime(expiry), httpTime(now)))
	}
	return nil
}

func httpTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(http.TimeFormat)
}

// checkNetwork enforces sip and spr.
func checkNetwork(v *sas.Values, r *http.Request) error {
	if !sas.IPAllowed(v.IP, RemoteIP(r)) {
		return azerr.New(azerr.AuthorizationSourceIPMismatch)
	}
	if r.TLS == nil && !sas.HTTPAllowed(v.Protocol) {
		return azerr.New(azerr.AuthorizationProtocolMismatch)
	}
	return nil
}

// keysInRange checks an entity's keys against spk/srk (lower bound) and
// epk/erk (upper bound), both inclusive, compared as (PartitionKey, RowKey)
// pairs. Under a range, an operation that names no entity passes only when
// it applies the range to what it reads itself (KeyRangeApplied): a missing
// key never skips the check.
func keysInRange(v *sas.Values, need Access) bool {
	if v.StartPK == "" && v.StartRK == "" && v.EndPK == "" && v.EndRK == "" {
		return true
	}
	pk, rk := need.PartitionKey, need.RowKey
	if pk == nil || rk == nil {
		return need.KeyRangeApplied && pk == nil && rk == nil
	}
	if v.StartPK != "" && (*pk < v.StartPK || (*pk == v.StartPK && *rk < v.StartRK)) {
		return false
	}
	if v.EndPK != "" && (*pk > v.EndPK || (*pk == v.EndPK && v.EndRK != "" && *rk > v.EndRK)) {
		return false
	}
	return true
}

// directoryPrefix returns the first depth segments of a blob name.
func directoryPrefix(name string, depth int) string {
	segs := strings.Split(strings.Trim(name, "/"), "/")
	if depth < len(segs) {
		segs = segs[:depth]
	}
	return strings.Join(segs, "/")
}

// signedRequestLines are the string-to-sign lines of the request headers
// (srh) and query parameters (srq) a user delegation SAS binds, from the
// values this request carries, so that a request with another value (or
// none) fails the signature: "name:value\n" per header and
// "\nname:value" per parameter, in the order srh and srq list them.
func signedRequestLines(v *sas.Values, r *http.Request) (headers, query string) {
	var h, q strings.Builder
	if v.RequestHeaders != "" {
		for _, name := range strings.Split(v.RequestHeaders, ",") {
			h.WriteString(name + ":" + r.Header.Get(name) + "\n")
		}
	}
	if v.RequestQuery != "" {
		values := r.URL.Query()
		for _, name := range strings.Split(v.RequestQuery, ",") {
			q.WriteString("\n" + name + ":" + values.Get(name))
		}
	}
	return h.String(), q.String()
}

// checkUserDelegation verifies the signature of a user delegation SAS: the
// key it was signed with is derived again (sas.UserDelegationKey) from the
// account's keys, the skoid, sktid, skt, ske, sks and skv it carries and
// each data role its owner may have held (the one that matches is kept in
// v.KeyRole), and must be valid now. Such a SAS exists for Blob only and never names a
// stored access policy.
func (a *Authenticator) checkUserDelegation(acc Account, v *sas.Values, r *http.Request, svc Service, canonical, timestamp string) error {
	if svc != Blob {
		return authFailed("A user delegation SAS is only accepted by the Blob service.")
	}
	if v.Identifier != "" {
		return authFailed("A user delegation SAS cannot use a stored access policy (si).")
	}
	for _, f := range []struct{ name, value string }{{"sktid", v.KeyTID}, {"skt", v.KeyStart}, {"ske", v.KeyExpiry}, {"sks", v.KeyService}, {"skv", v.KeyVersion}} {
		if f.value == "" {
			return authFailed(f.name + " is mandatory for a user delegation SAS. Cannot be empty")
		}
	}
	if v.KeyService != "b" {
		return authFailed(fmt.Sprintf("sks '%s' is not the Blob service (b).", v.KeyService))
	}
	start, err1 := sas.ParseTime(v.KeyStart)
	expiry, err2 := sas.ParseTime(v.KeyExpiry)
	if err1 != nil || err2 != nil {
		return authFailed("skt and ske must be ISO 8601 UTC times.")
	}
	if now := a.now(); now.Before(start) || now.After(expiry) {
		return authFailed(fmt.Sprintf("The user delegation key is not valid in the specified time frame: Start [%s] - Expiry [%s] - Current [%s]",
			httpTime(start), httpTime(expiry), httpTime(now)))
	}
	headers, query := signedRequestLines(v, r)
	candidates := sas.UserDelegationStringsToSign(canonical, v, timestamp, headers, query)
	for _, key := range acc.Keys {
		for _, role := range sas.KeyRoles {
			udk := sas.UserDelegationKey(key, v.KeyOID, v.KeyTID, start, expiry, v.KeyService, v.KeyVersion, role)
			for _, sts := range candidates {
				if sharedkey.SignatureMatches(udk, sts, v.Signature) {
					v.KeyRole = role
					return nil
				}
			}
		}
	}
	a.logSAS(r, acc.Name, "user delegation", candidates[0])
	return sigMismatch(candidates[0])
}
