// Package bearer reads the Azure AD (Microsoft Entra ID) access tokens that
// clients send as "Authorization: Bearer <token>" and checks them the way
// the reference emulator's basic OAuth level does: the token must be a
// JWT whose issuer is an Azure AD token service, whose audience is Azure
// Storage or the account's endpoint for the service, and whose lifetime
// (nbf, exp, with iat present) covers the current time. The signature is
// not checked: a local emulator has no access to the tenant's signing keys,
// so any well-formed token passes. It is a leaf package.
package bearer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Claims are the token claims the server reads.
type Claims struct {
	Issuer   string   `json:"iss"`
	Audience Audience `json:"aud"`
	// NotBefore, Expires and IssuedAt are Unix seconds; nil when absent.
	NotBefore *float64 `json:"nbf"`
	Expires   *float64 `json:"exp"`
	IssuedAt  *float64 `json:"iat"`
	// ObjectID and TenantID identify the caller; they become the skoid and
	// sktid of the user delegation keys it is given.
	ObjectID string `json:"oid"`
	TenantID string `json:"tid"`
	// Groups are the object ids of the caller's security groups (the
	// groups claim); Data Lake ACLs match their group entries against them.
	Groups []string `json:"groups"`
	// Roles is the roles claim. Entra ID puts app roles there, not Azure
	// role assignments, which a local server cannot look up; lazuli reads
	// the Azure Storage data role names from it (see the dfs API).
	Roles []string `json:"roles"`
	// UPN, UniqueName and PreferredUsername name a user: Entra ID's v1
	// tokens (those for Azure Storage) carry upn and unique_name, v2
	// tokens preferred_username. Applications' tokens carry none.
	UPN               string `json:"upn"`
	UniqueName        string `json:"unique_name"`
	PreferredUsername string `json:"preferred_username"`
}

// PrincipalName is the user principal name a token gives its caller: upn,
// else unique_name, else preferred_username; "" for an application.
func (c *Claims) PrincipalName() string {
	switch {
	case c.UPN != "":
		return c.UPN
	case c.UniqueName != "":
		return c.UniqueName
	}
	return c.PreferredUsername
}

// Audience is the aud claim: one string, or (as JWT allows) a list.
type Audience []string

// UnmarshalJSON accepts a string or an array of strings.
func (a *Audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = Audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*a = many
	return nil
}

// Error is a token the server refuses; Detail is meant for the
// AuthenticationErrorDetail element of the error response.
type Error struct{ Detail string }

func (e *Error) Error() string { return "bearer: " + e.Detail }

// Parse decodes a compact JWT (header.payload.signature, base64url). The
// header must name a JWT; the signature part may be empty. It does not
// check the claims (see Check).
func Parse(token string) (*Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, &Error{"The token is not a JWT (header.payload.signature)."}
	}
	var hdr struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
	}
	if err := decodePart(parts[0], &hdr); err != nil || hdr.Alg == "" {
		return nil, &Error{"The token header is not valid."}
	}
	var c Claims
	if err := decodePart(parts[1], &c); err != nil {
		return nil, &Error{"The token payload is not valid."}
	}
	return &c, nil
}

func decodePart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Issuers are the prefixes of the token services whose tokens are
// accepted: Azure AD's global, German, Chinese and pre-production clouds.
var Issuers = []string{
	"https://sts.windows.net/",
	"https://sts.microsoftonline.de/",
	"https://sts.chinacloudapi.cn/",
	"https://sts.windows-ppe.net",
}

// StorageAppID is the application id of Azure Storage, which tokens may
// carry as audience instead of its URL.
const StorageAppID = "e406a681-f3d4-42a8-90b6-c2b029497af1"

// endpointSuffixes are the storage endpoint domains of the Azure clouds.
var endpointSuffixes = []string{".core.windows.net", ".core.chinacloudapi.cn", ".core.usgovcloudapi.net", ".core.cloudapi.de"}

// AudienceMatches reports whether aud names Azure Storage as a whole
// ("https://storage.azure.com", with or without a final slash, or its
// application id) or the endpoint of account for service ("blob",
// "queue", "table", "file"), e.g. "https://devstoreaccount1.blob.core.windows.net".
func AudienceMatches(aud, service, account string) bool {
	aud = strings.TrimSuffix(aud, "/")
	if aud == "https://storage.azure.com" || aud == StorageAppID {
		return true
	}
	host, ok := strings.CutPrefix(aud, "https://")
	if !ok {
		return false
	}
	for _, suffix := range endpointSuffixes {
		if host == account+"."+service+suffix {
			return true
		}
	}
	return false
}

// Check verifies the claims for a request to service of account at now:
// lifetime first, then issuer, then audience, each failure with its own
// detail.
func Check(c *Claims, service, account string, now time.Time) error {
	if c.NotBefore == nil || c.Expires == nil || c.IssuedAt == nil {
		return &Error{"The token must carry nbf, exp and iat claims."}
	}
	if now.Before(unix(*c.NotBefore)) {
		return &Error{fmt.Sprintf("Lifetime validation failed. The token is not yet valid (nbf %s).", unix(*c.NotBefore).UTC().Format(time.RFC3339))}
	}
	if now.After(unix(*c.Expires)) {
		return &Error{"Lifetime validation failed. The token is expired."}
	}
	issuerOK := false
	for _, p := range Issuers {
		issuerOK = issuerOK || strings.HasPrefix(c.Issuer, p)
	}
	if !issuerOK {
		return &Error{"Issuer validation failed. Issuer did not match."}
	}
	for _, a := range c.Audience {
		if AudienceMatches(a, service, account) {
			return nil
		}
	}
	return &Error{"Audience validation failed. Audience did not match."}
}

func unix(sec float64) time.Time {
	whole := int64(sec)
	return time.Unix(whole, int64((sec-float64(whole))*1e9))
}
