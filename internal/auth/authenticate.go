package auth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/bearer"
	"github.com/lazuli-storage/lazuli/internal/auth/sas"
	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/redact"
)

// MaxClockSkew is how far the date of a Shared Key request may be from the
// server's clock, either way.
const MaxClockSkew = 15 * time.Minute

// SASParams are the parameters of a shared access signature.
type SASParams struct {
	// Raw holds every query parameter of the request (first value of
	// each), for services that read response overrides (rscc ...).
	Raw map[string]string
	// Values are the parsed SAS fields.
	Values *sas.Values
}

// Authenticate decides who r comes from; account is the account the URL
// names (any "-secondary" suffix already removed). It returns an
// *azerr.Error for a refused request.
//
//   - An Authorization header must be "SharedKey" or "SharedKeyLite"
//     "<account>:<signature>"; a header that does not parse is 400
//     InvalidAuthenticationInfo, any other scheme (Bearer included: lazuli
//     has no Azure AD) 403 AuthenticationFailed. The signature must match
//     one of the account's keys, and the request date (x-ms-date, else
//     Date) must be within MaxClockSkew of the server clock.
//   - A query with sig is a SAS. Its fields are checked here; an account
//     SAS signature is verified here too, a service SAS signature by
//     Authorize, which knows the resource the request addresses.
//   - Anything else is anonymous; Authorize decides what it may do.
//
// A URL naming an account the server does not have is refused with 403
// AuthenticationFailed whatever the credentials: there is no key to
// check a signature against, and an anonymous caller learns nothing more
// than it would from a private resource.
func (a *Authenticator) Authenticate(r *http.Request, svc Service, account string) (*Identity, error) {
	acc, known := a.accounts[account]
	// A blank Authorization header (some tools send one next to a SAS)
	// counts as none.
	if vals := r.Header.Values("Authorization"); len(vals) > 1 || (len(vals) == 1 && strings.TrimSpace(vals[0]) != "") {
		if len(vals) > 1 {
			return nil, invalidAuthInfo("The Authorization header appears more than once.")
		}
		if scheme, token, _ := strings.Cut(strings.TrimSpace(vals[0]), " "); scheme == "Bearer" && a.oauth {
			return a.bearerToken(r, svc, account, known, strings.TrimSpace(token))
		}
		return a.sharedKey(r, svc, account, acc, known, vals[0])
	}
	q := r.URL.Query()
	if sas.IsSAS(q) {
		if !known {
			return nil, unknownAccount(account)
		}
		return a.parseSAS(r, acc, q)
	}
	if !known {
		return nil, unknownAccount(account)
	}
	return &Identity{Kind: Anonymous, Account: account}, nil
}

func (a *Authenticator) sharedKey(r *http.Request, svc Service, account string, acc Account, known bool, header string) (*Identity, error) {
	var form sharedkey.Form
	kind := SharedKey
	scheme, _, _ := strings.Cut(strings.TrimSpace(header), " ")
	switch scheme {
	case sharedkey.SchemeSharedKey:
	case sharedkey.SchemeSharedKeyLite:
		form.Lite, kind = true, SharedKeyLite
	default:
		return nil, authFailed(fmt.Sprintf("Authentication scheme %s is not supported.", scheme))
	}
	_, claimed, sig, err := sharedkey.ParseAuthorization(header)
	if err != nil {
		return nil, invalidAuthInfo("The Authorization header is not in the form '<scheme> <account>:<signature>'.")
	}
	form.Table = svc == Table
	claimed = strings.TrimSuffix(claimed, "-secondary")
	if claimed != account {
		return nil, authFailed(fmt.Sprintf("The account %s in the Authorization header does not match the account %s the request addresses.", claimed, account))
	}
	if !known {
		return nil, unknownAccount(account)
	}
	if err := a.checkDate(r); err != nil {
		return nil, err
	}
	// A signed standard header sent twice makes the string-to-sign
	// ambiguous.
	for _, h := range [...]string{
		"Content-Encoding", "Content-Language", "Content-Length", "Content-Md5", "Content-Type", "Date",
		"If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range", "X-Ms-Date",
	} {
		if vals := r.Header[h]; len(vals) > 1 {
			name := h
			switch h {
			case "Content-Md5":
				name = "Content-MD5"
			case "X-Ms-Date":
				name = "x-ms-date"
			}
			return nil, azerr.InvalidHeader(name, strings.Join(vals, ","))
		}
	}
	// The documented form first; the spellings of particular clients only
	// when it fails.
	buf := stsBuffers.Get().(*[]byte)
	sts := sharedkey.AppendStringToSign((*buf)[:0], r, account, form)
	ok := a.macs.matches(acc.Keys, sts, sig)
	if cap(sts) <= 64<<10 {
		*buf = sts
		stsBuffers.Put(buf)
	}
	if ok {
		return &Identity{Kind: kind, Account: account}, nil
	}
	candidates := sharedkey.Candidates(r, account, form)
	if a.macs.anyMatches(acc.Keys, candidates[1:], sig) {
		return &Identity{Kind: kind, Account: account}, nil
	}
	if a.debug {
		a.log.Info("shared key signature mismatch",
			"account", account, "scheme", scheme, "method", r.Method, "url", redact.String(r.URL.RequestURI()),
			"string_to_sign", redact.String(candidates[0]), "variants_tried", len(candidates))
	}
	return nil, authFailed(fmt.Sprintf("The MAC signature found in the HTTP request '%s' is not the same as any computed signature. Server used following string to sign: '%s'.", sig, candidates[0]))
}

