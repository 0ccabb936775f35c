// Command recipe is the README's Go recipe: Blob, Queue and Table through
// the official Azure SDK for Go against a running lazuli named by
// AZURE_STORAGE_CONNECTION_STRING, which must be the explicit connection
// string (azblob does not expand UseDevelopmentStorage=true).
// scripts/recipes.sh runs it.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

func main() {
	ctx := context.Background()
	cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")

	blobs, err := azblob.NewClientFromConnectionString(cs, nil)
	check(err)
	_, err = blobs.CreateContainer(ctx, "gorecipe", nil)
	check(err)
	_, err = blobs.UploadBuffer(ctx, "gorecipe", "hello.txt", []byte("hello from go"), nil)
	check(err)
	resp, err := blobs.DownloadStream(ctx, "gorecipe", "hello.txt", nil)
	check(err)
	body, err := io.ReadAll(resp.Body)
	check(err)
	expect(string(body) == "hello from go", "blob content %q", body)

	queues, err := azqueue.NewServiceClientFromConnectionString(cs, nil)
	check(err)
	_, err = queues.CreateQueue(ctx, "gorecipe", nil)
	check(err)
	_, err = queues.NewQueueClient("gorecipe").EnqueueMessage(ctx, "hello", nil)
	check(err)
	msgs, err := queues.NewQueueClient("gorecipe").DequeueMessage(ctx, nil)
	check(err)
	expect(len(msgs.Messages) == 1 && *msgs.Messages[0].MessageText == "hello", "messages %v", msgs.Messages)

	tables, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	check(err)
	_, err = tables.CreateTable(ctx, "gorecipe", nil)
	check(err)
	_, err = tables.NewClient("gorecipe").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","Value":7}`), nil)
	check(err)
	e, err := tables.NewClient("gorecipe").GetEntity(ctx, "p", "r", nil)
	check(err)
	expect(len(e.Value) > 0, "empty entity")
	fmt.Println("go recipe ok")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func expect(ok bool, format string, args ...any) {
	if !ok {
		log.Fatalf(format, args...)
	}
}
