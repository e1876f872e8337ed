"""Entries have no background work yet; compaction (another issue) writes Archive entries."""
