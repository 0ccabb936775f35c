package httpx

import (
	"io"
	"net/http"
	"strconv"
)

// XMLDeclaration starts every XML body the services send, as Azure
// writes it.
const XMLDeclaration = `<?xml version="1.0" encoding="utf-8"?>`

// WriteXML sends status with the XML document doc (given without its
// declaration) as application/xml. A HEAD response carries the headers
// of the GET, Content-Length included, and no body.
func WriteXML(w http.ResponseWriter, r *http.Request, status int, doc string) {
	hd := w.Header()
	hd.Set("Content-Type", "application/xml")
	hd.Set("Content-Length", strconv.Itoa(len(XMLDeclaration)+len(doc)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		io.WriteString(w, XMLDeclaration)
		io.WriteString(w, doc)
	}
}
