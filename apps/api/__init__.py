"""The HTTP API's endpoints, one router per URL resource (docs/architecture.md maps each URL
prefix to its module). A layer above the apps: a resource such as /sessions spans several of
them (conversations, lifecycle, memory). Endpoints parse, call a service or selector, return."""
