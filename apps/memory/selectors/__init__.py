"""The composition's reads: one ranked memory_search over every corpus the audience sees."""

from apps.memory.selectors.memory_hits import MemoryHit, MemorySearch, memory_search

__all__ = ["MemoryHit", "MemorySearch", "memory_search"]