// stsBuffers hold strings-to-sign being built.
var stsBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// parsedDate is a request date and its parsed time.
type parsedDate struct {
	text string
	t    time.Time
}

// checkDate enforces the request date of Shared Key requests.
func (a *Authenticator) checkDate(r *http.Request) error {
	d := r.Header.Get("X-Ms-Date")
	if d == "" {
		d = r.Header.Get("Date")
	}
	if d == "" {
		return authFailed("Request date header not specified.")
	}
	var t time.Time
	if last := a.lastDate.Load(); last != nil && last.text == d {
		// Clients send the same date for a whole second.
		t = last.t
	} else {
		var err error
		t, err = http.ParseTime(d)
		if err != nil {
			// Tolerate a numeric zone ("+0000") besides "GMT".
			t, err = time.Parse(time.RFC1123Z, d)
		}
		if err != nil {
			return authFailed(fmt.Sprintf("Request date header '%s' is not a valid RFC 1123 date.", d))
		}
		a.lastDate.Store(&parsedDate{text: d, t: t})
	}
	clk := a.dateNow
	if clk == nil {
		clk = a.now
	}
	now := clk()
	if now.Sub(t) > MaxClockSkew {
		return authFailed(fmt.Sprintf("Request date header too old: '%s'", d))
	}
	if t.Sub(now) > MaxClockSkew {
		return authFailed(fmt.Sprintf("Request date header too far in the future: '%s'", d))
	}
	return nil
}

func (a *Authenticator) parseSAS(r *http.Request, acc Account, q url.Values) (*Identity, error) {
	v, err := sas.Parse(q)
	if err != nil {
		return nil, sasError(err)
	}
	if v.UserDelegation {
		if !a.oauth {
			return nil, authFailed("A user delegation SAS is signed with a key from Get User Delegation Key, which needs OAuth; this server runs without it (start it with --oauth basic).")
		}
		if v.IsAccount() {
			return nil, authFailed("An account SAS cannot carry a user delegation key (skoid).")
		}
	}
	p := &SASParams{Raw: map[string]string{}, Values: v}
	for k, vs := range q {
		if len(vs) > 0 {
			p.Raw[k] = vs[0]
		}
	}
	id := &Identity{Kind: ServiceSAS, Account: acc.Name, SAS: p}
	if !v.IsAccount() {
		return id, nil
	}
	id.Kind = AccountSAS
	if v.Expiry == "" {
		return nil, authFailed("se is mandatory. Cannot be empty")
	}
	if v.Permissions == "" {
		return nil, authFailed("sp is mandatory. Cannot be empty")
	}
	candidates := sas.AccountStringsToSign(acc.Name, v)
	if a.macs.anyMatches(acc.Keys, candidates, v.Signature) {
		return id, nil
	}
	a.logSAS(r, acc.Name, "account", candidates[0])
	return nil, sigMismatch(candidates[0])
}

func (a *Authenticator) logSAS(r *http.Request, account, kind, sts string) {
	if a.debug {
		a.log.Info("sas signature mismatch", "account", account, "sas", kind,
			"method", r.Method, "path", r.URL.EscapedPath(), "string_to_sign", redact.String(sts))
	}
}

func sigMismatch(sts string) *azerr.Error {
	return authFailed(fmt.Sprintf("Signature did not match. String to sign used was %s", sts))
}

func sasError(err error) *azerr.Error {
	if e, ok := err.(*sas.Error); ok {
		return authFailed(e.Detail)
	}
	return authFailed(err.Error())
}

func authFailed(detail string) *azerr.Error {
	return azerr.New(azerr.AuthenticationFailed).WithDetail("AuthenticationErrorDetail", detail)
}

func invalidAuthInfo(detail string) *azerr.Error {
	return azerr.New(azerr.InvalidAuthenticationInfo).WithDetail("AuthenticationErrorDetail", detail)
}

func unknownAccount(account string) *azerr.Error {
	return authFailed(fmt.Sprintf("The account %s does not exist on this server.", account))
}

// bearerToken authenticates an Azure AD access token (Config.OAuth): only
// over HTTPS, and the token must pass bearer.Check for the service and
// account the request addresses. A refused token answers 401
// InvalidAuthenticationInfo with a WWW-Authenticate challenge, as Azure
// does.
func (a *Authenticator) bearerToken(r *http.Request, svc Service, account string, known bool, token string) (*Identity, error) {
	if r.TLS == nil {
		return nil, authFailed("Authentication scheme Bearer is not allowed with HTTP.")
	}
	if !known {
		return nil, unknownAccount(account)
	}
	claims, err := bearer.Parse(token)
	if err == nil {
		err = bearer.Check(claims, svc.String(), account, a.now())
	}
	if err != nil {
		tenant := "common"
		if claims != nil && claims.TenantID != "" {
			tenant = claims.TenantID
		}
		detail := err.Error()
		if e, ok := err.(*bearer.Error); ok {
			detail = e.Detail
		}
		return nil, azerr.Newf(azerr.InvalidAuthenticationInfo, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.").
			WithStatus(http.StatusUnauthorized).WithDetail("AuthenticationErrorDetail", detail).
			WithHeader("WWW-Authenticate", "Bearer authorization_uri=https://login.microsoftonline.com/"+tenant+"/oauth2/authorize resource_id=https://storage.azure.com")
	}
	return &Identity{Kind: Bearer, Account: account, Token: claims}, nil
}
