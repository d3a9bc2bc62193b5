"""HTTP plumbing both Flask apps share: the error shape, the OpenAPI contract and its parser, JSON,
files written for callers, the activity log's middleware, and untrusted JSON."""
