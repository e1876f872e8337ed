"""Move a store into PostgreSQL: every table copied in chunks, resumable, verified.

`target_database(url)` creates and migrates the target and opens it as a connection alias;
`store_copy(source=..., target=...)` copies and verifies every table (copy.py here).
Nothing here knows a domain app: the tables come from the app registry.
"""
