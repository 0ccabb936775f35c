package azerr

// Code is an Azure Storage error code. Every code lazuli emits is a
// constant of this type, listed once in catalog with its HTTP status and
// Azure's default message, so a misspelt code does not compile and a code
// without a status cannot exist.
type Code uint16

// The error codes, as Azure spells them.
const (
	_ Code = iota // the zero Code is not an error code
	// Common to all services.
	AccountIsDisabled
	AuthenticationFailed
	AuthorizationFailure
	AuthorizationPermissionMismatch
	AuthorizationResourceTypeMismatch
	AuthorizationServiceMismatch
	AuthorizationProtocolMismatch
	AuthorizationSourceIPMismatch
	ConditionHeadersNotSupported
	ConditionNotMet
	EmptyMetadataKey
	InsufficientAccountPermissions
	InternalError
	InvalidAuthenticationInfo
	InvalidHeaderValue
	InvalidHttpVerb
	InvalidInput
	InvalidMd5
	InvalidMetadata
	InvalidQueryParameterValue
	InvalidRange
	InvalidResourceName
	InvalidUri
	InvalidXmlDocument
	InvalidXmlNodeValue
	Md5Mismatch
	MetadataTooLarge
	MissingContentLengthHeader
	MissingRequiredQueryParameter
	MissingRequiredHeader
	MissingRequiredXmlNode
	MultipleConditionHeadersNotSupported
	NoAuthenticationInformation
	NotImplemented
	OperationTimedOut
	OutOfRangeInput
	OutOfRangeQueryParameterValue
	RequestBodyTooLarge
	RequestUrlFailedToParse
	ResourceAlreadyExists
	ResourceNotFound
	ResourceTypeMismatch
	ServerBusy
	UnsupportedHeader
	UnsupportedHttpVerb
	UnsupportedQueryParameter
	UnsupportedXmlNode
	InvalidCorsRule
	CorsPreflightFailure
	InvalidVersion

	// Blob.
	AccessTierChangeTimeConditionNotMet
	AppendPositionConditionNotMet
	BlobAlreadyExists
	BlobArchived
	BlobImmutableDueToLegalHold
	BlobImmutableDueToPolicy
	ContainerImmutableStorageWithVersioningEnabled
	BlobBeingRehydrated
	IncrementalCopyOfEarlierSnapshotNotAllowed
	BlobDoesNotUseCustomerSpecifiedEncryption
	BlobUsesCustomerSpecifiedEncryption
	BlobIsSealed
	BothCrc64AndMd5HeaderPresent
	Crc64Mismatch
	BlobNotFound
	BlobOperationNotSupported
	BlobOverwritten
	BlobTierInadequateForContentLength
	BlockCountExceedsLimit
	BlockListTooLong
	CannotVerifyCopySource
	ContainerAlreadyExists
	ContainerBeingDeleted
	ContainerNotFound
	CopyAcrossAccountsNotSupported
	CopyIdMismatch
	InfiniteLeaseDurationRequired
	InvalidBlobOrBlock
	InvalidBlobTier
	InvalidBlobType
	InvalidBlockId
	InvalidBlockList
	InvalidOperation
	InvalidPageRange
	InvalidSourceBlobType
	InvalidSourceBlobUrl
	InvalidVersionForPageBlobOperation
	LeaseAlreadyBroken
	LeaseAlreadyPresent
	LeaseIdMismatchWithBlobOperation
	LeaseIdMismatchWithContainerOperation
	LeaseIdMismatchWithLeaseOperation
	LeaseIdMissing
	LeaseIsBreakingAndCannotBeAcquired
	LeaseIsBreakingAndCannotBeChanged
	LeaseIsBrokenAndCannotBeRenewed
	LeaseLost
	LeaseNotPresentWithBlobOperation
	LeaseNotPresentWithContainerOperation
	LeaseNotPresentWithLeaseOperation
	MaxBlobSizeConditionNotMet
	NoPendingCopyOperation
	PendingCopyOperation
	PreviousSnapshotCannotBeNewer
	PreviousSnapshotNotFound
	SequenceNumberConditionNotMet
	SequenceNumberIncrementTooLarge
	SnapshotsPresent
	SourceConditionNotMet
	TargetConditionNotMet
	UnauthorizedBlobOverwrite
	FeatureVersionMismatch
	InvalidBlobTagsFilter
	UnsatisfiableCondition
	InvalidTag

	// Queue.
	MessageNotFound
	MessageTooLarge
	PopReceiptMismatch
	QueueAlreadyExists
	QueueBeingDeleted
	QueueDisabled
	QueueNotEmpty
	QueueNotFound
	InvalidMarker

	// Table.
	AtomFormatNotSupported
	CommandsInBatchActOnDifferentPartitions
	DuplicatePropertiesSpecified
	EntityAlreadyExists
	EntityTooLarge
	HostInformationNotPresent
	InvalidDuplicateRow
	InvalidValueType
	JsonFormatNotSupported
	KeyValueTooLarge
	MediaTypeNotSupported
	MethodNotAllowed
	PropertiesNeedValue
	PropertyNameInvalid
	PropertyNameTooLong
	PropertyValueTooLarge
	TableAlreadyExists
	TableBeingDeleted
	TableNotFound
	TooManyProperties
	UpdateConditionNotSatisfied
	XMethodIncorrectCount
	XMethodIncorrectValue
	XMethodNotUsingPost
	NotSupported

	// File.
	CannotDeleteFileOrDirectory
	ClientCacheFlushDelay
	DeletePending
	DirectoryNotEmpty
	FileLockConflict
	InvalidFileOrDirectoryPathName
	ParentNotFound
	ReadOnlyAttribute
	ShareAlreadyExists
	ShareBeingDeleted
	ShareDisabled
	ShareNotFound
	SharingViolation
	ShareSnapshotInProgress
	ShareHasSnapshots
	ContainerQuotaDowngradeNotAllowed
	SMBDeletePending
	ResourceNotFoundFile
	DeleteShareWhenSnapshotLeased
	FileInvalidPermission
	FileInvalidPermissionKey
	HandleLimitExceeded
	LeaseIdMismatchWithFileOperation
	LeaseNotPresentWithFileOperation
	LeaseIdMismatchWithShareOperation
	LeaseNotPresentWithShareOperation
	ShareSizeLimitReached
	ShareSnapshotCountExceeded
	ShareSnapshotNotFound
	ShareSnapshotOperationNotSupported
	// Data Lake Storage (the dfs API of a hierarchical namespace).
	FilesystemNotFound
	FilesystemAlreadyExists
	PathNotFound
	PathAlreadyExists
	PathConflict
	SourcePathNotFound
	RenameDestinationParentPathNotFound
	InvalidSourceOrDestinationResourceType
	InvalidRenameSourcePath
	InvalidDestinationPath
	InvalidFlushPosition
	InvalidFlushOperation
	InvalidAppendOperation
	InvalidPropertyName
	InvalidPermission
	InvalidAccessControlList
	InvalidResourceType
	LeaseNameMismatch
	HierarchicalNamespaceNotEnabled
)

