"""The HTTP API's endpoints: one module per first segment of the URL, each with its router
(docs/architecture.md has the table; registry, request, scopes and audience serve no URL). A
layer above the apps: a resource such as /sessions spans several of them (conversations,
lifecycle, memory). Endpoints parse, call a service or selector, return."""
