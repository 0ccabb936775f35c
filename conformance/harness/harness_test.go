package harness

import (
	"io"
	"net/http"
	"testing"
)

// TestTargetsAnswerWithAzureErrors checks that every target starts and that
// a request to an unknown resource gets an Azure error, not a hang or a
// reset.
func TestTargetsAnswerWithAzureErrors(t *testing.T) {
	ForEach(t, func(t *testing.T, tg *Target) {
		for _, u := range []string{tg.BlobURL, tg.QueueURL, tg.TableURL, tg.FileURL} {
			req, _ := http.NewRequest(http.MethodGet, u+"/nosuchthing/x?comp=bogus", nil)
			resp, err := tg.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 400 || resp.Header.Get("x-ms-error-code") == "" {
				t.Errorf("%s: status %d code %q", u, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
			}
			if resp.Header.Get("x-ms-request-id") == "" {
				t.Errorf("%s: no x-ms-request-id", u)
			}
		}
	})
}
