package blobhttp

import (
	"slices"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/blob"
)

// Encryption scopes. lazuli encrypts nothing itself; it knows the scopes
// every account has (the --encryptionScopes list, plus the account's own
// key "$account-encryption-key"), lets containers name a default scope
// and refuse others, keeps the scope a blob was written with and reports
// it as Azure does: x-ms-encryption-scope on the write and on every read.

const accountScope = "$account-encryption-key"

// scopeKnown reports whether the account has the encryption scope name.
func (h *handler) scopeKnown(name string) bool {
	return name == accountScope || slices.Contains(h.d.EncryptionScopes, name)
}

// containerScope reads x-ms-default-encryption-scope and
// x-ms-deny-encryption-scope-override of Create Container. A scope the
// account does not have, or a deny value that is not a boolean, is 400
// InvalidHeaderValue.
func (h *handler) containerScope(rq *req) (scope string, deny bool, err error) {
	hd := rq.r.Header
	scope = hd.Get("X-Ms-Default-Encryption-Scope")
	if scope != "" && !h.scopeKnown(scope) {
		return "", false, azerr.InvalidHeader("x-ms-default-encryption-scope", scope)
	}
	if scope == accountScope {
		scope = ""
	}
	switch v := hd.Get("X-Ms-Deny-Encryption-Scope-Override"); v {
	case "", "false", "False":
	case "true", "True":
		deny = true
	default:
		return "", false, azerr.InvalidHeader("x-ms-deny-encryption-scope-override", v)
	}
	return scope, deny, nil
}

// scopeCond resolves the encryption scope of a write that creates a blob:
// the request's x-ms-encryption-scope, else the container's default. A
// scope the account does not have, or one other than the default of a
// container that denies overrides, is 400 InvalidHeaderValue. The answer
// echoes the scope (status).
func (h *handler) scopeCond(rq *req, cond *blob.Cond) error {
	scope := rq.r.Header.Get("X-Ms-Encryption-Scope")
	if scope != "" && !h.scopeKnown(scope) {
		return azerr.InvalidHeader("x-ms-encryption-scope", scope)
	}
	if len(h.d.EncryptionScopes) == 0 {
		// No scope but the account's own key: no container can name
		// another, so the hot path skips the container lookup.
		return nil
	}
	c, err := h.svc.ContainerExists(rq.ctx(), rq.info.Account, rq.container)
	if err != nil || c == nil {
		// The write reports the missing container itself.
		return err
	}
	switch {
	case scope == "":
		scope = c.DefaultScope
	case c.DenyScopeOverride && scope != c.DefaultScope && !(scope == accountScope && c.DefaultScope == ""):
		return azerr.InvalidHeader("x-ms-encryption-scope", scope)
	}
	if scope == accountScope {
		scope = ""
	}
	cond.EncryptionScope, rq.scope = scope, scope
	return nil
}

// defaultScope is the default encryption scope a container reports.
func defaultScope(c *blob.Container) string {
	if c.DefaultScope == "" {
		return accountScope
	}
	return c.DefaultScope
}
