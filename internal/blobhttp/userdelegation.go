package blobhttp

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
	"time"

	"github.com/lazuli-storage/lazuli/internal/auth"
	"github.com/lazuli-storage/lazuli/internal/auth/sas"
	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// MaxUserDelegationKeyLifetime is how far in the future the expiry of a
// user delegation key may lie (Azure's limit).
const MaxUserDelegationKeyLifetime = 7 * 24 * time.Hour

// getUserDelegationKey is Get User Delegation Key (POST
// ?restype=service&comp=userdelegationkey). Only a caller authenticated
// with a bearer token may ask (so only a server running with OAuth); the
// key is derived from the account key and the caller's object and tenant
// ids (sas.UserDelegationKey), so nothing is stored.
func (h *handler) getUserDelegationKey(rq *req) error {
	id := rq.info.Identity
	if id == nil || id.Kind == auth.Anonymous {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	if id.Kind != auth.Bearer || id.Token == nil {
		return azerr.New(azerr.AuthenticationFailed).WithDetail("AuthenticationErrorDetail", "Only authentication scheme Bearer is supported")
	}
	body, err := readBody(rq, 64<<10)
	if err != nil {
		return err
	}
	var in struct {
		XMLName xml.Name `xml:"KeyInfo"`
		Start   string   `xml:"Start"`
		Expiry  string   `xml:"Expiry"`
	}
	if err := xml.Unmarshal(body, &in); err != nil {
		return azerr.New(azerr.InvalidXmlDocument)
	}
	now := h.d.Now().UTC()
	start := now
	if in.Start != "" {
		if start, err = sas.ParseTime(in.Start); err != nil {
			return xmlNodeValue("Start", in.Start)
		}
	}
	expiry, err := sas.ParseTime(in.Expiry)
	if err != nil {
		return xmlNodeValue("Expiry", in.Expiry)
	}
	// Keys are derived over whole seconds, as SDKs write skt and ske.
	start, expiry = start.Truncate(time.Second), expiry.Truncate(time.Second)
	if !expiry.After(start) || expiry.Before(now) || expiry.Sub(now) > MaxUserDelegationKeyLifetime {
		return xmlNodeValue("Expiry", in.Expiry)
	}
	acc, ok := h.d.Auth.Account(rq.info.Account)
	if !ok || len(acc.Keys) == 0 {
		return azerr.New(azerr.AuthenticationFailed)
	}
	version := rq.info.Version
	key := sas.UserDelegationKey(acc.Keys[0], id.Token.ObjectID, id.Token.TenantID, start, expiry, "b", version)
	out := fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?><UserDelegationKey><SignedOid>%s</SignedOid><SignedTid>%s</SignedTid><SignedStart>%s</SignedStart><SignedExpiry>%s</SignedExpiry><SignedService>b</SignedService><SignedVersion>%s</SignedVersion><Value>%s</Value></UserDelegationKey>`,
		azerr.EscapeXML(id.Token.ObjectID), azerr.EscapeXML(id.Token.TenantID),
		start.Format(sas.KeyTimeLayout), expiry.Format(sas.KeyTimeLayout), azerr.EscapeXML(version),
		base64.StdEncoding.EncodeToString(key))
	return writeXML(rq, http.StatusOK, out)
}

func xmlNodeValue(name, value string) error {
	return azerr.New(azerr.InvalidXmlNodeValue).WithDetail("XmlNodeName", name).WithDetail("XmlNodeValue", value)
}
