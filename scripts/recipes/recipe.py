# The README's Python recipe (Debian packages python3-azure-storage and
# python3-azure). AZURE_STORAGE_CONNECTION_STRING must be the explicit
# connection string: these libraries do not expand UseDevelopmentStorage=true.
import os
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueServiceClient
from azure.data.tables import TableServiceClient

cs = os.environ["AZURE_STORAGE_CONNECTION_STRING"]

blobs = BlobServiceClient.from_connection_string(cs)
container = blobs.create_container("pyrecipe")
container.upload_blob("hello.txt", b"hello from python")
assert container.download_blob("hello.txt").readall() == b"hello from python"

queues = QueueServiceClient.from_connection_string(cs)
queue = queues.create_queue("pyrecipe")
queue.send_message("hello")
assert [m.content for m in queue.receive_messages()] == ["hello"]

tables = TableServiceClient.from_connection_string(cs)
table = tables.create_table("pyrecipe")
table.create_entity({"PartitionKey": "p", "RowKey": "r", "Value": 7})
assert table.get_entity("p", "r")["Value"] == 7
print("python recipe ok")
