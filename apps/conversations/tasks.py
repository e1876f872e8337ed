"""Conversations have no background work of their own: messages are embedded by the search
layer's pipeline (apps/search/embedding.py), as every corpus is."""
