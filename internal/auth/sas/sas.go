// Package sas parses Azure Storage shared access signatures and builds
// their strings-to-sign: account SAS (both layouts) and service SAS for
// Blob, File, Queue and Table across the signed versions that changed the
// layout. It is a leaf package: callers supply the account, key and the
// canonicalized resource of the request.
package sas

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// Service is a storage service, as named by the ss letters of an account
// SAS. It is lazuli's one enumeration of the services (auth.Service is
// this type).
type Service byte

const (
	Blob  Service = 'b'
	Queue Service = 'q'
	Table Service = 't'
	File  Service = 'f'
)

// Values are the SAS parameters of a request, each exactly as it appears in
// the (decoded) query string; an absent parameter is the empty string.
type Values struct {
	Version       string // sv
	Services      string // ss (account SAS)
	ResourceTypes string // srt (account SAS)
	Resource      string // sr (service SAS, Blob and File)
	Permissions   string // sp
	Start         string // st
	Expiry        string // se
	IP            string // sip
	Protocol      string // spr
	Identifier    string // si
	Signature     string // sig

	EncryptionScope string // ses
	DirectoryDepth  string // sdd (sr=d)

	// Table SAS.
	TableName, StartPK, StartRK, EndPK, EndRK string // tn spk srk epk erk

	// Response header overrides (Blob and File).
	CacheControl, ContentDisposition, ContentEncoding, ContentLanguage, ContentType string // rscc rscd rsce rscl rsct

	// UserDelegation is set when the SAS carries a user delegation key
	// (skoid); it is signed with that key, not the account key.
	UserDelegation bool
	// The user delegation key the SAS was signed with and the identities
	// it names (user delegation SAS only).
	KeyOID, KeyTID, KeyStart, KeyExpiry, KeyService, KeyVersion string // skoid sktid skt ske sks skv
	AuthorizedOID, UnauthorizedOID, CorrelationID               string // saoid suoid scid
	// KeyRole is not a query parameter: verifying a user delegation SAS
	// sets it to the data role its key's owner held (see KeyRoles).
	KeyRole                            string
	DelegatedUserTID, DelegatedUserOID string // skdutid sduoid
	// RequestHeaders and RequestQuery are the names of request headers
	// and query parameters the SAS binds (srh, srq).
	RequestHeaders, RequestQuery string

	// StartTime and ExpiryTime are Start and Expiry parsed; zero when
	// absent.
	StartTime, ExpiryTime time.Time
}

// IsAccount reports whether v is an account SAS (it names services).
func (v *Values) IsAccount() bool { return v.Services != "" || v.ResourceTypes != "" }

// IsSAS reports whether a query string carries a shared access signature.
func IsSAS(q url.Values) bool { return q.Get("sig") != "" }

// Error is a SAS the server cannot accept; Detail is meant for the
// AuthenticationErrorDetail element of the error response.
type Error struct{ Detail string }

func (e *Error) Error() string { return "sas: " + e.Detail }

func errorf(format string, args ...any) *Error { return &Error{Detail: fmt.Sprintf(format, args...)} }