type def struct {
	name    string
	status  int
	message string
}

// catalog gives every code its name, status and Azure's default message.
var catalog = [...]def{
	// Common to all services.
	AccountIsDisabled:                    {"AccountIsDisabled", 403, "The specified account is disabled."},
	AuthenticationFailed:                 {"AuthenticationFailed", 403, "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."},
	AuthorizationFailure:                 {"AuthorizationFailure", 403, "This request is not authorized to perform this operation."},
	AuthorizationPermissionMismatch:      {"AuthorizationPermissionMismatch", 403, "This request is not authorized to perform this operation using this permission."},
	AuthorizationResourceTypeMismatch:    {"AuthorizationResourceTypeMismatch", 403, "This request is not authorized to perform this operation using this resource type."},
	AuthorizationServiceMismatch:         {"AuthorizationServiceMismatch", 403, "This request is not authorized to perform this operation using this service."},
	AuthorizationProtocolMismatch:        {"AuthorizationProtocolMismatch", 403, "This request is not authorized to perform this operation using this protocol."},
	AuthorizationSourceIPMismatch:        {"AuthorizationSourceIPMismatch", 403, "This request is not authorized to perform this operation using this source IP."},
	ConditionHeadersNotSupported:         {"ConditionHeadersNotSupported", 400, "Condition headers are not supported."},
	ConditionNotMet:                      {"ConditionNotMet", 412, "The condition specified using HTTP conditional header(s) is not met."},
	EmptyMetadataKey:                     {"EmptyMetadataKey", 400, "The key for one of the metadata key-value pairs is empty."},
	InsufficientAccountPermissions:       {"InsufficientAccountPermissions", 403, "The account being accessed does not have sufficient permissions to execute this operation."},
	InternalError:                        {"InternalError", 500, "The server encountered an internal error. Please retry the request."},
	InvalidAuthenticationInfo:            {"InvalidAuthenticationInfo", 400, "Authentication information is not given in the correct format. Check the value of Authorization header."},
	InvalidHeaderValue:                   {"InvalidHeaderValue", 400, "The value for one of the HTTP headers is not in the correct format."},
	InvalidHttpVerb:                      {"InvalidHttpVerb", 400, "The HTTP verb specified was not recognized by the server."},
	InvalidInput:                         {"InvalidInput", 400, "One of the request inputs is not valid."},
	InvalidMd5:                           {"InvalidMd5", 400, "The MD5 value specified in the request is invalid. The MD5 value must be 128 bits and Base64-encoded."},
	InvalidMetadata:                      {"InvalidMetadata", 400, "The metadata specified is invalid. It has characters that are not permitted."},
	InvalidQueryParameterValue:           {"InvalidQueryParameterValue", 400, "Value for one of the query parameters specified in the request URI is invalid."},
	InvalidRange:                         {"InvalidRange", 416, "The range specified is invalid for the current size of the resource."},
	InvalidResourceName:                  {"InvalidResourceName", 400, "The specifed resource name contains invalid characters."},
	InvalidUri:                           {"InvalidUri", 400, "The requested URI does not represent any resource on the server."},
	InvalidXmlDocument:                   {"InvalidXmlDocument", 400, "XML specified is not syntactically valid."},
	InvalidXmlNodeValue:                  {"InvalidXmlNodeValue", 400, "The value for one of the XML nodes is not in the correct format."},
	Md5Mismatch:                          {"Md5Mismatch", 400, "The MD5 value specified in the request did not match with the MD5 value calculated by the server."},
	MetadataTooLarge:                     {"MetadataTooLarge", 400, "The size of the specified metadata exceeds the maximum size permitted."},
	MissingContentLengthHeader:           {"MissingContentLengthHeader", 411, "The Content-Length header was not specified."},
	MissingRequiredQueryParameter:        {"MissingRequiredQueryParameter", 400, "A required query parameter was not specified for this request."},
	MissingRequiredHeader:                {"MissingRequiredHeader", 400, "An HTTP header that's mandatory for this request is not specified."},
	MissingRequiredXmlNode:               {"MissingRequiredXmlNode", 400, "A required XML node was not specified in the request body."},
	MultipleConditionHeadersNotSupported: {"MultipleConditionHeadersNotSupported", 400, "Multiple condition headers are not supported."},
	NoAuthenticationInformation:          {"NoAuthenticationInformation", 401, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."},
	NotImplemented:                       {"NotImplemented", 501, "The requested operation is not implemented on the specified resource."},
	OperationTimedOut:                    {"OperationTimedOut", 500, "The operation could not be completed within the permitted time."},
	OutOfRangeInput:                      {"OutOfRangeInput", 400, "One of the request inputs is out of range."},
	OutOfRangeQueryParameterValue:        {"OutOfRangeQueryParameterValue", 400, "One of the query parameters specified in the request URI is outside the permissible range."},
	RequestBodyTooLarge:                  {"RequestBodyTooLarge", 413, "The request body is too large and exceeds the maximum permissible limit."},
	RequestUrlFailedToParse:              {"RequestUrlFailedToParse", 400, "The url in the request could not be parsed."},
	ResourceAlreadyExists:                {"ResourceAlreadyExists", 409, "The specified resource already exists."},
	ResourceNotFound:                     {"ResourceNotFound", 404, "The specified resource does not exist."},
	ResourceTypeMismatch:                 {"ResourceTypeMismatch", 409, "The specified resource type does not match the type of the existing resource."},
	ServerBusy:                           {"ServerBusy", 503, "The server is currently unable to receive requests. Please retry your request."},
	UnsupportedHeader:                    {"UnsupportedHeader", 400, "One of the HTTP headers specified in the request is not supported."},
	UnsupportedHttpVerb:                  {"UnsupportedHttpVerb", 405, "The resource doesn't support the specified HTTP verb."},
	UnsupportedQueryParameter:            {"UnsupportedQueryParameter", 400, "One of the query parameters specified in the request URI is not supported."},
	UnsupportedXmlNode:                   {"UnsupportedXmlNode", 400, "One of the XML nodes specified in the request body is not supported."},
	InvalidCorsRule:                      {"InvalidCorsRule", 400, "CORS rules are not valid."},
	CorsPreflightFailure:                 {"CorsPreflightFailure", 403, "CORS not enabled or no matching rule found for this request."},
	InvalidVersion:                       {"InvalidVersion", 400, "The value for one of the HTTP headers is not in the correct format."},

	// Blob.
	AccessTierChangeTimeConditionNotMet:   {"AccessTierChangeTimeConditionNotMet", 412, "The access tier change time condition specified was not met."},
	AppendPositionConditionNotMet:         {"AppendPositionConditionNotMet", 412, "The append position condition specified was not met."},
	BlobAlreadyExists:                     {"BlobAlreadyExists", 409, "The specified blob already exists."},
	BlobArchived:                          {"BlobArchived", 409, "This operation is not permitted on an archived blob."},
	BlobIsSealed:                          {"BlobIsSealed", 409, "The specified blob is sealed, and its contents can't be modified unless the blob is re-created after a delete."},
	BothCrc64AndMd5HeaderPresent:          {"BothCrc64AndMd5HeaderPresent", 400, "Both the Content-MD5 and x-ms-content-crc64 headers are present."},
	Crc64Mismatch:                         {"Crc64Mismatch", 400, "The CRC64 value specified in the request did not match with the CRC64 value calculated by the server."},
	BlobNotFound:                          {"BlobNotFound", 404, "The specified blob does not exist."},
	BlobOperationNotSupported:             {"BlobOperationNotSupported", 409, "The operation is not supported in this scenario."},
	BlobOverwritten:                       {"BlobOverwritten", 409, "The blob has been recreated since the previous snapshot was taken."},
	BlobTierInadequateForContentLength:    {"BlobTierInadequateForContentLength", 409, "The specified blob tier size limit cannot be less than content length."},
	BlockCountExceedsLimit:                {"BlockCountExceedsLimit", 409, "The committed block count cannot exceed the maximum limit of 50,000 blocks."},
	BlockListTooLong:                      {"BlockListTooLong", 400, "The block list may not contain more than 50,000 blocks."},
	CannotVerifyCopySource:                {"CannotVerifyCopySource", 500, "Could not verify the copy source within the specified time."},
	ContainerAlreadyExists:                {"ContainerAlreadyExists", 409, "The specified container already exists."},
	ContainerBeingDeleted:                 {"ContainerBeingDeleted", 409, "The specified container is being deleted."},
	ContainerNotFound:                     {"ContainerNotFound", 404, "The specified container does not exist."},
	CopyAcrossAccountsNotSupported:        {"CopyAcrossAccountsNotSupported", 400, "The copy source account and destination account must be the same."},
	CopyIdMismatch:                        {"CopyIdMismatch", 409, "The specified copy ID did not match the copy ID for the pending copy operation."},
	InfiniteLeaseDurationRequired:         {"InfiniteLeaseDurationRequired", 412, "The lease ID matched, but the specified lease must be an infinite-duration lease."},
	InvalidBlobOrBlock:                    {"InvalidBlobOrBlock", 400, "The specified blob or block content is invalid."},
	InvalidBlobTier:                       {"InvalidBlobTier", 400, "The specified blob tier is invalid."},
	InvalidBlobType:                       {"InvalidBlobType", 409, "The blob type is invalid for this operation."},
	InvalidBlockId:                        {"InvalidBlockId", 400, "The specified block ID is invalid. The block ID must be Base64-encoded."},
	InvalidBlockList:                      {"InvalidBlockList", 400, "The specified block list is invalid."},
	InvalidOperation:                      {"InvalidOperation", 400, "Invalid operation against a blob snapshot."},
	InvalidPageRange:                      {"InvalidPageRange", 416, "The page range specified is invalid."},
	InvalidSourceBlobType:                 {"InvalidSourceBlobType", 409, "The copy source blob type is invalid for this operation."},
	InvalidSourceBlobUrl:                  {"InvalidSourceBlobUrl", 409, "The source URL for incremental copy request must be valid Azure Storage blob URL."},
	InvalidVersionForPageBlobOperation:    {"InvalidVersionForPageBlobOperation", 400, "All operations on page blobs require at least version 2009-09-19."},
	LeaseAlreadyBroken:                    {"LeaseAlreadyBroken", 409, "The lease has already been broken and cannot be broken again."},
	LeaseAlreadyPresent:                   {"LeaseAlreadyPresent", 409, "There is already a lease present."},
	LeaseIdMismatchWithBlobOperation:      {"LeaseIdMismatchWithBlobOperation", 412, "The lease ID specified did not match the lease ID for the blob."},
	LeaseIdMismatchWithContainerOperation: {"LeaseIdMismatchWithContainerOperation", 412, "The lease ID specified did not match the lease ID for the container."},
	LeaseIdMismatchWithLeaseOperation:     {"LeaseIdMismatchWithLeaseOperation", 409, "The lease ID specified did not match the lease ID for the blob/container."},
	LeaseIdMissing:                        {"LeaseIdMissing", 412, "There is currently a lease on the blob/container and no lease ID was specified in the request."},
	LeaseIsBreakingAndCannotBeAcquired:    {"LeaseIsBreakingAndCannotBeAcquired", 409, "The lease ID matched, but the lease is currently in breaking state and cannot be acquired until it is broken."},
	LeaseIsBreakingAndCannotBeChanged:     {"LeaseIsBreakingAndCannotBeChanged", 409, "The lease ID matched, but the lease is currently in breaking state and cannot be changed."},
	LeaseIsBrokenAndCannotBeRenewed:       {"LeaseIsBrokenAndCannotBeRenewed", 409, "The lease ID matched, but the lease has been broken explicitly and cannot be renewed."},
	LeaseLost:                             {"LeaseLost", 412, "A lease ID was specified, but the lease for the blob/container has expired."},
	LeaseNotPresentWithBlobOperation:      {"LeaseNotPresentWithBlobOperation", 412, "There is currently no lease on the blob."},
	LeaseNotPresentWithContainerOperation: {"LeaseNotPresentWithContainerOperation", 412, "There is currently no lease on the container."},
	LeaseNotPresentWithLeaseOperation:     {"LeaseNotPresentWithLeaseOperation", 409, "There is currently no lease on the blob/container."},
	MaxBlobSizeConditionNotMet:            {"MaxBlobSizeConditionNotMet", 412, "The max blob size condition specified was not met."},
	NoPendingCopyOperation:                {"NoPendingCopyOperation", 409, "There is currently no pending copy operation."},
	PendingCopyOperation:                  {"PendingCopyOperation", 409, "There is currently a pending copy operation."},
	PreviousSnapshotCannotBeNewer:         {"PreviousSnapshotCannotBeNewer", 400, "The prevsnapshot query parameter value cannot be newer than snapshot query parameter value."},
	PreviousSnapshotNotFound:              {"PreviousSnapshotNotFound", 409, "The previous snapshot is not found."},
	SequenceNumberConditionNotMet:         {"SequenceNumberConditionNotMet", 412, "The sequence number condition specified was not met."},
	SequenceNumberIncrementTooLarge:       {"SequenceNumberIncrementTooLarge", 409, "The sequence number increment cannot be performed because it would result in overflow of the sequence number."},
	SnapshotsPresent:                      {"SnapshotsPresent", 409, "This operation is not permitted because the blob has snapshots."},
	SourceConditionNotMet:                 {"SourceConditionNotMet", 412, "The source condition specified using HTTP conditional header(s) is not met."},
	TargetConditionNotMet:                 {"TargetConditionNotMet", 412, "The target condition specified using HTTP conditional header(s) is not met."},
	UnauthorizedBlobOverwrite:             {"UnauthorizedBlobOverwrite", 403, "This request is not authorized to perform blob overwrites."},
	FeatureVersionMismatch:                {"FeatureVersionMismatch", 409, "Stored access policy contains a permission that is not supported by this version."},
	InvalidBlobTagsFilter:                 {"InvalidBlobTagsFilter", 400, "The specified blob tags filter is invalid."},
	UnsatisfiableCondition:                {"UnsatisfiableCondition", 400, "The request includes an unsatisfiable condition for this operation."},
	InvalidTag:                            {"InvalidTag", 400, "The tags specified are invalid. It contains characters that are not permitted."},

	// Blob: version-level immutability.
	BlobImmutableDueToLegalHold:                    {"BlobImmutableDueToLegalHold", 409, "This operation is not permitted as the blob is immutable due to one or more legal holds."},
	BlobImmutableDueToPolicy:                       {"BlobImmutableDueToPolicy", 409, "This operation is not permitted as the blob is immutable due to a policy."},
	ContainerImmutableStorageWithVersioningEnabled: {"ContainerImmutableStorageWithVersioningEnabled", 409, "The requested operation is not allowed as the container has immutable storage with versioning enabled."},

	// Queue.
	MessageNotFound:    {"MessageNotFound", 404, "The specified message does not exist."},
	MessageTooLarge:    {"MessageTooLarge", 400, "The message exceeds the maximum allowed size."},
	PopReceiptMismatch: {"PopReceiptMismatch", 400, "The specified pop receipt did not match the pop receipt for a dequeued message."},
	QueueAlreadyExists: {"QueueAlreadyExists", 409, "The specified queue already exists."},
	QueueBeingDeleted:  {"QueueBeingDeleted", 409, "The specified queue is being deleted."},
	QueueDisabled:      {"QueueDisabled", 409, "The specified queue has been disabled by the administrator."},
	QueueNotEmpty:      {"QueueNotEmpty", 409, "The specified queue is not empty."},
	QueueNotFound:      {"QueueNotFound", 404, "The specified queue does not exist."},
	InvalidMarker:      {"InvalidMarker", 400, "The specified marker is invalid."},

	// Table.
	AtomFormatNotSupported:                  {"AtomFormatNotSupported", 415, "Atom format is not supported."},
	CommandsInBatchActOnDifferentPartitions: {"CommandsInBatchActOnDifferentPartitions", 400, "All commands in a batch must operate on same entity group."},
	DuplicatePropertiesSpecified:            {"DuplicatePropertiesSpecified", 400, "A property is specified more than one time."},
	EntityAlreadyExists:                     {"EntityAlreadyExists", 409, "The specified entity already exists."},
	EntityTooLarge:                          {"EntityTooLarge", 400, "The entity is larger than the maximum size permitted."},
	HostInformationNotPresent:               {"HostInformationNotPresent", 400, "The required host information is not present in the request."},
	InvalidDuplicateRow:                     {"InvalidDuplicateRow", 400, "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."},
	InvalidValueType:                        {"InvalidValueType", 400, "The value specified is invalid."},
	JsonFormatNotSupported:                  {"JsonFormatNotSupported", 415, "JSON format is not supported."},
	KeyValueTooLarge:                        {"KeyValueTooLarge", 400, "The key value is larger than the maximum size permitted."},
	MediaTypeNotSupported:                   {"MediaTypeNotSupported", 415, "None of the provided media types are supported."},
	MethodNotAllowed:                        {"MethodNotAllowed", 405, "The requested method is not allowed on the specified resource."},
	PropertiesNeedValue:                     {"PropertiesNeedValue", 400, "Values have not been specified for all properties in the entity."},
	PropertyNameInvalid:                     {"PropertyNameInvalid", 400, "The property name is invalid."},
	PropertyNameTooLong:                     {"PropertyNameTooLong", 400, "The property name exceeds the maximum allowed length."},
	PropertyValueTooLarge:                   {"PropertyValueTooLarge", 400, "The property value is larger than the maximum size permitted."},
	TableAlreadyExists:                      {"TableAlreadyExists", 409, "The table specified already exists."},
	TableBeingDeleted:                       {"TableBeingDeleted", 409, "The specified table is being deleted."},
	TableNotFound:                           {"TableNotFound", 404, "The table specified does not exist."},
	TooManyProperties:                       {"TooManyProperties", 400, "The entity contains more properties than allowed."},
	UpdateConditionNotSatisfied:             {"UpdateConditionNotSatisfied", 412, "The update condition specified in the request was not satisfied."},
	XMethodIncorrectCount:                   {"XMethodIncorrectCount", 400, "More than one X-HTTP-Method is specified."},
	XMethodIncorrectValue:                   {"XMethodIncorrectValue", 400, "The specified X-HTTP-Method is invalid."},
	XMethodNotUsingPost:                     {"XMethodNotUsingPost", 400, "The request uses X-HTTP-Method with an HTTP verb other than POST."},
	NotSupported:                            {"NotSupported", 400, "The operation is not supported."},

	// File.
	CannotDeleteFileOrDirectory:        {"CannotDeleteFileOrDirectory", 409, "The file or directory could not be deleted because it is in use by an SMB client."},
	ClientCacheFlushDelay:              {"ClientCacheFlushDelay", 409, "The specified resource state could not be flushed from an SMB client in the specified time."},
	DeletePending:                      {"DeletePending", 409, "The specified resource is marked for deletion by an SMB client."},
	DirectoryNotEmpty:                  {"DirectoryNotEmpty", 409, "The specified directory is not empty."},
	FileLockConflict:                   {"FileLockConflict", 409, "A portion of the specified file is locked by an SMB client."},
	InvalidFileOrDirectoryPathName:     {"InvalidFileOrDirectoryPathName", 400, "File or directory path is too long or has too many subdirectories."},
	ParentNotFound:                     {"ParentNotFound", 404, "The specified parent path does not exist."},
	ReadOnlyAttribute:                  {"ReadOnlyAttribute", 409, "The specified resource is read-only and cannot be modified at this time."},
	ShareAlreadyExists:                 {"ShareAlreadyExists", 409, "The specified share already exists."},
	ShareBeingDeleted:                  {"ShareBeingDeleted", 409, "The specified share is being deleted. Try operation later."},
	ShareDisabled:                      {"ShareDisabled", 409, "The specified share is disabled by the administrator."},
	ShareNotFound:                      {"ShareNotFound", 404, "The specified share does not exist."},
	SharingViolation:                   {"SharingViolation", 409, "The specified resource is in use by an SMB client."},
	ShareSnapshotInProgress:            {"ShareSnapshotInProgress", 409, "Another Share Snapshot operation is in progress."},
	ShareHasSnapshots:                  {"ShareHasSnapshots", 409, "The share has snapshots and the operation requires no snapshots."},
	ContainerQuotaDowngradeNotAllowed:  {"ContainerQuotaDowngradeNotAllowed", 409, "Downgrade of quota is not allowed."},
	SMBDeletePending:                   {"SMBDeletePending", 409, "The specified resource is marked for deletion by an SMB client."},
	ResourceNotFoundFile:               {"ResourceNotFoundFile", 404, "The specified resource does not exist."},
	DeleteShareWhenSnapshotLeased:      {"DeleteShareWhenSnapshotLeased", 409, "Unable to delete share because one or more share snapshots have active leases."},
	FileInvalidPermission:              {"FileInvalidPermission", 400, "The specified file permission is not valid."},
	FileInvalidPermissionKey:           {"FileInvalidPermissionKey", 400, "The specified file permission key does not exist in the share."},
	HandleLimitExceeded:                {"HandleLimitExceeded", 400, "The total number of open handles for the file has exceeded the limit."},
	LeaseIdMismatchWithFileOperation:   {"LeaseIdMismatchWithFileOperation", 412, "The lease ID specified did not match the lease ID for the file."},
	LeaseNotPresentWithFileOperation:   {"LeaseNotPresentWithFileOperation", 412, "There is currently no lease on the file."},
	LeaseIdMismatchWithShareOperation:  {"LeaseIdMismatchWithShareOperation", 412, "The lease ID specified did not match the lease ID for the share."},
	LeaseNotPresentWithShareOperation:  {"LeaseNotPresentWithShareOperation", 412, "There is currently no lease on the share."},
	ShareSizeLimitReached:              {"ShareSizeLimitReached", 413, "The specified share is full."},
	ShareSnapshotCountExceeded:         {"ShareSnapshotCountExceeded", 409, "The total number of snapshots for the share is over the limit."},
	ShareSnapshotNotFound:              {"ShareSnapshotNotFound", 404, "The specified share snapshot does not exist."},
	ShareSnapshotOperationNotSupported: {"ShareSnapshotOperationNotSupported", 400, "The operation is not supported on a share snapshot."},

	// Data Lake Storage.
	FilesystemNotFound:                     {"FilesystemNotFound", 404, "The specified filesystem does not exist."},
	FilesystemAlreadyExists:                {"FilesystemAlreadyExists", 409, "The specified filesystem already exists."},
	PathNotFound:                           {"PathNotFound", 404, "The specified path does not exist."},
	PathAlreadyExists:                      {"PathAlreadyExists", 409, "The specified path already exists."},
	PathConflict:                           {"PathConflict", 409, "The specified path, or an element of the path, exists and its resource type is invalid for this operation."},
	SourcePathNotFound:                     {"SourcePathNotFound", 404, "The source path for a rename operation does not exist."},
	RenameDestinationParentPathNotFound:    {"RenameDestinationParentPathNotFound", 404, "The parent directory of the destination path does not exist."},
	InvalidSourceOrDestinationResourceType: {"InvalidSourceOrDestinationResourceType", 409, "The source and destination resource type must be identical."},
	InvalidRenameSourcePath:                {"InvalidRenameSourcePath", 400, "The source directory cannot be the same as the destination directory, nor can the destination be a subdirectory of the source directory."},
	InvalidDestinationPath:                 {"InvalidDestinationPath", 400, "The specified path, or an element of the path, exists and its resource type is invalid for this operation."},
	InvalidFlushPosition:                   {"InvalidFlushPosition", 400, "The uploaded data is not contiguous or the position query parameter value is not equal to the length of the file after appending the uploaded data."},
	InvalidFlushOperation:                  {"InvalidFlushOperation", 400, "The resource was created or modified by the Azure Blob Service API and cannot be written to by the Azure Data Lake Storage Service API."},
	InvalidAppendOperation:                 {"InvalidAppendOperation", 400, "The resource was created or modified by the Azure Blob Service API and cannot be appended to by the Azure Data Lake Storage Service API."},
	InvalidPropertyName:                    {"InvalidPropertyName", 400, "The property name contains invalid characters."},
	InvalidPermission:                      {"InvalidPermission", 400, "The permission value is invalid."},
	InvalidAccessControlList:               {"InvalidAccessControlList", 400, "The access control list value is invalid."},
	InvalidResourceType:                    {"InvalidResourceType", 400, "The resource type value is invalid."},
	LeaseNameMismatch:                      {"LeaseNameMismatch", 400, "The lease name specified did not match the existing lease name."},
	HierarchicalNamespaceNotEnabled:        {"HierarchicalNamespaceNotEnabled", 409, "This endpoint does not support BlobStorageEvents or SoftDelete. Please disable these account features if you would like to use this endpoint."},

	BlobBeingRehydrated: {"BlobBeingRehydrated", 409, "This operation is not permitted because the blob is being rehydrated."},
	IncrementalCopyOfEarlierSnapshotNotAllowed: {"IncrementalCopyOfEarlierSnapshotNotAllowed", 409,
		"The specified snapshot is earlier than the last snapshot copied into the incremental copy blob."},

	// Customer-provided keys.
	BlobDoesNotUseCustomerSpecifiedEncryption: {"BlobDoesNotUseCustomerSpecifiedEncryption", 409, "The blob is not encrypted with customer specified encryption."},
	BlobUsesCustomerSpecifiedEncryption:       {"BlobUsesCustomerSpecifiedEncryption", 409, "The blob is encrypted with customer specified encryption, but it was not provided in the request."},
}

// String is the code as it appears in x-ms-error-code and error bodies.
func (c Code) String() string {
	if int(c) < len(catalog) && catalog[c].name != "" {
		return catalog[c].name
	}
	return "InternalError"
}

// Status is the HTTP status the code answers with by default.
func (c Code) Status() int {
	if int(c) < len(catalog) && catalog[c].status != 0 {
		return catalog[c].status
	}
	return 500
}

// Message is Azure's default message for the code.
func (c Code) Message() string {
	if int(c) < len(catalog) {
		return catalog[c].message
	}
	return ""
}

// Lookup returns the code named name (as in x-ms-error-code).
func Lookup(name string) (Code, bool) {
	for c := range catalog {
		if catalog[c].name == name && name != "" {
			return Code(c), true
		}
	}
	return 0, false
}
