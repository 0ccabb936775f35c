package azerr

// Input names a value of a request by what it means to the service
// ("share quota", "handle id"), not by the REST header that carries it:
// a domain package refuses a value with InvalidValue and knows no header
// names, and the REST layer names the header in the error body
// (NameInput), where Azure puts it.
type Input string

// InvalidValue is 400 InvalidHeaderValue for a bad value of in. The REST
// layer adds the HeaderName detail before HeaderValue (NameInput).
func InvalidValue(in Input, value string) *Error {
	e := New(InvalidHeaderValue)
	e.Input = in
	e.Details = []Detail{{"HeaderValue", value}}
	return e
}

// NameInput returns err with the header that carries its Input named
// first among the details (HeaderName, then HeaderValue, as Azure renders
// them) when headers names one; any other error is returned as it is.
func NameInput(err error, headers map[Input]string) error {
	e, ok := As(err)
	if !ok || e.Input == "" {
		return err
	}
	name, ok := headers[e.Input]
	if !ok {
		return err
	}
	c := *e
	c.Input = ""
	c.Details = append([]Detail{{"HeaderName", name}}, e.Details...)
	return &c
}
