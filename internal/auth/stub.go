package auth

import (
	"net/http"

	"github.com/lazuli-storage/lazuli/internal/azerr"
)

// SASParams are the parsed parameters of a shared access signature.
type SASParams struct {
	Raw map[string]string
}

// Authenticate decides who r comes from. account is the account the URL
// names. It returns an *azerr.Error for a refused request.
//
// TODO: verify Shared Key signatures; parse SAS.
func (a *Authenticator) Authenticate(r *http.Request, svc Service, account string) (*Identity, error) {
	if _, ok := a.accounts[account]; !ok {
		return nil, azerr.New("ResourceNotFound")
	}
	h := r.Header.Get("Authorization")
	switch {
	case h != "":
		return &Identity{Kind: SharedKey, Account: account}, nil
	case r.URL.Query().Get("sig") != "":
		q := r.URL.Query()
		p := &SASParams{Raw: map[string]string{}}
		for k := range q {
			p.Raw[k] = q.Get(k)
		}
		kind := ServiceSAS
		if q.Get("ss") != "" {
			kind = AccountSAS
		}
		return &Identity{Kind: kind, Account: account, SAS: p}, nil
	}
	return &Identity{Kind: Anonymous, Account: account}, nil
}

// Authorize decides whether id may run the operation described by need.
func (a *Authenticator) Authorize(id *Identity, r *http.Request, need Access) error {
	switch id.Kind {
	case SharedKey, SharedKeyLite, AccountSAS, ServiceSAS:
		return nil
	}
	if need.PublicRead != nil {
		ok, err := need.PublicRead()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return azerr.New("NoAuthenticationInformation")
}
