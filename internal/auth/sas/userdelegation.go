package sas

import (
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sharedkey"
)

// KeyTimeLayout is how the start and expiry of a user delegation key are
// written when the key is derived: whole seconds, UTC, as SDKs put them
// in skt and ske.
const KeyTimeLayout = "2006-01-02T15:04:05Z"

// UserDelegationKey derives the value of a user delegation key from a
// secret of the server (an account key) and the key's fields: the object
// and tenant ids of the caller it was issued to, its start and expiry
// (normalized to KeyTimeLayout, so that any accepted spelling of the same
// instant gives the same key), service and version. The server keeps no
// list of issued keys: a user delegation SAS is verified by deriving the
// key again from its skoid, sktid, skt, ske, sks and skv.
//
// role is the data role the key's owner held when it asked for the key
// (one of KeyRoles): a SAS is as strong as its key's owner, and the SAS
// carries no field for it, so it is part of the derivation and the
// verifier finds it by trying each.
func UserDelegationKey(secret []byte, oid, tid string, start, expiry time.Time, service, version, role string) []byte {
	m := hmac.New(sha256.New, secret)
	fields := []string{"lazuli user delegation key", oid, tid,
		start.UTC().Format(KeyTimeLayout), expiry.UTC().Format(KeyTimeLayout), service, version}
	if role != "" {
		fields = append(fields, role)
	}
	m.Write([]byte(strings.Join(fields, "\n")))
	return m.Sum(nil)
}

// KeyRoles are the data roles a user delegation key may be derived for,
// weakest first ("": none).
var KeyRoles = []string{"", "reader", "contributor", "owner"}

// UserDelegationStringsToSign returns the strings-to-sign of a Blob user
// delegation SAS for canonical (see CanonicalizedResource): first the
// layout sv defines, then the other layouts, because SDKs sign one fixed
// layout whatever sv they are given (the Go azblob SDK always the newest).
//
//	>= 2018-11-09  sp st se canon skoid sktid skt ske sks skv sip spr sv sr ts rscc rscd rsce rscl rsct
//	>= 2020-02-10  ... skv saoid suoid scid sip ...
//	>= 2020-12-06  ... sr ts ses rscc ...
//	>= 2025-07-05  ... scid skdutid sduoid sip ...
//	>= 2026-04-06  ... ses srh srq rscc ...
//
// srh and srq name the bound headers and query parameters; the signed
// lines are their canonical "name:value" lists, which the caller supplies
// as signedHeaders and signedQuery (empty when srh and srq are absent).
func UserDelegationStringsToSign(canonical string, v *Values, signedTimestamp, signedHeaders, signedQuery string) []string {
	layouts := []string{"2026-04-06", "2025-07-05", "2020-12-06", "2020-02-10", "2018-11-09"}
	primary := ""
	for _, l := range layouts {
		if v.Version >= l {
			primary = l
			break
		}
	}
	if primary == "" {
		primary = "2018-11-09"
	}
	out := []string{userDelegationStringToSign(canonical, v, signedTimestamp, signedHeaders, signedQuery, primary)}
	for _, l := range layouts {
		if l != primary {
			out = append(out, userDelegationStringToSign(canonical, v, signedTimestamp, signedHeaders, signedQuery, l))
		}
	}
	return out
}

func userDelegationStringToSign(canonical string, v *Values, ts, signedHeaders, signedQuery, layout string) string {
	f := []string{v.Permissions, v.Start, v.Expiry, canonical,
		v.KeyOID, v.KeyTID, v.KeyStart, v.KeyExpiry, v.KeyService, v.KeyVersion}
	if layout >= "2020-02-10" {
		f = append(f, v.AuthorizedOID, v.UnauthorizedOID, v.CorrelationID)
	}
	if layout >= "2025-07-05" {
		f = append(f, v.DelegatedUserTID, v.DelegatedUserOID)
	}
	f = append(f, v.IP, v.Protocol, v.Version, v.Resource, ts)
	if layout >= "2020-12-06" {
		f = append(f, v.EncryptionScope)
	}
	if layout >= "2026-04-06" {
		// The bound request headers and query (srh, srq) came with
		// version 2026-04-06; 2025-07-05 signs the delegated user only.
		f = append(f, signedHeaders, signedQuery)
	}
	f = append(f, v.CacheControl, v.ContentDisposition, v.ContentEncoding, v.ContentLanguage, v.ContentType)
	return strings.Join(f, "\n")
}

// SignUserDelegation signs v as a Blob user delegation SAS for the
// resource named by container and object with the key value udk, sets
// v.Signature and returns the encoded query (tests and raw-HTTP tools).
func SignUserDelegation(account string, udk []byte, container, object, signedTimestamp string, v *Values) string {
	canonical := CanonicalizedResource(Blob, v.Version, account, container, object)
	v.Signature = sharedkey.ComputeSignature(udk, UserDelegationStringsToSign(canonical, v, signedTimestamp, "", "")[0])
	return v.Encode()
}
