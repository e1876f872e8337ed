"""Static files storage whose pages still render when collectstatic has not run."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ForgivingManifestStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """Hashed, compressed names from the manifest; a name the manifest lacks (no
    collectstatic yet, or a new file) is served unhashed instead of raising ValueError,
    which turned every page using {% static %}, 404 included, into a 500."""

    manifest_strict = False

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:
            # Not in the manifest and not on disk under STATIC_ROOT either.
            return name
