package emulator_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/lazuli-storage/lazuli/emulator"
)

// Example_transport talks to the Table service with nothing but the
// standard library and no socket: the emulator does not listen, and its
// Transport hands each request to the service in process. Requests are
// signed with Shared Key Lite, the simplest scheme Azure accepts. An
// Azure SDK client takes the same Transport in its ClientOptions.
func Example_transport() {
	emu, err := emulator.Start(emulator.Options{InMemory: true, NoListen: true})
	if err != nil {
		log.Fatal(err)
	}
	defer emu.Close()
	client := &http.Client{Transport: emu.Transport()}
	key, _ := base64.StdEncoding.DecodeString(emulator.Key)

	do := func(method, path, body string) *http.Response {
		req, err := http.NewRequest(method, emu.Endpoint(emulator.Table)+path, strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		date := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("x-ms-date", date)
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		req.Header.Set("Content-Type", "application/json")
		// Shared Key Lite for Table: the date, then the account and the
		// request's path (which, path-style, starts with the account).
		mac := hmac.New(sha256.New, key)
		fmt.Fprintf(mac, "%s\n/%s%s", date, emulator.Account, req.URL.EscapedPath())
		sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
		req.Header.Set("Authorization", "SharedKeyLite "+emulator.Account+":"+sig)
		resp, err := client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		return resp
	}

	resp := do("POST", "/Tables", `{"TableName":"pets"}`)
	resp.Body.Close()
	fmt.Println("create table:", resp.Status)

	resp = do("POST", "/pets", `{"PartitionKey":"dogs","RowKey":"rex","Age":3}`)
	resp.Body.Close()
	fmt.Println("insert entity:", resp.Status)

	resp = do("GET", "/pets(PartitionKey='dogs',RowKey='rex')", "")
	var pet struct {
		RowKey string
		Age    int
	}
	err = json.NewDecoder(resp.Body).Decode(&pet)
	resp.Body.Close()
	fmt.Println("get entity:", resp.Status, pet.RowKey, pet.Age, err)

	// Output:
	// create table: 201 Created
	// insert entity: 201 Created
	// get entity: 200 OK rex 3 <nil>
}
