package auth

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth/sas"
	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// MaxUserDelegationKeyLifetime is how far in the future the expiry of a
// user delegation key may lie (Azure's limit).
const MaxUserDelegationKeyLifetime = 7 * 24 * time.Hour

// IssueUserDelegationKey is Get User Delegation Key on any service
// endpoint: body reads the request's KeyInfo (once the caller is known
// to be allowed), svc is the signed service of the
// key ("b" for Blob, "f" for File). It returns the UserDelegationKey
// document. Only a caller authenticated with a bearer token may ask (so
// only a server running with OAuth); the key is derived from the account
// key, the caller's object and tenant ids and its data role
// (sas.UserDelegationKey), so nothing is stored. A DelegatedUserTid other than the caller's own
// tenant is 403 AuthenticationFailed, as Azure answers a tenant it cannot
// delegate to.
func (a *Authenticator) IssueUserDelegationKey(id *Identity, account, version, svc string, body func() ([]byte, error)) (string, error) {
	if id == nil || id.Kind == Anonymous {
		return "", azerr.New(azerr.NoAuthenticationInformation)
	}
	if id.Kind != Bearer || id.Token == nil {
		return "", azerr.New(azerr.AuthenticationFailed).WithDetail("AuthenticationErrorDetail", "Only authentication scheme Bearer is supported")
	}
	var in struct {
		XMLName          xml.Name `xml:"KeyInfo"`
		Start            string   `xml:"Start"`
		Expiry           string   `xml:"Expiry"`
		DelegatedUserTid *string  `xml:"DelegatedUserTid"`
	}
	b, err := body()
	if err != nil {
		return "", err
	}
	if err := xml.Unmarshal(b, &in); err != nil {
		return "", azerr.New(azerr.InvalidXmlDocument)
	}
	if t := in.DelegatedUserTid; t != nil && *t != id.Token.TenantID {
		return "", azerr.New(azerr.AuthenticationFailed).WithDetail("AuthenticationErrorDetail",
			fmt.Sprintf("The delegated user tenant %s is not the tenant of the caller.", *t))
	}
	now := a.now().UTC()
	start := now
	if in.Start != "" {
		if start, err = sas.ParseTime(in.Start); err != nil {
			return "", xmlNodeValue("Start", in.Start)
		}
	}
	expiry, err := sas.ParseTime(in.Expiry)
	if err != nil {
		return "", xmlNodeValue("Expiry", in.Expiry)
	}
	// Keys are derived over whole seconds, as SDKs write skt and ske.
	start, expiry = start.Truncate(time.Second), expiry.Truncate(time.Second)
	if !expiry.After(start) || expiry.Before(now) || expiry.Sub(now) > MaxUserDelegationKeyLifetime {
		return "", xmlNodeValue("Expiry", in.Expiry)
	}
	acc, ok := a.Account(account)
	if !ok || len(acc.Keys) == 0 {
		return "", azerr.New(azerr.AuthenticationFailed)
	}
	key := sas.UserDelegationKey(acc.Keys[0], id.Token.ObjectID, id.Token.TenantID, start, expiry, svc, version, DataRole(id.Token.Roles))
	return fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?><UserDelegationKey><SignedOid>%s</SignedOid><SignedTid>%s</SignedTid><SignedStart>%s</SignedStart><SignedExpiry>%s</SignedExpiry><SignedService>%s</SignedService><SignedVersion>%s</SignedVersion><Value>%s</Value></UserDelegationKey>`,
		azerr.EscapeXML(id.Token.ObjectID), azerr.EscapeXML(id.Token.TenantID),
		start.Format(sas.KeyTimeLayout), expiry.Format(sas.KeyTimeLayout), svc, azerr.EscapeXML(version),
		base64.StdEncoding.EncodeToString(key)), nil
}

func xmlNodeValue(name, value string) error {
	return azerr.New(azerr.InvalidXmlNodeValue).WithDetail("XmlNodeName", name).WithDetail("XmlNodeValue", value)
}

// Azure data role names a token's roles claim may carry. Entra ID tokens
// do not carry Azure role assignments, which lazuli cannot look up, so a
// token without them is a principal without a role.
const (
	roleOwner       = "storage blob data owner"
	roleContributor = "storage blob data contributor"
	roleReader      = "storage blob data reader"
)

// DataRole is the strongest Azure data role a roles claim names, as
// sas.KeyRoles spells it: "owner", "contributor", "reader" or "".
func DataRole(roles []string) string {
	best := 0
	for _, r := range roles {
		n := 0
		switch strings.ToLower(r) {
		case roleOwner:
			n = 3
		case roleContributor:
			n = 2
		case roleReader:
			n = 1
		}
		best = max(best, n)
	}
	return sas.KeyRoles[best]
}
