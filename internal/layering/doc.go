// Package layering holds no code: its test reads the import graph of the
// module and enforces the layering rules of the README (domain packages
// import no net/http, no domain imports another, leaves import nothing
// from the services, the SMB server knows nothing of Azure, and nothing
// imports a layer above its own).
package layering
