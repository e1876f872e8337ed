"""The resources of a hub, each written once for both transports."""
