"""The error of the model preparation steps (a snapshot, a conversion, a quantization): one line, which step and where
to look; kept apart so that converting does not import the hub's client."""


class PreparationError(RuntimeError):
    """A preparation step failed; the message says which and where to look."""