// Parse reads the SAS parameters of q. It checks what can be checked
// without the account key and the addressed resource: sv present and
// well-formed, sig present, st/se parseable, sip and spr well-formed, se
// after st.
func Parse(q url.Values) (*Values, error) {
	dup := ""
	get := func(name string) string {
		vs := q[name]
		if len(vs) > 1 && dup == "" {
			dup = name
		}
		if len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	v := &Values{
		Version:            get("sv"),
		Services:           get("ss"),
		ResourceTypes:      get("srt"),
		Resource:           get("sr"),
		Permissions:        get("sp"),
		Start:              get("st"),
		Expiry:             get("se"),
		IP:                 get("sip"),
		Protocol:           get("spr"),
		Identifier:         get("si"),
		Signature:          get("sig"),
		EncryptionScope:    get("ses"),
		DirectoryDepth:     get("sdd"),
		TableName:          get("tn"),
		StartPK:            get("spk"),
		StartRK:            get("srk"),
		EndPK:              get("epk"),
		EndRK:              get("erk"),
		CacheControl:       get("rscc"),
		ContentDisposition: get("rscd"),
		ContentEncoding:    get("rsce"),
		ContentLanguage:    get("rscl"),
		ContentType:        get("rsct"),
		UserDelegation:     get("skoid") != "",
		KeyOID:             get("skoid"),
		KeyTID:             get("sktid"),
		KeyStart:           get("skt"),
		KeyExpiry:          get("ske"),
		KeyService:         get("sks"),
		KeyVersion:         get("skv"),
		AuthorizedOID:      get("saoid"),
		UnauthorizedOID:    get("suoid"),
		CorrelationID:      get("scid"),
		DelegatedUserTID:   get("skdutid"),
		DelegatedUserOID:   get("sduoid"),
		RequestHeaders:     get("srh"),
		RequestQuery:       get("srq"),
	}
	// A SAS parameter given twice is ambiguous: which one was signed?
	if dup != "" {
		return nil, errorf("The query parameter %s is given more than once.", dup)
	}
	// A '+' of the base64 signature that was not percent-encoded arrives
	// as a space; base64 never holds spaces, so put it back.
	v.Signature = strings.ReplaceAll(v.Signature, " ", "+")
	if v.Signature == "" {
		return nil, errorf("sig is mandatory. Cannot be empty")
	}
	if v.Version == "" {
		return nil, errorf("sv is mandatory. Cannot be empty")
	}
	if !validVersion(v.Version) {
		return nil, errorf("The value for sv '%s' is not in the correct format.", v.Version)
	}
	// A row key bound means nothing without the partition it is in.
	if v.StartRK != "" && v.StartPK == "" {
		return nil, errorf("srk requires spk.")
	}
	if v.EndRK != "" && v.EndPK == "" {
		return nil, errorf("erk requires epk.")
	}
	var err error
	if v.Start != "" {
		if v.StartTime, err = ParseTime(v.Start); err != nil {
			return nil, errorf("st '%s' is not in the correct format.", v.Start)
		}
	}
	if v.Expiry != "" {
		if v.ExpiryTime, err = ParseTime(v.Expiry); err != nil {
			return nil, errorf("se '%s' is not in the correct format.", v.Expiry)
		}
	}
	if !v.StartTime.IsZero() && !v.ExpiryTime.IsZero() && !v.ExpiryTime.After(v.StartTime) {
		return nil, errorf("Signed expiry time [%s] has to be after signed start time [%s]", v.Expiry, v.Start)
	}
	if v.IP != "" {
		if _, _, err := ParseIPRange(v.IP); err != nil {
			return nil, errorf("sip '%s' is not a valid IP address or range.", v.IP)
		}
	}
	switch v.Protocol {
	case "", "https", "https,http", "http,https":
	default:
		return nil, errorf("spr '%s' is not a valid protocol. Use https or https,http.", v.Protocol)
	}
	if v.IsAccount() {
		if v.Services == "" || v.ResourceTypes == "" {
			return nil, errorf("ss and srt are mandatory for an account SAS. Cannot be empty")
		}
		if strings.Trim(v.Services, "bqtf") != "" {
			return nil, errorf("ss '%s' names an unknown service.", v.Services)
		}
		if strings.Trim(v.ResourceTypes, "sco") != "" {
			return nil, errorf("srt '%s' names an unknown resource type.", v.ResourceTypes)
		}
	}
	return v, nil
}

func validVersion(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// ParseTime parses a SAS time (st, se, or a stored policy's Start/Expiry
// in the same forms): ISO 8601 UTC as a date, with minutes, with seconds,
// or with a fraction of up to seven digits.
func ParseTime(s string) (time.Time, error) {
	for _, l := range [...]string{
		"2006-01-02",
		"2006-01-02T15:04Z",
		"2006-01-02T15:04:05Z",
		"2006-01-02T15:04:05.9999999Z",
	} {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("sas: time %q is not ISO 8601 UTC", s)
}

// ParseIPRange parses sip: one address or "first-last".
func ParseIPRange(s string) (first, last netip.Addr, err error) {
	a, b, isRange := strings.Cut(s, "-")
	if first, err = netip.ParseAddr(strings.TrimSpace(a)); err != nil {
		return first, last, err
	}
	last = first
	if isRange {
		if last, err = netip.ParseAddr(strings.TrimSpace(b)); err != nil {
			return first, last, err
		}
	}
	first, last = first.Unmap(), last.Unmap()
	if first.Is4() != last.Is4() || last.Less(first) {
		return first, last, fmt.Errorf("sas: bad IP range %q", s)
	}
	return first, last, nil
}

// IPAllowed reports whether ip falls within the sip range s. An empty s
// allows every address.
func IPAllowed(s, ip string) bool {
	if s == "" {
		return true
	}
	first, last, err := ParseIPRange(s)
	if err != nil {
		return false
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	if addr.Is4() != first.Is4() {
		return false
	}
	return !addr.Less(first) && !last.Less(addr)
}

// HTTPAllowed reports whether spr allows plain http.
func HTTPAllowed(spr string) bool {
	return spr == "" || strings.Contains(spr, "http,") || strings.HasSuffix(spr, ",http")
}

// AccountStringToSign returns the string-to-sign of an account SAS:
// account, sp, ss, srt, st, se, sip, spr, sv, each followed by a newline,
// with ses added before the final newline from sv 2020-12-06 on.
func AccountStringToSign(account string, v *Values) string {
	return accountStringToSign(account, v, v.Version >= "2020-12-06")
}

func accountStringToSign(account string, v *Values, withScope bool) string {
	fields := []string{account, v.Permissions, v.Services, v.ResourceTypes, v.Start, v.Expiry, v.IP, v.Protocol, v.Version}
	if withScope {
		fields = append(fields, v.EncryptionScope)
	}
	return strings.Join(fields, "\n") + "\n"
}

// AccountStringsToSign returns AccountStringToSign followed by the layout
// of the other sv generation when the SAS has no encryption scope. Azure
// SDKs sign with one fixed layout whatever sv they are given (the Go azblob
// and azfile ones always add the ses line, azqueue and aztables never do),
// so a token made with an explicit older or newer sv verifies only this way.
func AccountStringsToSign(account string, v *Values) []string {
	primary := v.Version >= "2020-12-06"
	out := []string{accountStringToSign(account, v, primary)}
	if v.EncryptionScope == "" {
		out = append(out, accountStringToSign(account, v, !primary))
	}
	return out
}

// CanonicalizedResource returns the canonicalized resource of a service
// SAS: "/<service>/<account>/<container>[/<object>]". Object names are
// decoded; backslashes in blob and file names become slashes and a leading
// slash of a file path is dropped. Table names are lowercased. For sv older
// than 2015-02-21 the service segment is left out.
func CanonicalizedResource(svc Service, version, account, container, object string) string {
	var b strings.Builder
	if version >= "2015-02-21" {
		b.WriteByte('/')
		b.WriteString(svc.String())
	}
	b.WriteByte('/')
	b.WriteString(account)
	b.WriteByte('/')
	if svc == Table {
		container = strings.ToLower(container)
	}
	b.WriteString(container)
	if object != "" {
		object = strings.ReplaceAll(object, "\\", "/")
		if svc == File {
			object = strings.TrimPrefix(object, "/")
		}
		b.WriteByte('/')
		b.WriteString(object)
	}
	return b.String()
}

// String returns the service's lowercase name ("blob").
func (s Service) String() string {
	switch s {
	case Blob:
		return "blob"
	case Queue:
		return "queue"
	case Table:
		return "table"
	case File:
		return "file"
	}
	return "unknown"
}

// ServiceStringToSign returns the string-to-sign of a service SAS for svc.
// canonical is the canonicalized resource (see CanonicalizedResource);
// signedTimestamp is the snapshot or version time a blob SAS with sr=bs or
// sr=bv is bound to (empty otherwise). The layout follows sv:
//
//	Blob  >= 2020-12-06  sp st se canon si sip spr sv sr ts ses rscc rscd rsce rscl rsct
//	Blob  >= 2018-11-09  sp st se canon si sip spr sv sr ts rscc rscd rsce rscl rsct
//	Blob  >= 2015-04-05  sp st se canon si sip spr sv rscc rscd rsce rscl rsct
//	Blob  >= 2013-08-15  sp st se canon si sv rscc rscd rsce rscl rsct
//	Blob   older         sp st se canon si sv
//	File                 as Blob 2015-04-05 (2015-02-21: without sip spr)
//	Queue >= 2015-04-05  sp st se canon si sip spr sv   (older: without sip spr)
//	Table >= 2015-04-05  sp st se canon si sip spr sv spk srk epk erk (older: without sip spr)
func ServiceStringToSign(svc Service, canonical string, v *Values, signedTimestamp string) string {
	return serviceStringToSign(svc, canonical, v, signedTimestamp, v.Version)
}

// ServiceStringsToSign returns ServiceStringToSign followed, for a Blob
// SAS with sv from 2015-04-05 up to 2020-12-06 and no encryption scope, by
// the 2020-12-06 layout: the Go azblob SDK signs that layout whatever sv it
// is given.
func ServiceStringsToSign(svc Service, canonical string, v *Values, signedTimestamp string) []string {
	out := []string{ServiceStringToSign(svc, canonical, v, signedTimestamp)}
	if svc == Blob && v.Version >= "2015-04-05" && v.Version < "2020-12-06" && v.EncryptionScope == "" {
		out = append(out, serviceStringToSign(svc, canonical, v, signedTimestamp, "2020-12-06"))
	}
	return out
}

// serviceStringToSign lays the fields of v out as the signed version
// layout defines them.
func serviceStringToSign(svc Service, canonical string, v *Values, signedTimestamp, layout string) string {
	f := []string{v.Permissions, v.Start, v.Expiry, canonical, v.Identifier}
	if layout >= "2015-04-05" {
		f = append(f, v.IP, v.Protocol)
	}
	f = append(f, v.Version)
	overrides := []string{v.CacheControl, v.ContentDisposition, v.ContentEncoding, v.ContentLanguage, v.ContentType}
	switch svc {
	case Blob:
		if layout >= "2018-11-09" {
			f = append(f, v.Resource, signedTimestamp)
		}
		if layout >= "2020-12-06" {
			f = append(f, v.EncryptionScope)
		}
		if layout >= "2013-08-15" {
			f = append(f, overrides...)
		}
	case File:
		f = append(f, overrides...)
	case Table:
		f = append(f, v.StartPK, v.StartRK, v.EndPK, v.EndRK)
	}
	return strings.Join(f, "\n")
}

// HasPermission reports whether sp grants at least one of the letters in
// any.
func HasPermission(sp, any string) bool { return strings.ContainsAny(sp, any) && any != "" }

// Encode returns v as a query string (without "?"), with every non-empty
// field under its SAS parameter name.
func (v *Values) Encode() string {
	q := url.Values{}
	for _, f := range [...]struct{ name, value string }{
		{"sv", v.Version}, {"ss", v.Services}, {"srt", v.ResourceTypes}, {"sr", v.Resource},
		{"sp", v.Permissions}, {"st", v.Start}, {"se", v.Expiry}, {"sip", v.IP}, {"spr", v.Protocol},
		{"si", v.Identifier}, {"ses", v.EncryptionScope}, {"sdd", v.DirectoryDepth},
		{"tn", v.TableName}, {"spk", v.StartPK}, {"srk", v.StartRK}, {"epk", v.EndPK}, {"erk", v.EndRK},
		{"rscc", v.CacheControl}, {"rscd", v.ContentDisposition}, {"rsce", v.ContentEncoding},
		{"rscl", v.ContentLanguage}, {"rsct", v.ContentType},
		{"skoid", v.KeyOID}, {"sktid", v.KeyTID}, {"skt", v.KeyStart}, {"ske", v.KeyExpiry}, {"sks", v.KeyService},
		{"skv", v.KeyVersion}, {"saoid", v.AuthorizedOID}, {"suoid", v.UnauthorizedOID}, {"scid", v.CorrelationID},
		{"skdutid", v.DelegatedUserTID}, {"sduoid", v.DelegatedUserOID}, {"srh", v.RequestHeaders}, {"srq", v.RequestQuery},
		{"sig", v.Signature},
	} {
		if f.value != "" {
			q.Set(f.name, f.value)
		}
	}
	return q.Encode()
}

// SignAccount signs v as an account SAS of account with key, sets
// v.Signature and returns the encoded query. It is the client side of
// AccountStringToSign, for tests and tools that speak raw HTTP.
func SignAccount(account string, key []byte, v *Values) string {
	v.Signature = sharedkey.ComputeSignature(key, AccountStringToSign(account, v))
	return v.Encode()
}

// SignService signs v as a service SAS for the resource named by
// container and object (see CanonicalizedResource) with key, sets
// v.Signature and returns the encoded query. signedTimestamp is the
// snapshot or version a Blob SAS with sr=bs or sr=bv is bound to.
func SignService(svc Service, account string, key []byte, container, object, signedTimestamp string, v *Values) string {
	canonical := CanonicalizedResource(svc, v.Version, account, container, object)
	v.Signature = sharedkey.ComputeSignature(key, ServiceStringToSign(svc, canonical, v, signedTimestamp))
	return v.Encode()
}
