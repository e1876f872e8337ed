"""The memory app has no models: facts and entries have their own admins."""
